// The dataset categories on small datasets built in a temporary directory: every message of the
// old tool's layout, definition, solution, trace and baseline checks with its code, the status
// rules, and fib's own checks in those categories.

#include "dataset_fixture.hpp"

namespace fib {
namespace {

using namespace dataset_testing;

// --- A clean dataset and the status rules (the worst level wins; info never counts) --------------

TEST(DatasetValidate, CleanDefinitionWithoutBaselineIsWarning) {
  Dataset ds;
  write_clean(ds);
  const DatasetReport report = ds.validate();
  ASSERT_EQ(report.definitions.size(), 1u);
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  EXPECT_EQ(messages(report, "d1", Category::definition), Messages{});
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "2 valid")});
  EXPECT_EQ(messages(report, "d1", Category::solution),
            Messages{I(codes::k_dataset_solution_none, "no solutions")});
  EXPECT_EQ(messages(report, "d1", Category::trace),
            Messages{I(codes::k_dataset_trace_none, "no trace files")});
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            Messages{W(codes::k_dataset_baseline_none, "no baseline solution")});
  EXPECT_FALSE(report.definitions.at("d1")[Category::benchmark].has_value());
  EXPECT_EQ(status(report, "d1", Category::layout), CheckStatus::ok);
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::ok);
  EXPECT_EQ(status(report, "d1", Category::baseline), CheckStatus::warning);
  EXPECT_EQ(status(report, "d1"), CheckStatus::warning);
  EXPECT_EQ(report.config.dataset, ds.root().string());
  EXPECT_EQ(report.config.checks, (std::vector<std::string>{"layout", "definition", "workload",
                                                            "solution", "trace", "baseline"}));
  EXPECT_TRUE(report.config.disable_gpu);
  EXPECT_EQ(dataset_messages(report), Messages{});
}

TEST(DatasetValidate, CompleteDefinitionWithBaselineIsOk) {
  Dataset ds;
  write_clean(ds);
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.traces("baseline", "d1", {tr("w1", R"("b1")"), tr("w2", R"("b1")")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::solution),
            Messages{I(codes::k_dataset_solution_count, "1 solutions")});
  EXPECT_EQ(messages(report, "d1", Category::trace), Messages{});
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            (Messages{I(codes::k_dataset_baseline_solutions, "solution: b1"),
                      I(codes::k_dataset_baseline_trace_passed, "trace: all passed"),
                      I(codes::k_dataset_baseline_trace_covered, "trace: 2/2 workloads")}));
  EXPECT_EQ(status(report, "d1"), CheckStatus::ok);
}

TEST(DatasetValidate, OnlyRequestedCategoriesRunAndCountTowardsStatus) {
  Dataset ds;
  write_clean(ds); // baseline would warn
  ValidateDatasetOptions options = ds.options();
  options.checks = {"workload", "layout", "layout"};
  const DatasetReport report = ds.validate(options);
  EXPECT_EQ(report.config.checks, (std::vector<std::string>{"workload", "layout", "layout"}));
  const DefinitionReport& d1 = report.definitions.at("d1");
  EXPECT_TRUE(d1[Category::layout].has_value());
  EXPECT_TRUE(d1[Category::workload].has_value());
  EXPECT_FALSE(d1[Category::definition].has_value());
  EXPECT_FALSE(d1[Category::baseline].has_value());
  EXPECT_EQ(d1.status, CheckStatus::ok);
}

// --- layout --------------------------------------------------------------------------------------

// The later of two same-stem definitions is kept, with the duplicate error.
TEST(DatasetValidate, LayoutDuplicateDefinitionName) {
  Dataset ds;
  ds.definition("d1", definition_json("d1", "a"), "a");
  ds.definition("d1", definition_json("d1", "b"), "b");
  ds.workloads("d1", {wl("w1")}, "b");
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "bob"), "b");
  const DatasetReport report = ds.validate();
  ASSERT_EQ(report.definitions.size(), 1u);
  const std::string error =
      fmt::format("duplicate definition name: {} and {}", ds.path("definitions/a/d1.json"),
                  ds.path("definitions/b/d1.json"));
  // Only the duplicate error: the solution's author mismatch is not reached.
  EXPECT_EQ(messages(report, "d1", Category::layout),
            Messages{E(codes::k_dataset_definition_duplicate, error)});
  EXPECT_EQ(messages(report, "d1", Category::definition),
            Messages{E(codes::k_dataset_definition_duplicate, "parse error: " + error)});
  // The later file's Definition is still kept, so its workloads are checked against it.
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "1 valid")});
  EXPECT_EQ(status(report, "d1"), CheckStatus::error);
}

