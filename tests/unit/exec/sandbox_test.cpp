// The sandbox's pieces (exec/sandbox.hpp): the bwrap command line (what is bound, cleared and
// unshared), the probe's findings, the scratch directory and the pids cgroup. What untrusted code
// can do inside is tested with real hostile code in hostile_code_test.cpp and cli/run_hostile.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/sandbox.hpp>
#include <fib/util/subprocess.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;

bool has_sequence(const std::vector<std::string>& argv, std::vector<std::string> sequence) {
  return std::search(argv.begin(), argv.end(), sequence.begin(), sequence.end()) != argv.end();
}

bool mentions(const std::vector<std::string>& argv, std::string_view text) {
  return std::any_of(argv.begin(), argv.end(),
                     [&](const std::string& a) { return a.find(text) != std::string::npos; });
}

TEST(SandboxCommand, UnsharesEverythingDropsCapabilitiesAndClearsTheEnvironment) {
  SandboxLayout layout;
  layout.channel_directory = "/var/tmp/fib-scratch-x";
  layout.scratch_bytes = 1 << 20;
  const auto argv = sandbox_command("/usr/bin/bwrap", layout, {}, {"/opt/fib-worker", "--a"});
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  for (const char* flag : {"--die-with-parent", "--new-session", "--unshare-all", "--unshare-user",
                           "--disable-userns", "--clearenv"}) {
    EXPECT_TRUE(has_sequence(argv, {flag})) << flag;
  }
  EXPECT_TRUE(has_sequence(argv, {"--cap-drop", "ALL"}));
  // /tmp is a tmpfs of the scratch's size, HOME and TMPDIR point there; fib's channel directory
  // is read-only.
  EXPECT_TRUE(has_sequence(argv, {"--size", "1048576", "--tmpfs", "/tmp"}));
  EXPECT_TRUE(has_sequence(argv, {"--ro-bind", "/var/tmp/fib-scratch-x", "/run/fib"}));
  EXPECT_FALSE(has_sequence(argv, {"--bind", "/var/tmp/fib-scratch-x", "/tmp"}));
  EXPECT_TRUE(has_sequence(argv, {"--setenv", "HOME", "/tmp"}));
  EXPECT_TRUE(has_sequence(argv, {"--setenv", "TMPDIR", "/tmp"}));
  EXPECT_TRUE(has_sequence(argv, {"--proc", "/proc", "--dev", "/dev"}));
  EXPECT_TRUE(
      has_sequence(argv, {"--size", std::to_string(k_sandbox_shm_bytes), "--tmpfs", "/dev/shm"}));
  // The root and /dev bwrap builds are made read-only once built: only /tmp and /dev/shm, of
  // bounded sizes, are writable.
  EXPECT_TRUE(has_sequence(argv, {"--remount-ro", "/dev", "--remount-ro", "/", "--chdir"}));
  // The program comes last, after "--".
  EXPECT_TRUE(has_sequence(argv, {"--", "/opt/fib-worker", "--a"}));
  EXPECT_EQ(argv.back(), "--a");
}

TEST(SandboxCommand, BindsOnlyTheSystemAndWhatTheCallerNames) {
  SandboxLayout layout;
  layout.channel_directory = "/var/tmp/s";
  layout.read_only = {"/data/ds"};
  layout.writable = {"/home/u/.cache/fib/solutions/abc"};
  layout.programs = {"/home/u/build/fib-worker", "/usr/lib/python3"};
  const auto argv = sandbox_command("/usr/bin/bwrap", layout, {}, {"/home/u/build/fib-worker"});
  EXPECT_TRUE(has_sequence(argv, {"--ro-bind", "/usr", "/usr"}));
  EXPECT_TRUE(has_sequence(argv, {"--ro-bind", "/data/ds", "/data/ds"}));
  EXPECT_TRUE(has_sequence(
      argv, {"--bind", "/home/u/.cache/fib/solutions/abc", "/home/u/.cache/fib/solutions/abc"}));
  EXPECT_TRUE(
      has_sequence(argv, {"--ro-bind", "/home/u/build/fib-worker", "/home/u/build/fib-worker"}));
  // A program already under /usr is not bound again; no home, root, shadow or /var.
  EXPECT_FALSE(has_sequence(argv, {"--ro-bind", "/usr/lib/python3", "/usr/lib/python3"}));
  for (const char* absent : {"/etc/shadow", "/root", "/var/lib", "/srv"}) {
    EXPECT_FALSE(mentions(argv, absent)) << absent;
  }
  EXPECT_FALSE(has_sequence(argv, {"--ro-bind", "/home", "/home"}));
  EXPECT_FALSE(has_sequence(argv, {"--ro-bind", "/etc", "/etc"}));
  EXPECT_FALSE(has_sequence(argv, {"--dev-bind-try", "/sys", "/sys"}));
}

