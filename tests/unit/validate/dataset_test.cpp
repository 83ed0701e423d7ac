// validate_dataset as a whole: what the scan finds and ignores (fib's dataset-level section), the
// filters, check names and output targets, report files, sharding and merging, chunks and
// parallel_for.
//
// The exit status and `--outputs stdout` are CLI behaviours, covered by the golden CLI cases.

#include "dataset_fixture.hpp"
#include "util/parallel_for.hpp"

#include <atomic>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace fib {
namespace {

using namespace dataset_testing;

// --- Scanning quirks and fib's dataset-level section ---------------------------------------------

// Files at the wrong depth are invisible to every definition's report; fib lists them.
TEST(DatasetValidate, WrongDepthFilesAreIgnoredAndListedByFib) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("definitions/d2.json", definition_json("d2"));
  ds.file("workloads/op/extra/d1.jsonl", lines({wl("w1")}));
  ds.file("solutions/alice/d1/s1.json", solution_json("s1", "d1", "alice"));
  ds.file("traces/op/d1.jsonl", lines({tr("w1", R"("s1")")}));
  ds.file("definitions/op/README.md", "notes");
  const DatasetReport report = ds.validate();
  ASSERT_EQ(report.definitions.size(), 1u);
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{W(codes::k_dataset_workload_no_file, "no workload file found")});
  EXPECT_EQ(messages(report, "d1", Category::solution),
            Messages{I(codes::k_dataset_solution_none, "no solutions")});
  EXPECT_EQ(messages(report, "d1", Category::trace),
            Messages{I(codes::k_dataset_trace_none, "no trace files")});
  EXPECT_EQ(dataset_messages(report),
            (Messages{W(codes::k_dataset_misplaced, "") + ds.path("definitions/d2.json") +
                          ": at the wrong depth: definitions/ files must be 2 levels down",
                      I(codes::k_dataset_unread_file, "") + ds.path("definitions/op/README.md") +
                          ": not a .json file, so no check reads it",
                      W(codes::k_dataset_misplaced, "") + ds.path("workloads/op/extra/d1.jsonl") +
                          ": at the wrong depth: workloads/ files must be 2 levels down",
                      W(codes::k_dataset_misplaced, "") + ds.path("solutions/alice/d1/s1.json") +
                          ": at the wrong depth: solutions/ files must be 4 levels down",
                      W(codes::k_dataset_misplaced, "") + ds.path("traces/op/d1.jsonl") +
                          ": at the wrong depth: traces/ files must be 3 levels down"}));
  EXPECT_EQ(report.dataset->status, CheckStatus::warning);
  // The dataset section does not change any definition's status.
  EXPECT_EQ(status(report, "d1"), CheckStatus::warning);
}

// A flat dataset has no definitions at all.
TEST(DatasetValidate, FlatDatasetHasNoDefinitions) {
  Dataset ds;
  ds.file("definitions/d1.json", definition_json("d1"));
  ds.file("workloads/d1.jsonl", lines({wl("w1")}));
  const DatasetReport report = ds.validate();
  EXPECT_TRUE(report.definitions.empty());
  EXPECT_TRUE(contains(render_report_text(report), "\n0 definitions: 0 ok, 0 warning, 0 error\n"));
}

// Orphans: the old tool never reports them; fib's dataset section does.
TEST(DatasetValidate, OrphansAreListedByFib) {
  Dataset ds;
  write_clean(ds);
  ds.workloads("ghost", {wl("w1", R"({"M": 2})", k_inputs, "ghost")});
  ds.solution("alice", "ghost", "s1", solution_json("s1", "ghost", "alice"));
  ds.traces("alice", "ghost", {tr("w1", R"("s1")", passed_evaluation(), "ghost")});
  const DatasetReport report = ds.validate();
  ASSERT_EQ(report.definitions.size(), 1u);
  EXPECT_EQ(dataset_messages(report),
            (Messages{W(codes::k_dataset_orphan, "") + ds.path("workloads/op/ghost.jsonl") +
                          ": workload file for 'ghost', but there is no definitions/*/ghost.json",
                      W(codes::k_dataset_orphan, "") + ds.path("solutions/alice/op/ghost/s1.json") +
                          ": solution for 'ghost', but there is no definitions/*/ghost.json",
                      W(codes::k_dataset_orphan, "") + ds.path("traces/alice/op/ghost.jsonl") +
                          ": trace file for 'ghost', but there is no definitions/*/ghost.json"}));
}

