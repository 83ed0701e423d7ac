// Hostile references against the real, sandboxed fib-worker: each attack below must be contained
// (the host sees nothing of it) or detected (a diagnostic with its code), and fib, the test
// process here, must come out unharmed and on time. Hostile solutions under `fib run` are the CLI
// case run_hostile. Skipped when fib was built without torch or the machine gives no sandbox.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/sandbox.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/definition.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace fib {
namespace {

using testing::TempDir;
using Clock = std::chrono::steady_clock;

#ifdef FIB_WORKER_BINARY
constexpr const char* k_worker = FIB_WORKER_BINARY;
#else
constexpr const char* k_worker = "";
#endif

#define REQUIRE_SANDBOXED_WORKER()                                                                 \
  do {                                                                                             \
    if (std::string_view(k_worker).empty()) {                                                      \
      GTEST_SKIP() << "fib was built without torch (no fib-worker)";                               \
    }                                                                                              \
    if (!sandbox_support().usable()) {                                                             \
      GTEST_SKIP() << "no sandbox here: " << sandbox_support().missing.front();                    \
    }                                                                                              \
  } while (false)

ReferenceRunnerOptions options(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  ReferenceRunnerOptions out;
  out.worker = k_worker;
  out.job_timeout = timeout;
  return out;
}

// y = run(x) with x, y: [n, 4] float32.
Definition definition_running(const std::string& reference) {
  Json d = Json::parse(R"({
    "name": "hostile", "op_type": "test",
    "axes": {"n": {"type": "var"}, "h": {"type": "const", "value": 4}},
    "inputs": {"x": {"shape": ["n", "h"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n", "h"], "dtype": "float32"}}})");
  d["reference"] = reference;
  DiagnosticList sink;
  Definition out = parse_definition(testing::parse_or_die(d.dump()), sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  return out;
}

const Diagnostic* find(const ReferenceOutcome& outcome, std::string_view code) {
  const auto it = std::find_if(outcome.diagnostics.begin(), outcome.diagnostics.end(),
                               [&](const Diagnostic& d) { return d.code == code; });
  return it == outcome.diagnostics.end() ? nullptr : &*it;
}

std::string describe(const ReferenceOutcome& outcome) {
  std::string out;
  for (const auto& d : outcome.diagnostics) {
    out += d.code + ": " + d.message.substr(0, 2000) + "\n";
  }
  return out;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Host processes whose command line is `sleep MARKER`.
std::vector<std::string> sleeping(const std::string& marker) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (!std::all_of(pid.begin(), pid.end(), ::isdigit)) {
      continue;
    }
    std::ifstream file(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(file)), {});
    if (cmdline == std::string("sleep\0", 6) + marker + std::string(1, '\0')) {
      found.push_back(pid);
    }
  }
  return found;
}

constexpr const char* k_good = "def run(x):\n    return x\n";

TEST(HostileReference, SeesNothingOfTheHost) {
  REQUIRE_SANDBOXED_WORKER();
  TempDir dir;
  const auto secret = dir.write("secret.txt", "the secret\n");
  std::filesystem::permissions(secret, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
  ::setenv("FIB_TEST_SECRET", "s3cret", 1);
  const char* home = std::getenv("HOME");
  const std::string source =
      "import os, socket\n"
      "def attempt(what, action):\n"
      "    try:\n"
      "        return '%s: done %r' % (what, action())\n"
      "    except BaseException as error:\n"
      "        return '%s: refused %s' % (what, type(error).__name__)\n"
      "def run(x):\n"
      "    seen = [attempt('write', lambda: open('" +
      (dir.path() / "outside.txt").string() +
      "', 'w').write('x')),\n"
      "            attempt('secret', lambda: open('" +
      secret.string() +
      "').read()),\n"
      "            attempt('shadow', lambda: open('/etc/shadow').read()),\n"
      "            attempt('home', lambda: os.listdir('" +
      std::string(home ? home : "/root") +
      "')),\n"
      "            attempt('variable', lambda: os.environ['FIB_TEST_SECRET']),\n"
      "            attempt('signal fib', lambda: os.kill(" +
      std::to_string(::getpid()) +
      ", 9)),\n"
      "            'interfaces %s' % sorted(n for _, n in socket.if_nameindex())]\n"
      "    raise RuntimeError('SEEN ' + ' | '.join(seen))\n";
  ReferenceRunner runner(options());
  const auto outcome = runner.smoke_run(definition_running(source));
  ::unsetenv("FIB_TEST_SECRET");
  const Diagnostic* raised = find(outcome, codes::k_smoke_exception);
  ASSERT_NE(raised, nullptr) << describe(outcome);
  const std::string& seen = raised->message;
  for (const char* expected :
       {"write: refused FileNotFoundError", "secret: refused FileNotFoundError",
        "shadow: refused FileNotFoundError", "home: refused FileNotFoundError",
        "variable: refused KeyError", "signal fib: refused ProcessLookupError",
        "interfaces ['lo']"}) {
    EXPECT_NE(seen.find(expected), std::string::npos) << expected << "\n" << seen;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "outside.txt"));
}

TEST(HostileReference, DescriptorsFibInheritedDoNotReachIt) {
  REQUIRE_SANDBOXED_WORKER();
  TempDir dir;
  const auto secret = dir.write("secret.txt", "the inherited secret\n");
  // As a parent that leaks a descriptor into fib would: open, without close-on-exec.
  const int leaked = ::open(secret.c_str(), O_RDONLY);
  ASSERT_GE(leaked, 0);
  ReferenceRunner runner(options());
  const auto outcome = runner.smoke_run(
      definition_running("import os\n"
                         "def run(x):\n"
                         "    for fd in range(3, 1024):\n"
                         "        try:\n"
                         "            if b'inherited secret' in os.pread(fd, 4096, 0):\n"
                         "                raise RuntimeError('FOUND on %d' % fd)\n"
                         "        except OSError:\n"
                         "            pass\n"
                         "    return x\n"));
  ::close(leaked);
  EXPECT_EQ(outcome.verdict, ReferenceVerdict::ok) << describe(outcome);
}

TEST(HostileReference, KillingEverythingItCanSeeReachesNothingOutside) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options());
  // kill(-1) reaches every process the caller may signal: in its PID namespace, none but its own.
  const auto outcome = runner.smoke_run(
      definition_running("import os, signal\n"
                         "def run(x):\n"
                         "    try:\n"
                         "        os.kill(-1, signal.SIGKILL)\n"
                         "    except ProcessLookupError:\n"
                         "        return x  # nothing it may signal\n"
                         "    raise RuntimeError('kill(-1) reached something')\n"));
  EXPECT_EQ(outcome.verdict, ReferenceVerdict::ok) << describe(outcome);
  // fib (this process) is alive, and so is the worker.
  EXPECT_EQ(runner.smoke_run(definition_running(k_good)).verdict, ReferenceVerdict::ok);
  EXPECT_EQ(runner.worker_starts(), 1u);
  // Its own process it can end: that is a crash of its worker, and the next job gets a new one.
  const auto suicide = runner.smoke_run(definition_running(
      "import os, signal\ndef run(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n"));
  EXPECT_NE(find(suicide, codes::k_worker_crashed), nullptr) << describe(suicide);
  EXPECT_EQ(runner.smoke_run(definition_running(k_good)).verdict, ReferenceVerdict::ok);
  EXPECT_EQ(runner.worker_starts(), 2u);
}

TEST(HostileReference, ItsChildrenDieWithItsSandboxSetsidOrNot) {
  REQUIRE_SANDBOXED_WORKER();
  {
    ReferenceRunner runner(options());
    const auto outcome = runner.smoke_run(
        definition_running("import os, subprocess\n"
                           "def run(x):\n"
                           "    subprocess.Popen(['sleep', '4244'], start_new_session=True)\n"
                           "    if os.fork() == 0:\n"
                           "        os.setsid()\n"
                           "        if os.fork() == 0:\n"
                           "            os.execvp('sleep', ['sleep', '4245'])\n"
                           "        os._exit(0)\n"
                           "    return x\n"));
    EXPECT_EQ(outcome.verdict, ReferenceVerdict::ok) << describe(outcome);
  }
  // The runner is gone: its worker, and everything the reference started, with it.
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while ((!sleeping("4244").empty() || !sleeping("4245").empty()) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(sleeping("4244").empty());
  EXPECT_TRUE(sleeping("4245").empty());
}

TEST(HostileReference, AClosedChannelEndsTheJobAtOnceNotAtTheTimeout) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options(std::chrono::seconds(60)));
  const auto start = Clock::now();
  const auto outcome = runner.smoke_run(definition_running(
      "import os, time\ndef run(x):\n    os.closerange(3, 4096)\n    time.sleep(1000)\n"));
  EXPECT_LT(seconds_since(start), 20.0);
  const Diagnostic* crashed = find(outcome, codes::k_worker_crashed);
  ASSERT_NE(crashed, nullptr) << describe(outcome);
  EXPECT_NE(crashed->message.find("closed the channel"), std::string::npos) << crashed->message;
}