TEST(SandboxCommand, TheGpuAddsItsDevicesAndSysOnlyWhenAsked) {
  SandboxLayout layout;
  layout.device = DeviceAccess::gpu;
  const auto argv = sandbox_command("/usr/bin/bwrap", layout, {}, {"/w"});
  EXPECT_TRUE(has_sequence(argv, {"--ro-bind-try", "/sys", "/sys"}));
  // Without a scratch directory /tmp is a tmpfs of its own.
  EXPECT_TRUE(has_sequence(argv, {"--tmpfs", "/tmp"}));
}

TEST(SandboxCommand, OnlyAllowListedVariablesCrossAndSecretsDoNot) {
  ::setenv("FIB_TEST_SECRET_TOKEN", "s3cret", 1);
  ::setenv("OMP_NUM_THREADS", "3", 1);
  SandboxLayout layout;
  const auto argv = sandbox_command("/usr/bin/bwrap", layout, {{"EXTRA", "1"}}, {"/w"});
  EXPECT_FALSE(mentions(argv, "s3cret"));
  EXPECT_FALSE(mentions(argv, "FIB_TEST_SECRET_TOKEN"));
  EXPECT_TRUE(has_sequence(argv, {"--setenv", "OMP_NUM_THREADS", "3"}));
  EXPECT_TRUE(has_sequence(argv, {"--setenv", "EXTRA", "1"}));
  const auto& allowed = sandbox_environment_allow_list();
  EXPECT_EQ(std::count(allowed.begin(), allowed.end(), "FIB_TEST_SECRET_TOKEN"), 0);
  ::unsetenv("FIB_TEST_SECRET_TOKEN");
}

TEST(SandboxProbe, AMachineWithoutBwrapSaysSo) {
  TempDir empty;
  const SandboxSupport support = probe_sandbox(empty.path().string());
  EXPECT_FALSE(support.usable());
  EXPECT_TRUE(support.bwrap.empty());
  ASSERT_FALSE(support.missing.empty());
  EXPECT_NE(support.missing.front().find("bubblewrap (bwrap) is not installed"), std::string::npos);
}

TEST(SandboxProbe, ABwrapThatCannotRunIsNamedWithItsError) {
  TempDir dir;
  const auto fake = dir.write(
      "bwrap", "#!/bin/sh\necho 'No permissions to creating new namespace' >&2\nexit 1\n");
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const SandboxSupport support = probe_sandbox(dir.path().string());
  EXPECT_FALSE(support.usable());
  EXPECT_EQ(support.bwrap, fake);
  ASSERT_FALSE(support.missing.empty());
  EXPECT_NE(support.missing.front().find("cannot create the sandbox's namespaces"),
            std::string::npos)
      << support.missing.front();
  EXPECT_NE(support.missing.front().find("No permissions to creating new namespace"),
            std::string::npos);
}

TEST(SandboxProbe, ThisMachineGivesTheSandbox) {
  // The set-up script installs bubblewrap; a machine without it must say why, never run open.
  const SandboxSupport& support = sandbox_support();
  if (!support.usable()) {
    GTEST_SKIP() << "no sandbox here: " << support.missing.front();
  }
  EXPECT_FALSE(support.bwrap.empty());
  EXPECT_NE(support.process_limit, ProcessLimitKind::none);
}

TEST(UnsafeSandboxWarning, IsTheDisabledWarning) {
  const Diagnostic d = unsafe_sandbox_warning();
  EXPECT_EQ(d.code, codes::k_sandbox_disabled);
  EXPECT_EQ(d.severity, Severity::warning);
  EXPECT_NE(d.message.find("--unsafe-no-sandbox"), std::string::npos);
}