// A workload file with the same stem in another op_type directory silently replaces the
// earlier one in sort order; fib lists the shadowed file.
TEST(DatasetValidate, ShadowedWorkloadFile) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("a1"), wl("a2")}, "aaa");
  ds.workloads("d1", {wl("w1")}, "op");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "1 valid")});
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  EXPECT_EQ(dataset_messages(report),
            Messages{W(codes::k_dataset_shadowed, "") + ds.path("workloads/aaa/d1.jsonl") +
                     ": ignored, a later file with the same name replaces it"});
}

TEST(DatasetValidate, ShadowedTraceFileSameAuthor) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  ds.traces("alice", "d1", {tr("w1", R"("s1")")}, "zzz");
  ds.traces("alice", "d1", {tr("w1", R"("s1")"), tr("w2", R"("s1")")}, "op");
  const DatasetReport report = ds.validate();
  // The later path (zzz) wins, so layout sees its op_type.
  EXPECT_EQ(
      messages(report, "d1", Category::layout),
      Messages{E(codes::k_dataset_trace_op_type_mismatch,
                 "trace file op_type mismatch for author 'alice': expected 'op', got 'zzz'")});
  EXPECT_EQ(messages(report, "d1", Category::trace),
            Messages{W(codes::k_dataset_trace_coverage, "alice missing 1/2 workloads")});
  EXPECT_EQ(dataset_messages(report),
            Messages{W(codes::k_dataset_shadowed, "") + ds.path("traces/alice/op/d1.jsonl") +
                     ": ignored, a later file with the same name replaces it"});
}