// With a duplicate stem whose later file does not parse, there is no Definition to check against.
TEST(DatasetValidate, LayoutDuplicateDefinitionWhoseLaterFileIsBroken) {
  Dataset ds;
  ds.definition("d1", definition_json("d1", "a"), "a");
  DefSpec broken;
  broken.op_type = "b";
  broken.reference = R"(x = 1\n)"; // no `def run`: only the embedded Python finds this
  ds.definition("d1", definition_json(broken), "b");
  ds.workloads("d1", {wl("w1")}, "b");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{E(codes::k_dataset_definition_not_loaded,
                       "cannot validate workloads: definition failed to load")});
}

// The definition file name and op_type directory against its JSON.
TEST(DatasetValidate, LayoutDefinitionNameAndOpTypeMismatch) {
  Dataset ds;
  DefSpec spec;
  spec.name = "other_name";
  spec.op_type = "other_op";
  ds.definition("d1", definition_json(spec), "op");
  const DatasetReport report = ds.validate();
  ASSERT_TRUE(report.definitions.contains("d1")); // keyed by the stem
  EXPECT_EQ(messages(report, "d1", Category::layout),
            (Messages{E(codes::k_dataset_definition_name_mismatch,
                        "definition name mismatch: path says 'd1', JSON says 'other_name'"),
                      E(codes::k_dataset_definition_op_type_mismatch,
                        "definition op_type mismatch: path says 'op', JSON says 'other_op'")}));
  EXPECT_EQ(status(report, "d1", Category::layout), CheckStatus::error);
  EXPECT_EQ(status(report, "d1"), CheckStatus::error);
}

// The workload file's op_type directory, and only the first mismatching line.
TEST(DatasetValidate, LayoutWorkloadOpTypeAndDefinitionMismatch) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads(
      "d1",
      {wl("w1"), wl("w2", R"({"M": 2})", k_inputs, "x"), wl("w3", R"({"M": 2})", k_inputs, "y")},
      "wrong");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::layout),
            (Messages{E(codes::k_dataset_workload_op_type_mismatch,
                        "workload op_type mismatch: expected 'op', got 'wrong'"),
                      E(codes::k_dataset_workload_definition_mismatch,
                        "workload trace definition mismatch: expected 'd1', got 'x'")}));
  // The line's definition field is layout's business only.
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "3 valid")});
}

// Both layout and solution report path/JSON mismatches; the op_type
// directory only in layout.
TEST(DatasetValidate, LayoutAndSolutionMismatches) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s9", "d2", "bob"), "other_op");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::layout),
            (Messages{E(codes::k_dataset_solution_author_mismatch,
                        "solution 's1' author mismatch: path 'alice', JSON 'bob'"),
                      E(codes::k_dataset_solution_definition_mismatch,
                        "solution 's1' definition mismatch: path 'd1', JSON 'd2'"),
                      E(codes::k_dataset_solution_name_mismatch,
                        "solution name mismatch: path 's1', JSON 's9'"),
                      E(codes::k_dataset_solution_op_type_mismatch,
                        "solution 's1' op_type mismatch: expected 'op', got 'other_op'")}));
  EXPECT_EQ(
      messages(report, "d1", Category::solution),
      (Messages{
          I(codes::k_dataset_solution_count, "1 solutions"),
          E(codes::k_dataset_solution_definition_mismatch, "s1: definition field 'd2' != 'd1'"),
          E(codes::k_dataset_solution_author_mismatch, "s1: author field 'bob' != path 'alice'"),
          E(codes::k_dataset_solution_name_mismatch, "s1: name field 's9' != path 's1'")}));
  EXPECT_EQ(status(report, "d1", Category::solution), CheckStatus::error);
}

