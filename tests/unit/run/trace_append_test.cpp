#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/trace.hpp>
#include <fib/run/trace_append.hpp>

#include <fib/util/file_lock.hpp>
#include <fmt/format.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>
#include <utility>
#include <vector>

namespace fib {
namespace {

using namespace std::chrono_literals;
using testing::read_file;
using testing::TempDir;
using testing::tree;

const std::filesystem::path k_trace_file = "traces/alice/rmsnorm/rmsnorm_h4096.jsonl";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TEST(TraceAppend, CreatesTheFileAndItsDirectories) {
  const TempDir dataset;
  ASSERT_EQ(append_trace_lines(dataset.path(), k_trace_file, {R"({"a":1})", R"({"a":2})"}),
            std::nullopt);
  EXPECT_EQ(read_file(dataset.path() / k_trace_file), "{\"a\":1}\n{\"a\":2}\n");
  EXPECT_EQ(tree(dataset.path()),
            (std::vector<std::string>{"traces", "traces/alice", "traces/alice/rmsnorm",
                                      "traces/alice/rmsnorm/rmsnorm_h4096.jsonl"}));
}

TEST(TraceAppend, KeepsTheOldLinesAndEndsAnUnterminatedOne) {
  const TempDir dataset;
  dataset.write(k_trace_file, "{\"old\":1}");
  ASSERT_EQ(append_trace_lines(dataset.path(), k_trace_file, {R"({"new":2})"}), std::nullopt);
  EXPECT_EQ(read_file(dataset.path() / k_trace_file), "{\"old\":1}\n{\"new\":2}\n");
}

TEST(TraceAppend, APathOutsideTheDatasetIsRefused) {
  const TempDir dataset;
  const auto problem = append_trace_lines(dataset.path(), "traces/../../x.jsonl", {"{}"});
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, codes::k_io_unsafe_path);
  EXPECT_TRUE(tree(dataset.path()).empty());
}

TEST(TraceAppend, ALockedDirectoryTimesOutAndWritesNothing) {
  const TempDir dataset;
  const auto file = dataset.write(k_trace_file, "{\"old\":1}\n");
  auto held = lock_directory(file.parent_path());
  ASSERT_TRUE(held.has_value()) << held.error().message;
  const auto problem = append_trace_lines(dataset.path(), k_trace_file, {"{}"}, 50ms);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, codes::k_io_lock_timeout);
  EXPECT_EQ(problem->file, file.parent_path());
  EXPECT_EQ(read_file(file), "{\"old\":1}\n");
}

// Several processes appending to one trace file at once (as concurrent `fib run`s on one dataset
// do) keep every line: none is lost to another's read-modify-write, and the file stays JSONL.
TEST(TraceAppend, ConcurrentAppendsFromSeveralProcessesKeepEveryLine) {
  constexpr int k_writers = 6;
  constexpr int k_appends = 25;
  const TempDir dataset;
  dataset.write(k_trace_file, "{\"writer\":-1,\"append\":0}\n");
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> writers;
  for (int writer = 0; writer < k_writers; ++writer) {
    const pid_t pid = ::fork();
    ASSERT_NE(pid, -1);
    if (pid == 0) {
      ::close(start[1]);
      char ignored = 0;
      (void)!::read(start[0], &ignored, 1); // every writer starts when the pipe closes
      for (int append = 0; append < k_appends; ++append) {
        // Two lines per append: a lost update would lose both.
        const Json first = {{"writer", writer}, {"append", append}, {"part", 0}};
        const Json second = {{"writer", writer}, {"append", append}, {"part", 1}};
        if (append_trace_lines(dataset.path(), k_trace_file, {first.dump(), second.dump()})) {
          ::_exit(1);
        }
      }
      ::_exit(0);
    }
    writers.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);
  for (const pid_t pid : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer status " << status;
  }
  const std::string text = read_file(dataset.path() / k_trace_file);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto lines = lines_of(text);
  EXPECT_EQ(lines.size(), std::size_t{1 + 2 * k_writers * k_appends});
  std::set<std::tuple<int, int, int>> seen;
  for (const auto& line : lines) {
    ASSERT_TRUE(Json::accept(line)) << line;
    const Json trace = Json::parse(line);
    if (trace.at("writer").get<int>() < 0) {
      continue;
    }
    EXPECT_TRUE(seen.emplace(trace.at("writer").get<int>(), trace.at("append").get<int>(),
                             trace.at("part").get<int>())
                    .second)
        << "repeated: " << line;
  }
  EXPECT_EQ(seen.size(), std::size_t{2 * k_writers * k_appends});
  // The first line, written before the writers, is still first; no temporary is left.
  EXPECT_EQ(lines.front(), "{\"writer\":-1,\"append\":0}");
  EXPECT_EQ(tree(dataset.path() / "traces/alice/rmsnorm"),
            std::vector<std::string>{"rmsnorm_h4096.jsonl"});
}

} // namespace
} // namespace fib