// The filters are united.
TEST(DatasetValidate, FiltersAreUnited) {
  Dataset ds;
  ds.definition("a1", definition_json("a1", "opa"), "opa");
  ds.definition("a2", definition_json("a2", "opa"), "opa");
  ds.definition("b1", definition_json("b1", "opb"), "opb");
  ds.definition("c1", definition_json("c1", "opc"), "opc");
  ValidateDatasetOptions options = ds.options();
  options.op_types = {"opa"};
  options.definitions = {"c1"};
  DatasetReport report = ds.validate(options);
  std::vector<std::string> names;
  for (const auto& [name, entry] : report.definitions) {
    names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a1", "a2", "c1"}));
  EXPECT_EQ(report.config.op_types, std::vector<std::string>{"opa"});
  EXPECT_EQ(report.config.definitions, std::vector<std::string>{"c1"});
}

// A filter value that matches no definition stops the run (usage errors naming each value, with a
// close name when one is near; nothing validated), judged on the whole dataset, not the shard;
// with UnmatchedFilters::warned the values are warnings and what the others select is checked.
TEST(DatasetValidate, FilterValuesThatMatchNothingAreSaid) {
  Dataset ds;
  ds.definition("rmsnorm_h64", definition_json("rmsnorm_h64", "rmsnorm"), "rmsnorm");
  ds.definition("gemm_n64", definition_json("gemm_n64", "gemm"), "gemm");
  ValidateDatasetOptions options = ds.options();
  options.op_types = {"rmsnrom", "gemm", "nope", "nope"};
  options.definitions = {"gemm_n46"};
  DiagnosticList environment;
  DatasetReport report = validate_dataset(options, testing::python(), environment);
  EXPECT_TRUE(report.definitions.empty());
  const std::string root = normalize_root(ds.root()).string();
  ASSERT_EQ(environment.items().size(), 3U);
  for (const Diagnostic& d : environment.items()) {
    EXPECT_EQ(d.code, codes::k_filter_unmatched);
    EXPECT_EQ(d.severity, Severity::error);
  }
  EXPECT_EQ(environment.items()[0].message,
            "--op-types: 'rmsnrom' matches no op_type directory of definitions/ in " + root +
                "; did you mean 'rmsnorm'?");
  EXPECT_EQ(environment.items()[1].message,
            "--op-types: 'nope' matches no op_type directory of definitions/ in " + root);
  EXPECT_EQ(environment.items()[2].message,
            "--definitions: 'gemm_n46' matches no definition name in " + root +
                "; did you mean 'gemm_n64'?");
  EXPECT_EQ(count_diagnostics(environment.items()).usage_errors, 3U);

  // Warned: the same values as warnings, and the matching value's definitions are checked.
  options.unmatched_filters = UnmatchedFilters::warned;
  DiagnosticList warned;
  report = validate_dataset(options, testing::python(), warned);
  ASSERT_EQ(warned.items().size(), 3U);
  EXPECT_EQ(warned.items()[0].severity, Severity::warning);
  EXPECT_FALSE(warned.has_errors());
  ASSERT_EQ(report.definitions.size(), 1U);
  EXPECT_TRUE(report.definitions.contains("gemm_n64"));

  // A value matching a definition of another shard matches.
  options.op_types = {"gemm", "rmsnorm"};
  options.definitions = {};
  options.unmatched_filters = UnmatchedFilters::refused;
  for (std::size_t k = 1; k <= 2; ++k) {
    options.shard = Shard{k, 2};
    DiagnosticList sharded;
    std::ignore = validate_dataset(options, testing::python(), sharded);
    EXPECT_TRUE(sharded.items().empty()) << sharded.items().front().message;
  }
}

// --- Unknown checks and output targets -----------------------------------------------------------

TEST(DatasetValidate, ResolveChecks) {
  const auto cpu = resolve_checks({}, GpuChecks::disabled);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(*cpu, (std::vector<std::string>{"layout", "definition", "workload", "solution", "trace",
                                            "baseline"}));
  const auto all = resolve_checks({}, GpuChecks::enabled);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 7u);
  EXPECT_EQ(all->back(), "benchmark");
  const auto kept = resolve_checks({"benchmark", "trace", "layout", "trace"}, GpuChecks::disabled);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, (std::vector<std::string>{"trace", "layout", "trace"}));
  const auto unknown = resolve_checks({"layout", "bogus"}, GpuChecks::enabled);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, codes::k_usage);
  EXPECT_EQ(unknown.error().message,
            "unknown check 'bogus', valid: ['layout', 'definition', 'workload', 'solution', "
            "'trace', 'baseline', 'benchmark']");
  // Whitespace is not trimmed.
  EXPECT_FALSE(resolve_checks({" layout"}, GpuChecks::enabled));
}

TEST(DatasetValidate, ParseReportTargets) {
  const auto all = parse_report_targets("");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->stdout_text && all->json_file && all->text_file);
  const auto json = parse_report_targets("json");
  ASSERT_TRUE(json);
  EXPECT_TRUE(json->json_file);
  EXPECT_FALSE(json->stdout_text || json->text_file);
  const auto two = parse_report_targets("stdout,text");
  ASSERT_TRUE(two);
  EXPECT_TRUE(two->stdout_text && two->text_file);
  EXPECT_FALSE(two->json_file);
  const auto bad = parse_report_targets("stdout,xml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, codes::k_usage);
  EXPECT_EQ(bad.error().message, "unknown output target 'xml', valid: stdout, json, text");
}

// --- Report files are never replaced -------------------------------------------------------------

DatasetReport report_of_dataset(const std::string& dataset) {
  DatasetReport report;
  report.config.dataset = dataset;
  report.config.checks = {"layout"};
  return report;
}

TEST(DatasetValidate, ReportFileNamesFollowTheOldToolThenCount) {
  const std::filesystem::path folder = "/r";
  EXPECT_EQ(report_files(folder, "20260101-120000").json, "/r/report-20260101-120000.json");
  EXPECT_EQ(report_files(folder, "20260101-120000", 1).text, "/r/report-20260101-120000.txt");
  EXPECT_EQ(report_files(folder, "20260101-120000", 2).json, "/r/report-20260101-120000-2.json");
  EXPECT_EQ(report_files(folder, "20260101-120000", 17).text, "/r/report-20260101-120000-17.txt");
}