TEST(DatasetValidate, SolutionOpTypeMismatchIsLayoutOnly) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"), "other_op");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::layout),
            Messages{E(codes::k_dataset_solution_op_type_mismatch,
                       "solution 's1' op_type mismatch: expected 'op', got 'other_op'")});
  EXPECT_EQ(messages(report, "d1", Category::solution),
            Messages{I(codes::k_dataset_solution_count, "1 solutions")});
}

// The trace file's op_type directory, and only the first mismatching line.
TEST(DatasetValidate, LayoutTraceOpTypeAndDefinitionMismatch) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  ds.traces("alice", "d1",
            {tr("w1", R"("s1")"), tr("w2", R"("s1")", passed_evaluation(), "x"),
             tr("w2", R"("s1")", passed_evaluation(), "y")},
            "other");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::layout),
      (Messages{E(codes::k_dataset_trace_op_type_mismatch,
                  "trace file op_type mismatch for author 'alice': expected 'op', got 'other'"),
                E(codes::k_dataset_trace_definition_mismatch,
                  "trace definition mismatch for author 'alice': expected 'd1', got 'x'")}));
}

// A missing blob is reported in both layout and workload; fib reports it
// once per (uuid, path) even when several inputs come from the same blob (docs/compatibility.md).
TEST(DatasetValidate, MissingBlobReportedOncePerUuidAndPathInLayoutAndWorkload) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "B": {"shape": ["N"], "dtype": "float32", "description": "b"}})";
  spec.reference = R"(def run(A, B):\n    return A\n)";
  ds.definition(spec);
  const std::string inputs =
      R"({"A": {"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "A"}, "B": {"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "B"}})";
  const std::string other =
      R"({"A": {"type": "safetensors", "path": "blob/w2.safetensors", "tensor_key": "A"}, "B": {"type": "random"}})";
  ds.workloads("d1", {wl("w1", R"({"M": 2})", inputs), wl("w2", R"({"M": 2})", other)});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::layout),
      (Messages{E(codes::k_blob_not_found, "workload w1: blob missing at blob/w1.safetensors"),
                E(codes::k_blob_not_found, "workload w2: blob missing at blob/w2.safetensors")}));
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/2 valid"),
                      E(codes::k_blob_not_found, "w1: blob missing at blob/w1.safetensors"),
                      E(codes::k_blob_not_found, "w2: blob missing at blob/w2.safetensors")}));
  EXPECT_EQ(status(report, "d1", Category::layout), CheckStatus::error);
}

// Layout 6 checks every safetensors input of a line, including ones the definition lacks, while
// the workload category skips the line's blob checks after "extra inputs".
TEST(DatasetValidate, LayoutChecksBlobsOfInputsTheDefinitionLacks) {
  Dataset ds;
  ds.definition(DefSpec{});
  const std::string inputs =
      R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": 1}, "Z": {"type": "safetensors", "path": "./blob/z.safetensors", "tensor_key": "Z"}})";
  ds.workloads("d1", {wl("w1", R"({"M": 2})", inputs)});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::layout),
      Messages{E(codes::k_blob_not_found, "workload w1: blob missing at ./blob/z.safetensors")});
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_extra_inputs, "w1: extra inputs ['Z']")}));
}

// Layout 6 runs only when the definition parsed.
TEST(DatasetValidate, LayoutSkipsBlobsWhenDefinitionFailed) {
  Dataset ds;
  DefSpec spec;
  spec.reference = R"(x = 1\n)"; // no `def run`
  ds.definition(spec);
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          R"({"A": {"type": "safetensors", "path": "blob/a.safetensors", "tensor_key": "A"}, "s": {"type": "scalar", "value": 1}})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{E(codes::k_dataset_definition_not_loaded,
                       "cannot validate workloads: definition failed to load")});
}

// --- definition ----------------------------------------------------------------------------------