namespace fib {
namespace {

// A run killed between writing the new trace file and renaming it keeps the old file and leaves a
// temporary; the next append removes that temporary and keeps every line that was written.
TEST(TraceAppend, TheAppendAfterAKillLeavesNoTemporary) {
  const TempDir dataset;
  dataset.write(k_trace_file, "{\"old\":1}\n");
  ASSERT_TRUE(testing::dies_in_an_atomic_write(
      [&] { (void)append_trace_lines(dataset.path(), k_trace_file, {R"({"lost":2})"}); }));
  const auto directory = (dataset.path() / k_trace_file).parent_path();
  ASSERT_EQ(testing::temporaries_below(directory).size(), 1u);
  EXPECT_EQ(read_file(dataset.path() / k_trace_file), "{\"old\":1}\n");
  ASSERT_EQ(append_trace_lines(dataset.path(), k_trace_file, {R"({"new":3})"}), std::nullopt);
  EXPECT_EQ(tree(directory), std::vector<std::string>{"rmsnorm_h4096.jsonl"});
  EXPECT_EQ(read_file(dataset.path() / k_trace_file), "{\"old\":1}\n{\"new\":3}\n");
}

// A trace line of solution `solution` on workload `uuid`; `settings` is the JSON text of
// evaluation.settings ("" for none), `tag` a log text that tells lines apart.
std::string trace_line(std::string_view solution, std::string_view uuid, std::string_view settings,
                       std::string_view tag) {
  return fmt::format(
      R"({{"definition": "d1", "workload": {{"axes": {{}}, "inputs": {{}}, "uuid": "{}"}}, "solution": "{}", "evaluation": {{"status": "RUNTIME_ERROR", "environment": {{"hardware": "cpu"}}, "timestamp": "t", "log": "{}"{}}}}})",
      uuid, solution, tag, settings.empty() ? "" : fmt::format(R"(, "settings": {})", settings));
}

TraceIdentity identity_of(std::string_view solution, std::string_view uuid,
                          std::string_view settings) {
  return TraceIdentity{"d1", std::string(solution), std::string(uuid),
                       settings.empty() ? "" : settings_identity(Json::parse(settings))};
}

TEST(TraceRecord, ReplacesTheSameEvaluationAndKeepsEveryOtherLineInOrder) {
  const TempDir dataset;
  const std::string settings = R"({"warmup": 3, "iterations": 10})";
  const std::vector<std::string> old = {
      trace_line("s1", "u1", settings, "old"),                           // replaced
      trace_line("s1", "u2", settings, "other workload"),                // kept
      trace_line("s1", "u1", "", "the old tool's line"),                 // kept: no settings
      trace_line("s1", "u1", R"({"warmup": 0, "iterations": 10})", "x"), // kept: other settings
      trace_line("s2", "u1", settings, "other solution"),                // kept
      "not json, mentions u1",                                           // kept as it is
      trace_line("s1", "u1", R"({"iterations": 10, "warmup": 3})", "old, keys reordered"),
  };
  std::string text;
  for (const auto& line : old) {
    text += line + "\n";
  }
  dataset.write(k_trace_file, text);
  const std::string fresh = trace_line("s1", "u1", settings, "new");
  const auto replaced =
      record_trace_line(dataset.path(), k_trace_file, fresh, identity_of("s1", "u1", settings));
  ASSERT_TRUE(replaced.has_value()) << replaced.error().message;
  EXPECT_EQ(*replaced, 2u);
  EXPECT_EQ(lines_of(read_file(dataset.path() / k_trace_file)),
            (std::vector<std::string>{old[1], old[2], old[3], old[4], old[5], fresh}));
}

TEST(TraceRecord, CreatesTheFileAndEndsAnUnterminatedLastLine) {
  const TempDir dataset;
  const std::string first = trace_line("s1", "u1", R"({"a": 1})", "first");
  const auto first_written = record_trace_line(dataset.path(), k_trace_file, first,
                                               identity_of("s1", "u1", R"({"a": 1})"));
  ASSERT_TRUE(first_written.has_value());
  EXPECT_EQ(*first_written, 0u);
  dataset.write(k_trace_file, read_file(dataset.path() / k_trace_file) + "{\"partial\":");
  const std::string second = trace_line("s1", "u2", R"({"a": 1})", "second");
  const auto second_written = record_trace_line(dataset.path(), k_trace_file, second,
                                                identity_of("s1", "u2", R"({"a": 1})"));
  ASSERT_TRUE(second_written.has_value());
  EXPECT_EQ(*second_written, 0u);
  EXPECT_EQ(read_file(dataset.path() / k_trace_file), first + "\n{\"partial\":\n" + second + "\n");
}

TEST(TraceRecord, RefusesALinkedDirectoryAndWritesNothing) {
  const TempDir dataset;
  const TempDir elsewhere;
  std::filesystem::create_directories(dataset.path() / "traces" / "alice");
  std::filesystem::create_directory_symlink(elsewhere.path(),
                                            dataset.path() / "traces" / "alice" / "rmsnorm");
  const auto result =
      record_trace_line(dataset.path(), k_trace_file, "{}", identity_of("s1", "u1", ""));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, codes::k_io_unsafe_path);
  EXPECT_TRUE(tree(elsewhere.path()).empty());
}

TEST(TraceIdentityOf, SettingsCompareWhateverTheirKeyOrderAndWorkloadTracesHaveNone) {
  EXPECT_EQ(settings_identity(Json::parse(R"({"b": {"y": 1, "x": [2, 1]}, "a": 0.01})")),
            settings_identity(Json::parse(R"({"a": 1e-2, "b": {"x": [2, 1], "y": 1}})")));
  EXPECT_NE(settings_identity(Json::parse(R"({"a": [1, 2]})")),
            settings_identity(Json::parse(R"({"a": [2, 1]})")));
  Trace workload_only;
  workload_only.definition = "d1";
  EXPECT_EQ(trace_identity(workload_only), std::nullopt);
  Trace evaluated = workload_only;
  evaluated.solution = "s1";
  evaluated.workload.uuid = "u1";
  evaluated.evaluation = Evaluation{};
  EXPECT_EQ(trace_identity(evaluated), (TraceIdentity{"d1", "s1", "u1", ""}));
}

} // namespace
} // namespace fib
