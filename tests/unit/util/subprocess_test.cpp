// util/subprocess: the primitives (spawn with a given standard input, process group and program
// lookup; wait with a deadline; ending a group) and run_child_process on top of them (exit codes,
// signals, timeout, environment, launch errors).

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/subprocess.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;

ChildOutcome shell(const std::string& script,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                   std::vector<std::pair<std::string, std::string>> environment = {}) {
  ChildOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.timeout = timeout;
  options.grace = std::chrono::milliseconds(500);
  options.environment = std::move(environment);
  return run_child_process(options);
}

TEST(ChildProcess, ReportsTheExitStatus) {
  const auto outcome = shell("exit 3");
  ASSERT_TRUE(outcome.started);
  ASSERT_TRUE(outcome.exit_code.has_value());
  EXPECT_EQ(*outcome.exit_code, 3);
  EXPECT_FALSE(outcome.signal.has_value());
  EXPECT_EQ(describe_outcome(outcome), "exit status 3");
}

TEST(ChildProcess, ReportsTheSignal) {
  const auto outcome = shell("kill -ABRT $$");
  ASSERT_TRUE(outcome.signal.has_value());
  EXPECT_EQ(*outcome.signal, SIGABRT);
  EXPECT_EQ(describe_outcome(outcome), "signal 6 (SIGABRT)");
}

TEST(ChildProcess, PassesTheEnvironmentAndReplacesExistingValues) {
  ::setenv("FIB_TEST_REPLACED", "old", 1);
  const TempDir dir;
  const auto out = dir.path() / "env.txt";
  const auto outcome =
      shell("printf '%s %s' \"$FIB_TEST_NEW\" \"$FIB_TEST_REPLACED\" > '" + out.string() + "'",
            std::nullopt, {{"FIB_TEST_NEW", "a b"}, {"FIB_TEST_REPLACED", "new"}});
  ::unsetenv("FIB_TEST_REPLACED");
  ASSERT_EQ(outcome.exit_code.value_or(-1), 0);
  EXPECT_EQ(read_file(out), "a b new");
}

TEST(ChildProcess, KillsTheWholeGroupAtTheTimeout) {
  const TempDir dir;
  const auto marker = dir.path() / "grandchild-survived";
  // The grandchild would write the marker after 2 s unless the group is killed at the timeout.
  const auto outcome = shell("(sleep 2; touch '" + marker.string() + "') & sleep 30",
                             std::chrono::milliseconds(300));
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(describe_outcome(outcome), "killed at the 0.3 s timeout");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(ChildProcess, AProgramThatDoesNotExistIsALaunchError) {
  ChildOptions options;
  options.argv = {"fib-no-such-program-anywhere"};
  const auto outcome = run_child_process(options);
  EXPECT_FALSE(outcome.started);
  ASSERT_TRUE(outcome.launch_error.has_value());
  EXPECT_EQ(outcome.launch_error->code, codes::k_child_launch_failed);
  EXPECT_NE(outcome.launch_error->message.find("No such file"), std::string::npos);
}

TEST(ChildProcess, StandardInputIsTheNullDevice) {
  const auto outcome = shell("read line; exit $?");
  EXPECT_EQ(outcome.exit_code.value_or(-1), 1); // EOF at once, no hang, no SIGTTIN
}

// A pipe whose read end becomes the child's standard input.
TEST(Subprocess, TheChildReadsTheGivenDescriptor) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0); // the write end must not leak into the child
  const TempDir dir;
  const auto out = dir.path() / "read.txt";
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "cat > '" + out.string() + "'"};
  options.input_descriptor = pipe_fds[0];
  const Spawned child = spawn_process(options);
  ::close(pipe_fds[0]);
  ASSERT_GT(child.pid, 0);
  ASSERT_FALSE(child.failure.has_value());
  ASSERT_EQ(::write(pipe_fds[1], "hello\n", 6), 6);
  ::close(pipe_fds[1]);
  const WaitResult waited = wait_for_exit(child.pid, std::nullopt);
  ASSERT_TRUE(waited.ended);
  ASSERT_TRUE(waited.status.has_value());
  EXPECT_EQ(describe_wait_status(*waited.status), "exit status 0");
  EXPECT_EQ(read_file(out), "hello\n");
}