TEST(ScratchDirectory, IsPrivateAndRemovedWithEverythingInIt) {
  std::filesystem::path where;
  {
    auto scratch = ScratchDirectory::create();
    ASSERT_TRUE(scratch) << scratch.error().message;
    where = scratch->path();
    EXPECT_EQ(std::filesystem::status(where).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    std::filesystem::create_directories(where / "a" / "b");
    std::ofstream(where / "a" / "b" / "f") << "x";
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

// A SIGKILLed fib leaves its scratch directories behind (nothing of it runs to remove them); a
// later sweep removes those, and only those: never a live one (locked by its owner), nor anything
// with another name or of another kind.
TEST(ScratchDirectory, TheOnesOfDeadProcessesAreRemovedByTheSweep) {
  const TempDir dir;
  // The live one first: the first create() of a process sweeps its parent itself.
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.path().c_str(), 1);
  auto live = std::make_optional(ScratchDirectory::create());
  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(*live) << (*live).error().message;
  const std::filesystem::path live_path = (*live)->path();
  ASSERT_EQ(live_path.parent_path(), dir.path());
  const auto dead = dir.path() / "fib-scratch-dead01";
  std::filesystem::create_directories(dead / "job" / "closed");
  std::ofstream(dead / "job" / "inputs.safetensors") << "x";
  std::filesystem::permissions(dead / "job" / "closed", std::filesystem::perms::none);
  std::filesystem::create_directories(dir.path() / "fib-scratch-toolong1");
  std::ofstream(dir.path() / "fib-scratch-file01") << "x";
  std::filesystem::create_directory_symlink(dir.path() / "fib-scratch-toolong1",
                                            dir.path() / "fib-scratch-link01");
  std::filesystem::create_directories(dir.path() / "fib-sandbox-old001"); // an earlier fib's
  // Stamped an hour ahead: no clock is compared, the lock alone tells a live one from a dead one.
  const auto dead_later = dir.path() / "fib-scratch-dead02";
  std::filesystem::create_directories(dead_later);
  std::filesystem::last_write_time(dead_later, std::filesystem::file_time_type::clock::now() +
                                                   std::chrono::hours(1));
  EXPECT_EQ(remove_stale_scratch_directories(dir.path()), 2U);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(dead_later)));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(dead)));
  EXPECT_TRUE(std::filesystem::is_directory(live_path)) << "a live one is locked";
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "fib-scratch-toolong1"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "fib-scratch-file01"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "fib-scratch-link01"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "fib-sandbox-old001"));
  live.reset();
  EXPECT_FALSE(std::filesystem::exists(live_path));
}

// A sweep running beside creations never takes a directory that create() returned: one swept in
// the instant between mkdtemp and the lock is replaced by another before create() returns.
TEST(ScratchDirectory, CreationsSurviveSweepsRunningBesideThem) {
  const TempDir dir;
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.path().c_str(), 1);
  std::atomic<bool> done{false};
  std::thread sweeper([&] {
    while (!done.load()) {
      remove_stale_scratch_directories(dir.path());
    }
  });
  int lost = 0;
  for (int i = 0; i < 300; ++i) {
    auto scratch = ScratchDirectory::create();
    ASSERT_TRUE(scratch) << scratch.error().message;
    std::ofstream(scratch->path() / "marker") << "x";
    lost += std::filesystem::is_regular_file(scratch->path() / "marker") ? 0 : 1;
  }
  done = true;
  sweeper.join();
  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_EQ(lost, 0) << "directories swept away while their creator held them";
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(ProcessCgroup, CountsAndKillsWhatJoinedIt) {
  const SandboxSupport& support = sandbox_support();
  if (support.process_limit != ProcessLimitKind::cgroup) {
    GTEST_SKIP() << "no pids cgroup here (fib does not run as root, or none is writable)";
  }
  auto cgroup = ProcessCgroup::create(support, 8);
  ASSERT_TRUE(cgroup) << cgroup.error().message;
  int output[2];
  ASSERT_EQ(::pipe2(output, O_CLOEXEC), 0);
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; wait"};
  spawn.cgroup_procs_descriptor = cgroup->procs_descriptor();
  spawn.output_descriptor = output[1];
  const Spawned child = spawn_process(spawn);
  ::close(output[1]);
  ASSERT_GT(child.pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  cgroup->kill_all(); // the shell and its sleeps: nothing that joined survives
  const WaitResult waited =
      wait_for_exit(child.pid, std::chrono::steady_clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(waited.ended);
  std::string text;
  char chunk[4096];
  ssize_t n = 0;
  while ((n = ::read(output[0], chunk, sizeof chunk)) > 0) {
    text.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(output[0]);
  // Past pids.max = 8 the shell could not fork all twelve.
  EXPECT_NE(text.find("fork"), std::string::npos) << text;
}

} // namespace
} // namespace fib