// A model-validator error; the workload category cannot run.
TEST(DatasetValidate, DefinitionParseErrorFromReference) {
  Dataset ds;
  DefSpec spec;
  spec.reference = R"(def helper():\n    pass\n)";
  ds.definition(spec);
  ds.workloads("d1", {wl("w1")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::definition);
  ASSERT_EQ(got.size(), 1u);
  // A model-level error, as pydantic prints it: no location line, "Value error, " before it.
  EXPECT_EQ(got[0], E(codes::k_reference_no_run,
                      "parse error: 1 validation error for Definition\n  Value error, Reference "
                      "must define a top-level function named 'run'"));
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{E(codes::k_dataset_definition_not_loaded,
                       "cannot validate workloads: definition failed to load")});
  // A definition that did not parse gets no name/op_type comparison in layout.
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  EXPECT_EQ(status(report, "d1"), CheckStatus::error);
}

TEST(DatasetValidate, DefinitionParseErrorFromSchema) {
  Dataset ds;
  ds.definition("d1",
                R"({"name": "d1", "op_type": "op", "axes": {}, "inputs": {}, "outputs": {}})");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::definition);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(
      got[0], E(codes::k_schema_required, "parse error: 1 validation error for Definition")))
      << got[0];
  // A field-level error keeps its location line.
  EXPECT_TRUE(contains(got[0], "for Definition\nreference\n  ")) << got[0];
  EXPECT_FALSE(contains(got[0], "Value error")) << got[0];
}

TEST(DatasetValidate, DefinitionInvalidJsonIsParseError) {
  Dataset ds;
  ds.definition("d1", R"({"name": "d1",})");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::definition);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(got[0], E(codes::k_json_parse, "parse error: "))) << got[0];
}

// The old tool's rglob("*.json") matches a directory too; reading it is that entry's parse error.
TEST(DatasetValidate, DirectoryNamedLikeDefinitionIsParseError) {
  Dataset ds;
  std::filesystem::create_directories(ds.root() / "definitions" / "op" / "dir.json");
  const DatasetReport report = ds.validate();
  ASSERT_TRUE(report.definitions.contains("dir"));
  const Messages got = messages(report, "dir", Category::definition);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(got[0], E(codes::k_io_read, "parse error: "))) << got[0];
}

// Missing descriptions: one warning each, in order.
TEST(DatasetValidate, DefinitionMissingDescriptions) {
  Dataset ds;
  DefSpec spec;
  spec.description = "";
  spec.axes = R"({"M": {"type": "var"}, "N": {"type": "const", "value": 4}})";
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32"}, "s": {"shape": null, "dtype": "float32", "description": "scale"}})";
  spec.outputs = R"({"C": {"shape": ["M", "N"], "dtype": "float32"}})";
  ds.definition(spec);
  ds.workloads("d1", {wl("w1")});
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.traces("baseline", "d1", {tr("w1", R"("b1")")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::definition),
            (Messages{W(codes::k_description_missing, "missing description"),
                      W(codes::k_description_missing, "missing description: axes.M"),
                      W(codes::k_description_missing, "missing description: axes.N"),
                      W(codes::k_description_missing, "missing description: inputs.A"),
                      W(codes::k_description_missing, "missing description: outputs.C")}));
  EXPECT_EQ(status(report, "d1", Category::definition), CheckStatus::warning);
  EXPECT_EQ(status(report, "d1"), CheckStatus::warning);
}

TEST(DatasetValidate, DefinitionEmptyDescriptionWarns) {
  Dataset ds;
  DefSpec spec;
  spec.description = R"("description": "", )";
  ds.definition(spec);
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::definition),
            Messages{W(codes::k_description_missing, "missing description")});
}

// With GPU checks disabled there is no reference build message and no benchmark.
// fib's plausibility checks on const axes: heads in whole groups, and the naming convention.
TEST(DatasetValidate, DefinitionHeadRatioAndNameConvention) {
  Dataset ds;
  DefSpec spec;
  spec.name = "gqa_paged_decode_h32_kv8_d128_ps1";
  spec.axes =
      R"({"M": {"type": "var", "description": "rows"}, "N": {"type": "const", "value": 4, "description": "cols"}, "num_qo_heads": {"type": "const", "value": 32, "description": "q"}, "num_kv_heads": {"type": "const", "value": 6, "description": "kv"}, "head_dim": {"type": "const", "value": 128, "description": "d"}})";
  spec.inputs =
      R"({"A": {"shape": ["M", "N", "num_qo_heads", "num_kv_heads", "head_dim"], "dtype": "float32", "description": "a"}, "s": {"shape": null, "dtype": "float32", "description": "scale"}})";
  ds.definition(spec);
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, spec.name, Category::definition),
            (Messages{W(codes::k_dataset_definition_head_ratio,
                        "[fib] num_qo_heads = 32 is not a multiple of num_kv_heads = 6: query "
                        "heads must be a whole number of groups per KV head (were the axes read "
                        "from the wrong tensor layout?)"),
                      W(codes::k_dataset_definition_name_convention,
                        "[fib] name 'gqa_paged_decode_h32_kv8_d128_ps1' does not carry 'kv6' for "
                        "num_kv_heads = 6, as the gqa_paged_* naming convention expects")}));
  EXPECT_EQ(status(report, spec.name, Category::definition), CheckStatus::warning);
}