TEST(HostileReference, TheTimeoutHoldsForCodeThatIgnoresSignalsInC) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options(std::chrono::seconds(3)));
  // The worker is started by a harmless job first, so that the clock below measures the hostile
  // job, its kill and its reap, not the worker's start (several seconds in a sanitized build).
  ASSERT_EQ(runner.smoke_run(definition_running(k_good)).verdict, ReferenceVerdict::ok);
  const auto start = Clock::now();
  const auto outcome =
      runner.smoke_run(definition_running("import ctypes, signal\n"
                                          "def run(x):\n"
                                          "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                          "    ctypes.CDLL(None).sleep(1000)\n"));
  // 3 s, plus the kill and the reap; never the 1000 s the code asked for.
  EXPECT_LT(seconds_since(start), 3.0 + 5.0);
  EXPECT_EQ(runner.worker_starts(), 1u);
  EXPECT_NE(find(outcome, codes::k_smoke_timeout), nullptr) << describe(outcome);
}

TEST(HostileReference, AHugeExceptionMessageIsClipped) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options());
  const auto outcome = runner.smoke_run(
      definition_running("def run(x):\n    raise RuntimeError('x' * 100_000_000)\n"));
  const Diagnostic* raised = find(outcome, codes::k_smoke_exception);
  ASSERT_NE(raised, nullptr) << describe(outcome);
  EXPECT_LT(raised->message.size(), 200'000u);
  EXPECT_NE(raised->message.find(" cut by fib"), std::string::npos);
}