// Runs of the same second each write a pair of their own: the first free name, where the files of
// every enabled output are free; nothing written before is replaced.
TEST(DatasetValidate, ReportsOfTheSameSecondTakeTheNextFreeName) {
  TempDir dir;
  const auto folder = dir.path() / "reports";
  const ReportTargets all;
  const auto first =
      write_report_files(report_of_dataset("/first"), folder, "20260101-120000", all);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->json, folder / "report-20260101-120000.json");
  EXPECT_EQ(first->text, folder / "report-20260101-120000.txt");
  // A text file alone holds the second name: a run writing both skips it; one writing only the
  // JSON takes it.
  dir.write("reports/report-20260101-120000-2.txt", "someone else's");
  const auto second =
      write_report_files(report_of_dataset("/second"), folder, "20260101-120000", all);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->json, folder / "report-20260101-120000-3.json");
  EXPECT_EQ(second->text, folder / "report-20260101-120000-3.txt");
  const auto json_only = write_report_files(report_of_dataset("/third"), folder, "20260101-120000",
                                            ReportTargets{false, true, false});
  ASSERT_TRUE(json_only) << json_only.error().message;
  EXPECT_EQ(json_only->json, folder / "report-20260101-120000-2.json");

  EXPECT_EQ(testing::read_file(first->json), render_report_json(report_of_dataset("/first")));
  EXPECT_EQ(testing::read_file(second->text), render_report_text(report_of_dataset("/second")));
  EXPECT_EQ(testing::read_file(folder / "report-20260101-120000-2.txt"), "someone else's");
  EXPECT_EQ(
      testing::tree(folder),
      (std::vector<std::string>{"report-20260101-120000-2.json", "report-20260101-120000-2.txt",
                                "report-20260101-120000-3.json", "report-20260101-120000-3.txt",
                                "report-20260101-120000.json", "report-20260101-120000.txt"}));
}