// With GPU checks enabled but no worker to run them, the definition and baseline categories say
// the builds did not run (info), and the benchmark category is skipped.
TEST(DatasetValidate, GpuChecksWithoutWorkerSayWhatDidNotRun) {
  Dataset ds;
  write_clean(ds);
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ValidateDatasetOptions options = ds.options();
  options.gpu = GpuChecks::enabled;
  const DatasetReport report = ds.validate(options);
  EXPECT_EQ(messages(report, "d1", Category::definition),
            Messages{I(codes::k_dataset_definition_reference_not_run,
                       "[fib] reference build not run: the reference worker is not available (fib "
                       "built without torch, or fib-worker failed to start; use --disable-gpu to "
                       "silence this)")});
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            (Messages{I(codes::k_dataset_baseline_solutions, "solution: b1"),
                      I(codes::k_dataset_baseline_build_not_run,
                        "[fib] baseline builds not run: the reference worker is not available "
                        "(use --disable-gpu to silence this)"),
                      W(codes::k_dataset_baseline_trace_missing, "trace missing")}));
  EXPECT_FALSE(report.definitions.at("d1")[Category::benchmark].has_value());
  EXPECT_EQ(status(report, "d1", Category::definition), CheckStatus::ok);
}

TEST(DatasetValidate, DisableGpuSkipsReferenceBuildAndBenchmark) {
  Dataset ds;
  write_clean(ds);
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ValidateDatasetOptions options = ds.options();
  options.checks = {"layout", "definition", "workload", "solution",
                    "trace",  "baseline",   "benchmark"};
  const DatasetReport report = ds.validate(options);
  EXPECT_EQ(report.config.checks.size(), 6u); // benchmark dropped silently
  for (const auto& [category, result] :
       {std::pair{Category::definition, messages(report, "d1", Category::definition)},
        std::pair{Category::baseline, messages(report, "d1", Category::baseline)}}) {
    for (const std::string& m : result) {
      EXPECT_FALSE(contains(m, "reference build")) << to_string(category) << ": " << m;
      EXPECT_FALSE(contains(m, "build b1")) << to_string(category) << ": " << m;
    }
  }
  EXPECT_FALSE(report.definitions.at("d1")[Category::benchmark].has_value());
  EXPECT_TRUE(contains(render_report_text(report), "  benchmark:   None (skipped)\n"));
}

// --- solution ------------------------------------------------------------------------------------

// Unparsed solutions are errors and do not count.
TEST(DatasetValidate, SolutionParseErrorAndCount) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "a_bad", R"({"name": "a_bad", "definition": "d1"})");
  ds.solution("alice", "d1", "b_good", solution_json("b_good", "d1", "alice"));
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::solution);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_solution_count, "1 solutions"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_schema_required, "a_bad: parse error: "))) << got[1];
  EXPECT_TRUE(contains(got[1], "validation error")) << got[1];
  // Unparsed solutions get no layout comparison.
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
}

// A model-level error of the Solution model (duplicate source paths) reads "Value error, …".
TEST(DatasetValidate, SolutionModelLevelErrorHasNoLocation) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", R"({"name": "s1", "definition": "d1", "author": "alice",
 "spec": {"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"},
 "sources": [{"path": "main.py", "content": "a = 1\n"}, {"path": "main.py", "content": "b = 2\n"}]})");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::solution);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(starts_with(got[1], E(codes::k_source_duplicate,
                                    "s1: parse error: 1 validation error for Solution\n  Value "
                                    "error, ")))
      << got[1];
  EXPECT_EQ(std::count(got[1].begin(), got[1].end(), '\n'), 1) << got[1];
}