TEST(HostileReference, AnEndlessLineIsAProtocolErrorNotAHang) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options(std::chrono::seconds(60)));
  const auto start = Clock::now();
  const auto outcome = runner.smoke_run(definition_running("import os\n"
                                                           "def run(x):\n"
                                                           "    block = b'{' * (1 << 20)\n"
                                                           "    for fd in range(3, 64):\n"
                                                           "        try:\n"
                                                           "            for _ in range(80):\n"
                                                           "                os.write(fd, block)\n"
                                                           "        except OSError:\n"
                                                           "            pass\n"
                                                           "    return x\n"));
  EXPECT_LT(seconds_since(start), 30.0);
  const Diagnostic* protocol = find(outcome, codes::k_worker_protocol);
  ASSERT_NE(protocol, nullptr) << describe(outcome);
  EXPECT_NE(protocol->message.find("without a line end"), std::string::npos) << protocol->message;
  EXPECT_EQ(runner.smoke_run(definition_running(k_good)).verdict, ReferenceVerdict::ok);
}

TEST(HostileReference, AForgedReplyIsAProtocolErrorNotAPass) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options());
  const auto outcome = runner.smoke_run(definition_running(
      "import json, os\n"
      "def run(x):\n"
      "    for fd in range(3, 64):\n"
      "        for guess in range(8):\n"
      "            line = json.dumps({'id': guess, 'outcome': 'ok', 'diagnostics': []}) + '\\n'\n"
      "            try:\n"
      "                os.write(fd, line.encode())\n"
      "            except OSError:\n"
      "                pass\n"
      "    raise RuntimeError('the forger')\n"));
  EXPECT_NE(outcome.verdict, ReferenceVerdict::ok);
  const Diagnostic* protocol = find(outcome, codes::k_worker_protocol);
  ASSERT_NE(protocol, nullptr) << describe(outcome);
  EXPECT_NE(protocol->message.find("unexpected reply"), std::string::npos) << protocol->message;
}

TEST(HostileReference, ItsOutputIsCappedOnFibsStandardError) {
  REQUIRE_SANDBOXED_WORKER();
  ReferenceRunner runner(options());
  ::testing::internal::CaptureStderr();
  const auto outcome = runner.smoke_run(
      definition_running("import sys\ndef run(x):\n    sys.stdout.write('o' * 5_000_000)\n"
                         "    sys.stdout.flush()\n    return x\n"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(outcome.verdict, ReferenceVerdict::ok) << describe(outcome);
  EXPECT_LT(err.size(), std::size_t{1} << 21);
  EXPECT_NE(err.find("the rest is dropped"), std::string::npos);
}

TEST(HostileReference, WithoutTheSandboxTheSameCodeSeesTheHost) {
  // The contrast that shows the tests above test the sandbox: --unsafe-no-sandbox.
  if (std::string_view(k_worker).empty()) {
    GTEST_SKIP() << "fib was built without torch (no fib-worker)";
  }
  TempDir dir;
  const auto secret = dir.write("secret.txt", "the secret\n");
  auto opts = options();
  opts.sandbox = SandboxMode::unsafe_disabled;
  ReferenceRunner runner(opts);
  const auto outcome = runner.smoke_run(definition_running(
      "def run(x):\n    raise RuntimeError('SEEN ' + open('" + secret.string() + "').read())\n"));
  const Diagnostic* raised = find(outcome, codes::k_smoke_exception);
  ASSERT_NE(raised, nullptr) << describe(outcome);
  EXPECT_NE(raised->message.find("SEEN the secret"), std::string::npos) << raised->message;
}

} // namespace
} // namespace fib