TEST(Subprocess, TheChildLeadsItsOwnGroupOrStaysInFibs) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "exec sleep 5"}; // one process: the group is its leader
  const Spawned own = spawn_process(options);
  ASSERT_GT(own.pid, 0);
  EXPECT_EQ(::getpgid(own.pid), own.pid);
  options.group = ProcessGroup::inherited;
  const Spawned inherited = spawn_process(options);
  ASSERT_GT(inherited.pid, 0);
  EXPECT_EQ(::getpgid(inherited.pid), ::getpgrp());
  kill_process(inherited.pid);
  end_process_group(own.pid, std::chrono::milliseconds(500));
  EXPECT_TRUE(wait_for_exit(own.pid, std::nullopt).ended); // reaped here or by end_process_group
  EXPECT_FALSE(process_group_alive(own.pid));
}

TEST(Subprocess, AnExactPathIsNotLookedUpInPath) {
  SpawnOptions options;
  options.argv = {"sh", "-c", "exit 0"};
  options.lookup = ProgramLookup::exact_path;
  const Spawned exact = spawn_process(options);
  EXPECT_EQ(exact.pid, -1);
  ASSERT_TRUE(exact.failure.has_value());
  EXPECT_EQ(exact.failure->step, SpawnStep::exec);
  EXPECT_EQ(describe_spawn_failure(*exact.failure, "sh"),
            "cannot run sh: No such file or directory");
  options.lookup = ProgramLookup::search_path;
  const Spawned searched = spawn_process(options);
  ASSERT_GT(searched.pid, 0);
  EXPECT_EQ(wait_for_exit(searched.pid, std::nullopt).status.value_or(-1), 0);
}

TEST(Subprocess, WaitingStopsAtTheDeadline) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "sleep 30"};
  const Spawned child = spawn_process(options);
  ASSERT_GT(child.pid, 0);
  const auto before = std::chrono::steady_clock::now();
  const WaitResult waited = wait_for_exit(child.pid, before + std::chrono::milliseconds(200));
  EXPECT_FALSE(waited.ended);
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(200));
  kill_process(child.pid);
  EXPECT_EQ(::waitpid(child.pid, nullptr, WNOHANG), -1); // reaped by kill_process
}

TEST(Subprocess, AWaitStatusSaysHowItEnded) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  const Spawned child = spawn_process(options);
  ASSERT_GT(child.pid, 0);
  const WaitResult waited = wait_for_exit(child.pid, std::nullopt);
  ASSERT_TRUE(waited.status.has_value());
  EXPECT_EQ(describe_wait_status(*waited.status), "signal 11 (Segmentation fault)");
}

// A descriptor handed over with its tag arrives usable and close-on-exec; one under another tag,
// or a byte without a descriptor, is refused (and the passed descriptor is not leaked open).
TEST(PassedDescriptor, ArrivesWithItsTagAndNothingElseIsTaken) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_TRUE(send_descriptor(pair[0], pipe_fds[1], 'S'));
  const int got = receive_descriptor(pair[1], 'S');
  ASSERT_GE(got, 0);
  EXPECT_NE(::fcntl(got, F_GETFD) & FD_CLOEXEC, 0);
  ASSERT_EQ(::write(got, "x", 1), 1);
  char byte = 0;
  ASSERT_EQ(::read(pipe_fds[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'x');
  ::close(got);

  ASSERT_TRUE(send_descriptor(pair[0], pipe_fds[1], 'T'));
  EXPECT_EQ(receive_descriptor(pair[1], 'S'), -1);
  ASSERT_EQ(::write(pair[0], "S", 1), 1); // the tag alone, no descriptor
  EXPECT_EQ(receive_descriptor(pair[1], 'S'), -1);
  EXPECT_EQ(receive_descriptor(pair[1], 'S'), -1); // nothing left to read: no wait
  for (int fd : {pair[0], pair[1], pipe_fds[0], pipe_fds[1]}) {
    ::close(fd);
  }
}

} // namespace
} // namespace fib