TEST(DatasetValidate, SolutionsOnlyUnparsedCountZero) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", "{");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::solution);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_solution_count, "0 solutions"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_json_parse, "s1: parse error: "))) << got[1];
}

// --- trace ---------------------------------------------------------------------------------------

TEST(DatasetValidate, TraceParseError) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  ds.file("traces/alice/op/d1.jsonl", tr("w1", R"("s1")") + "\nnot json\n");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::trace);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(got[0], E(codes::k_json_parse, "alice: parse error: "))) << got[0];
  EXPECT_TRUE(got[0].ends_with(" (line 2)")) << got[0];
}

// The first mismatching line ends the file's checks; coverage still counts every line.
TEST(DatasetValidate, TraceDefinitionMismatchStopsFile) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  ds.traces("alice", "d1",
            {tr("w1", R"("s1")"), tr("w2", R"("s1")", passed_evaluation(), "x"), tr("w2", "null"),
             tr("w2", R"("unknown")")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::trace),
            Messages{E(codes::k_dataset_trace_definition_mismatch,
                       "alice: trace definition 'x' != 'd1'")});
}

// Trace lines without a solution or evaluation, and unknown solutions.
TEST(DatasetValidate, TraceMissingSolutionOrEvaluationAndUnknownSolution) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  ds.solution("alice", "d1", "s2", "{}"); // does not parse: not a known solution
  ds.traces(
      "alice", "d1",
      {
          tr("w1", "null"),
          fmt::format(
              R"({{"definition": "d1", "workload": {{"axes": {{"M": 2}}, "inputs": {}, "uuid": "w2"}}, "solution": "s1"}})",
              k_inputs),
          tr("w1", R"("nope")"),
          tr("w1", R"("")"),
          tr("w2", R"("s2")"),
          tr("w2", R"("s1")"),
      });
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::trace),
      (Messages{
          E(codes::k_trace_not_evaluated, "alice: trace entry w1 missing solution or evaluation"),
          E(codes::k_trace_not_evaluated, "alice: trace entry w2 missing solution or evaluation"),
          E(codes::k_dataset_trace_unknown_solution,
            "alice: trace references unknown solution 'nope'"),
          E(codes::k_dataset_trace_unknown_solution, "alice: trace references unknown solution ''"),
          E(codes::k_dataset_trace_unknown_solution,
            "alice: trace references unknown solution 's2'")}));
}

// Coverage of the workloads, and the fib warning for trace lines naming workloads not in the
// workload file.
TEST(DatasetValidate, TraceCoverageAndUnknownWorkloads) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), wl("w2"), wl("w3")});
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  ds.solution("bob", "d1", "s2", solution_json("s2", "d1", "bob"));
  ds.traces("alice", "d1", {tr("w1", R"("s1")", failed_evaluation()), tr("zz", R"("s1")")});
  ds.traces("bob", "d1", {tr("w1", R"("s2")"), tr("w2", R"("s2")"), tr("w3", R"("s2")")});
  ds.traces("carol", "d1", {}); // empty: no coverage check
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::trace);
  ASSERT_EQ(got.size(), 2u) << fmt::format("{}", fmt::join(got, "\n"));
  EXPECT_EQ(got[0], W(codes::k_dataset_trace_coverage, "alice missing 2/3 workloads"));
  EXPECT_TRUE(
      starts_with(got[1], W(codes::k_dataset_trace_unknown_workload, "[fib] alice: 1 trace ")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "zz")) << got[1];
  EXPECT_EQ(status(report, "d1", Category::trace), CheckStatus::warning);
}