// Concurrent writers of the same second: each report lands whole, its .json and .txt under one
// name, and no two share a name.
TEST(DatasetValidate, ConcurrentReportsOfTheSameSecondEachGetTheirOwnPair) {
  TempDir dir;
  const auto folder = dir.path() / "reports";
  constexpr int k_writers = 8;
  std::vector<std::string> stems(k_writers);
  std::vector<std::thread> threads;
  for (int i = 0; i < k_writers; ++i) {
    threads.emplace_back([&, i] {
      const auto files = write_report_files(report_of_dataset(fmt::format("/data/{}", i)), folder,
                                            "20260101-120000", ReportTargets{});
      stems[i] = files ? files->json.stem().string() : "failed: " + files.error().message;
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  std::set<std::string> distinct;
  for (int i = 0; i < k_writers; ++i) {
    ASSERT_TRUE(stems[i].starts_with("report-20260101-120000")) << stems[i];
    distinct.insert(stems[i]);
    const DatasetReport report = report_of_dataset(fmt::format("/data/{}", i));
    EXPECT_EQ(testing::read_file(folder / (stems[i] + ".json")), render_report_json(report));
    EXPECT_EQ(testing::read_file(folder / (stems[i] + ".txt")), render_report_text(report));
  }
  EXPECT_EQ(distinct.size(), std::size_t{k_writers});
  EXPECT_EQ(testing::tree(folder).size(), std::size_t{2 * k_writers});
}

// Only when every name of the sequence is taken is it `report.exists`, and nothing is left.
TEST(DatasetValidate, AReportWithEveryNameTakenIsReportExists) {
  TempDir dir;
  const auto folder = dir.path() / "reports";
  for (unsigned sequence = 1; sequence <= k_report_name_attempts; ++sequence) {
    dir.write(report_files("reports", "t", sequence).json, "{}");
  }
  const auto refused = write_report_files(report_of_dataset("/d"), folder, "t", ReportTargets{});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::k_report_exists);
  EXPECT_EQ(refused.error().file, folder / "report-t.json");
  EXPECT_EQ(testing::tree(folder).size(), std::size_t{k_report_name_attempts});
  EXPECT_TRUE(testing::temporaries_below(folder).empty());
}

// --- Sharding and merging ------------------------------------------------------------------------

TEST(DatasetValidate, ShardsPartitionDefinitions) {
  for (std::size_t n = 1; n <= 5; ++n) {
    for (int i = 0; i < 40; ++i) {
      const std::string name = fmt::format("definition_{}", i);
      std::size_t owners = 0;
      for (std::size_t k = 1; k <= n; ++k) {
        owners += shard_owns(Shard{k, n}, name) ? 1 : 0;
      }
      EXPECT_EQ(owners, 1u) << name << " in " << n << " shards";
    }
  }
}

TEST(DatasetValidate, MergedShardReportsEqualUnshardedReport) {
  Dataset ds;
  write_many(ds, 12);
  const DatasetReport whole = ds.validate();
  ASSERT_EQ(whole.definitions.size(), 12u);
  for (const std::size_t n : {2u, 3u, 5u}) {
    std::vector<DatasetReport> shards;
    std::size_t total = 0;
    for (std::size_t k = 1; k <= n; ++k) {
      ValidateDatasetOptions options = ds.options();
      options.shard = Shard{k, n};
      shards.push_back(ds.validate(options));
      total += shards.back().definitions.size();
    }
    EXPECT_EQ(total, 12u) << n << " shards";
    const DatasetReport merged = merge_reports(shards);
    EXPECT_EQ(render_report_json(merged), render_report_json(whole)) << n << " shards";
    EXPECT_EQ(render_report_text(merged), render_report_text(whole)) << n << " shards";
  }
}

// --- Chunks and parallel_for ---------------------------------------------------------------------

// More definitions than one chunk holds (64 in this process, 16 in a worker process): every
// definition gets its own files, in order, and progress counts across chunks.
TEST(DatasetValidate, ManyDefinitionsAcrossChunks) {
  Dataset ds;
  constexpr int k_count = 150;
  for (int i = 0; i < k_count; ++i) {
    const std::string name = fmt::format("def{:03}", i);
    ds.definition(name, definition_json(name));
    ds.workloads(name, {wl("w1", R"({"M": 2})", k_inputs, name),
                        wl("w2", i % 3 == 0 ? R"({"M": 0})" : R"({"M": 3})", k_inputs, name)});
    ds.solution("alice", name, "s1", solution_json("s1", name, i % 5 == 0 ? "bob" : "alice"));
    ds.traces("alice", name, {tr("w1", R"("s1")", passed_evaluation(), name)});
  }
  ValidateDatasetOptions options = ds.options();
  std::size_t calls = 0;
  std::size_t last = 0;
  options.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    EXPECT_EQ(total, static_cast<std::size_t>(k_count));
    EXPECT_GT(done, last) << "progress only grows";
    last = done;
  };
  const DatasetReport report = ds.validate(options);
  EXPECT_GE(calls, 3u) << "one call per chunk at least";
  EXPECT_EQ(last, static_cast<std::size_t>(k_count));
  ASSERT_EQ(report.definitions.size(), static_cast<std::size_t>(k_count));
  ASSERT_EQ(report.definition_files.size(), static_cast<std::size_t>(k_count));
  for (int i = 0; i < k_count; ++i) {
    const std::string name = fmt::format("def{:03}", i);
    SCOPED_TRACE(name);
    EXPECT_EQ(report.definition_files.at(name),
              ds.root() / "definitions" / "op" / (name + ".json"));
    const Messages workload = i % 3 == 0
                                  ? Messages{I(codes::k_dataset_workload_valid_count, "1/2 valid"),
                                             E(codes::k_dataset_workload_axis_value,
                                               "w2: axis M has non-positive value 0")}
                                  : Messages{I(codes::k_dataset_workload_valid_count, "2 valid")};
    const Messages layout =
        i % 5 == 0 ? Messages{E(codes::k_dataset_solution_author_mismatch,
                                "solution 's1' author mismatch: path 'alice', JSON 'bob'")}
                   : Messages{};
    EXPECT_EQ(messages(report, name, Category::workload), workload);
    EXPECT_EQ(messages(report, name, Category::layout), layout);
    EXPECT_EQ(messages(report, name, Category::trace),
              Messages{W(codes::k_dataset_trace_coverage, "alice missing 1/2 workloads")});
  }
}

// definition_files names the file as scanned: the later of two same-stem files, and only targets.
TEST(DatasetValidate, DefinitionFilesListTheTargets) {
  Dataset ds;
  ds.definition("d1", definition_json("d1", "a"), "a");
  ds.definition("d1", definition_json("d1", "b"), "b");
  ds.definition("d2", definition_json("d2", "c"), "c");
  ValidateDatasetOptions options = ds.options();
  options.op_types = {"b"};
  const DatasetReport report = ds.validate(options);
  EXPECT_EQ(report.definition_files, (std::map<std::string, std::filesystem::path>{
                                         {"d1", ds.root() / "definitions" / "b" / "d1.json"}}));
}

// Worker processes change nothing in the report: one process, two and five give the same bytes,
// with Python-exact findings (a reference that does not parse, one whose run cannot take the
// inputs, a constraint that does not parse), load failures, workload errors, a missing blob and
// traces spread over several chunks.
TEST(DatasetValidate, WorkerProcessesGiveTheSameReport) {
  Dataset ds;
  constexpr int k_count = 70;
  write_varied(ds, k_count);
  ValidateDatasetOptions options = ds.options();
  options.processes = 1;
  const DatasetReport one = ds.validate(options);
  ASSERT_EQ(one.definitions.size(), static_cast<std::size_t>(k_count));
  EXPECT_EQ(messages(one, "def000", Category::definition).size(), 1u);
  EXPECT_EQ(one.definitions.at("def000").status, CheckStatus::error);
  for (const std::size_t processes : {2u, 5u}) {
    options.processes = processes;
    const DatasetReport many = ds.validate(options);
    EXPECT_EQ(render_report_json(many), render_report_json(one)) << processes << " processes";
    EXPECT_EQ(render_report_text(many), render_report_text(one)) << processes << " processes";
  }
}

// done_with is handed the run's working structures once, on the way out, and taking them changes
// nothing in the report: for a run of every definition, for one with a filter, and for one that a
// filter matching nothing stops (with UnmatchedFilters::refused, before any definition is checked).
TEST(DatasetValidate, DoneWithIsHandedTheRunsLeftoversOnce) {
  Dataset ds;
  constexpr int k_count = 40;
  write_varied(ds, k_count);
  const std::vector<std::vector<std::string>> filters = {{}, {"def001", "def007"}, {"nope"}};
  for (const std::vector<std::string>& filter : filters) {
    SCOPED_TRACE(fmt::format("--definitions {}", fmt::join(filter, " ")));
    ValidateDatasetOptions options = ds.options();
    options.definitions = filter;
    DiagnosticList freed_environment;
    const DatasetReport freed = validate_dataset(options, testing::python(), freed_environment);
    std::vector<std::shared_ptr<void>> handed;
    options.done_with = [&](std::shared_ptr<void> leftovers) {
      handed.push_back(std::move(leftovers));
    };
    DiagnosticList kept_environment;
    const DatasetReport kept = validate_dataset(options, testing::python(), kept_environment);
    ASSERT_EQ(handed.size(), 1u);
    EXPECT_NE(handed.front(), nullptr);
    const std::size_t expected = filter.empty() ? k_count : filter.size() == 2 ? 2 : 0;
    EXPECT_EQ(kept.definitions.size(), expected);
    ASSERT_EQ(kept_environment.items().size(), filter.size() == 1 ? 1u : 0u);
    if (filter.size() == 1) {
      EXPECT_EQ(kept_environment.items().front().code, codes::k_filter_unmatched);
    }
    EXPECT_EQ(render_report_json(kept), render_report_json(freed));
    handed.clear(); // destroyed here, after the run: nothing in it refers to the run's stack
  }
}

TEST(ParallelFor, RunsEveryIndexOnce) {
  for (const std::size_t workers : {1u, 2u, 4u}) {
    std::vector<std::atomic<int>> seen(1000);
    detail::parallel_for(
        seen.size(), [&](std::size_t i) { ++seen[i]; }, workers);
    for (const auto& s : seen) {
      EXPECT_EQ(s.load(), 1);
    }
  }
  detail::parallel_for(
      0, [](std::size_t) { FAIL(); }, 4);
}

// An exception in a worker reaches the caller after every thread is joined (no std::terminate),
// and the workers stop taking new items.
TEST(ParallelFor, RethrowsTheFirstExceptionOnTheCallingThread) {
  for (const std::size_t workers : {1u, 2u, 4u}) {
    std::atomic<std::size_t> ran{0};
    EXPECT_THROW(detail::parallel_for(
                     100000,
                     [&](std::size_t i) {
                       ++ran;
                       if (i == 10) {
                         throw std::bad_alloc();
                       }
                     },
                     workers),
                 std::bad_alloc);
    EXPECT_LT(ran.load(), 100000u) << workers << " workers";
  }
  // Several failures: one of them is rethrown.
  EXPECT_THROW(detail::parallel_for(
                   64, [](std::size_t i) { throw std::runtime_error(std::to_string(i)); }, 4),
               std::runtime_error);
}

// Which codes pydantic shows as model-level "Value error, …" lines is a property of the codes
// table.
TEST(DatasetValidate, ModelLevelCodesAreMarkedInTheTable) {
  for (const std::string_view code :
       {codes::k_reference_no_run, codes::k_source_duplicate, codes::k_axis_undefined}) {
    ASSERT_NE(find_code(code), nullptr);
    EXPECT_EQ(find_code(code)->scope, ErrorScope::model) << code;
  }
  for (const std::string_view code : {codes::k_schema_required, codes::k_json_parse}) {
    ASSERT_NE(find_code(code), nullptr);
    EXPECT_EQ(find_code(code)->scope, ErrorScope::field) << code;
  }
}

} // namespace
} // namespace fib