// fib's warning for lines that repeat an earlier line's evaluation: the same solution, workload and
// settings (key order does not matter). Other settings, or none (the old tool's lines), differ.
TEST(DatasetValidate, TraceLinesThatRepeatAnEvaluationAreFlagged) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), wl("w2")});
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  const auto with_settings = [](std::string_view settings) {
    std::string e = passed_evaluation();
    e.insert(e.size() - 1, fmt::format(R"(, "settings": {})", settings));
    return e;
  };
  ds.traces("alice", "d1",
            {tr("w1", R"("s1")"), tr("w2", R"("s1")"),
             tr("w1", R"("s1")", with_settings(R"({"warmup": 3, "iterations": 10})")),
             tr("w1", R"("s1")"),
             tr("w1", R"("s1")", with_settings(R"({"iterations": 10, "warmup": 3})")),
             tr("w1", R"("s1")", with_settings(R"({"iterations": 20, "warmup": 3})")),
             tr("w2", R"("s1")")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::trace);
  ASSERT_EQ(got.size(), 1u) << fmt::format("{}", fmt::join(got, "\n"));
  EXPECT_EQ(got[0], W(codes::k_dataset_trace_duplicate,
                      "[fib] alice: 3 trace entries repeat an earlier entry's solution, workload "
                      "and settings (first: line 4 repeats line 1)"));
  EXPECT_EQ(status(report, "d1", Category::trace), CheckStatus::warning);
  const auto& result = report.definitions.find("d1")->second[Category::trace];
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->messages.at(0).where.line, 4u);
}

// --- baseline ------------------------------------------------------------------------------------

// A baseline trace without a baseline solution gives no "trace missing".
TEST(DatasetValidate, BaselineNoSolution) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            Messages{W(codes::k_dataset_baseline_none, "no baseline solution")});
}

// A baseline solution without a trace file; baseline solutions include unparsed ones.
TEST(DatasetValidate, BaselineTraceMissing) {
  Dataset ds;
  write_clean(ds);
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.solution("baseline", "d1", "b2", "{}");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            (Messages{I(codes::k_dataset_baseline_solutions, "solution: b1, b2"),
                      W(codes::k_dataset_baseline_trace_missing, "trace missing")}));
  EXPECT_EQ(status(report, "d1", Category::baseline), CheckStatus::warning);
}

TEST(DatasetValidate, BaselineTraceParseError) {
  Dataset ds;
  write_clean(ds);
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.file("traces/baseline/op/d1.jsonl", "{\n");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::baseline);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_baseline_solutions, "solution: b1"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_json_parse, "trace parse error: "))) << got[1];
}

// The baseline trace: foreign solutions, failing entries, and coverage counting uuids outside the
// workload set.
TEST(DatasetValidate, BaselineTraceContents) {
  Dataset ds;
  write_clean(ds); // w1, w2
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.solution("alice", "d1", "a1", solution_json("a1", "d1", "alice"));
  ds.traces("baseline", "d1",
            {tr("w1", R"("b1")", failed_evaluation()), tr("zz", R"("a1")"),
             tr("w1", R"("other")", failed_evaluation()), tr("w1", "null")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            (Messages{I(codes::k_dataset_baseline_solutions, "solution: b1"),
                      E(codes::k_dataset_baseline_foreign_solution,
                        "trace references non-baseline solution 'a1'"),
                      W(codes::k_dataset_baseline_trace_failing, "trace has 2 non-passing entries"),
                      W(codes::k_dataset_baseline_trace_coverage, "trace covers 2/2 workloads")}));
  EXPECT_EQ(status(report, "d1", Category::baseline), CheckStatus::error);
}

TEST(DatasetValidate, BaselineEmptyTraceAllPassed) {
  Dataset ds;
  write_clean(ds);
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.traces("baseline", "d1", {});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            (Messages{I(codes::k_dataset_baseline_solutions, "solution: b1"),
                      I(codes::k_dataset_baseline_trace_passed, "trace: all passed"),
                      W(codes::k_dataset_baseline_trace_coverage, "trace covers 0/2 workloads")}));
}

TEST(DatasetValidate, BaselineTraceWithoutWorkloadFileHasNoCoverage) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.solution("baseline", "d1", "b1", solution_json("b1", "d1", "baseline"));
  ds.traces("baseline", "d1", {tr("w1", R"("b1")")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            (Messages{I(codes::k_dataset_baseline_solutions, "solution: b1"),
                      I(codes::k_dataset_baseline_trace_passed, "trace: all passed")}));
  EXPECT_EQ(messages(report, "d1", Category::trace), Messages{});
}

} // namespace
} // namespace fib