namespace fib {
namespace {

using namespace dataset_testing;

// A stray temporary of a killed atomic write is not reported as a misplaced or unread file, and
// no check parses it (its content would not parse).
TEST(DatasetValidate, AtomicWriteTemporariesAreNotSeen) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("definitions/op/.fib-abc123", "{not json");
  ds.file("definitions/.fib-abc124", "{not json");
  ds.file("workloads/op/.fib-abc125", "{not json");
  ds.file("traces/op/.fib-abc126", "{not json");
  ds.file("definitions/op/notes.fib-abc127", "not a temporary of fib's");
  const DatasetReport report = ds.validate();
  ASSERT_EQ(report.definitions.size(), 1u);
  EXPECT_EQ(dataset_messages(report), (Messages{I(codes::k_dataset_unread_file, "") +
                                                ds.path("definitions/op/notes.fib-abc127") +
                                                ": not a .json file, so no check reads it"}));
}

// Killed while writing its report, a validation leaves the report's temporary in reports/; the
// next validation's report writing removes it, and the dataset scan never reports it meanwhile.
TEST(DatasetValidate, ReportWritingAfterAKillLeavesNoTemporary) {
  TempDir dir;
  DatasetReport report;
  report.config.dataset = "/data";
  report.config.checks = {"layout"};
  const ReportTargets all;
  ASSERT_TRUE(testing::dies_in_an_atomic_write(
      [&] { (void)write_report_files(report, dir.path() / "reports", "20260101-120000", all); }));
  // Both files wait, synced, for their names when the fault fires.
  ASSERT_EQ(testing::temporaries_below(dir.path() / "reports").size(), 2u);
  EXPECT_TRUE(write_report_files(report, dir.path() / "reports", "20260101-120001", all));
  EXPECT_EQ(
      testing::tree(dir.path() / "reports"),
      (std::vector<std::string>{"report-20260101-120001.json", "report-20260101-120001.txt"}));
}

} // namespace
} // namespace fib
