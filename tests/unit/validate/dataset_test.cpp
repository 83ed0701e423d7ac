// fib::validate_dataset on small datasets built in a temporary directory: every message of the old
// tool's validate (contract §3.2), its quirks (§5.B items 80–112), the status rules (§3.3), the
// report outputs (§3.5) and fib's own additions (the dataset-level section, constraints, blob
// dtypes, duplicate uuids, sharding and merging).
//
// Not tested here: §5.B items 113 (exit status) and 114 (`--outputs stdout` writes nothing); they
// are CLI behaviours covered by the golden CLI cases.

#include "test_support.hpp"
#include "util/parallel_for.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/dataset.hpp>
#include <fib/validate/report.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;
using Messages = std::vector<std::string>;

// --- Documents -----------------------------------------------------------------------------------

// A definition with every description set, so that the definition category is clean: var axis M,
// const axis N = 4, tensor input A [M, N], scalar input s, output C [M, N].
struct DefSpec {
  std::string name = "d1";
  std::string op_type = "op";
  std::string description = R"("description": "test definition", )";
  std::string axes =
      R"({"M": {"type": "var", "description": "rows"}, "N": {"type": "const", "value": 4, "description": "cols"}})";
  std::string inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "s": {"shape": null, "dtype": "float32", "description": "scale"}})";
  std::string outputs = R"({"C": {"shape": ["M", "N"], "dtype": "float32", "description": "c"}})";
  std::string reference = R"(def run(A, s):\n    return A\n)"; // JSON-escaped
  std::string extra;                                           // e.g. `, "constraints": [...]`
};

std::string definition_json(const DefSpec& s) {
  return fmt::format(
      R"({{"name": "{}", "op_type": "{}", {}"axes": {}, "inputs": {}, "outputs": {}, "reference": "{}"{}}})",
      s.name, s.op_type, s.description, s.axes, s.inputs, s.outputs, s.reference, s.extra);
}

std::string definition_json(std::string_view name, std::string_view op_type = "op") {
  DefSpec s;
  s.name = name;
  s.op_type = op_type;
  return definition_json(s);
}

constexpr std::string_view k_inputs =
    R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": 1.5}})";

// A workloads/ line. `tail` is appended inside the outer object (e.g. a solution).
std::string wl(std::string_view uuid, std::string_view axes = R"({"M": 2})",
               std::string_view inputs = k_inputs, std::string_view definition = "d1",
               std::string_view tail = R"(, "solution": null, "evaluation": null)") {
  return fmt::format(
      R"({{"definition": "{}", "workload": {{"axes": {}, "inputs": {}, "uuid": "{}"}}{}}})",
      definition, axes, inputs, uuid, tail);
}

std::string passed_evaluation() {
  return R"({"status": "PASSED", "environment": {"hardware": "cpu"}, "timestamp": "2026-01-01T00:00:00Z", "correctness": {"max_relative_error": 0.0, "max_absolute_error": 0.0}, "performance": {"latency_ms": 1.0, "reference_latency_ms": 1.0, "speedup_factor": 1.0}})";
}

std::string failed_evaluation() {
  return R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "cpu"}, "timestamp": "2026-01-01T00:00:00Z", "log": "boom"})";
}

// A traces/ line: solution `solution` (a JSON value: "\"s1\"" or "null") evaluated on `uuid`.
std::string tr(std::string_view uuid, std::string_view solution_value,
               const std::string& evaluation = passed_evaluation(),
               std::string_view definition = "d1") {
  return fmt::format(
      R"({{"definition": "{}", "workload": {{"axes": {{"M": 2}}, "inputs": {}, "uuid": "{}"}}, "solution": {}, "evaluation": {}}})",
      definition, k_inputs, uuid, solution_value, evaluation);
}

std::string solution_json(std::string_view name, std::string_view definition,
                          std::string_view author) {
  return fmt::format(
      R"({{"name": "{}", "definition": "{}", "author": "{}",
 "spec": {{"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A, s):\n    return A\n"}}]}})",
      name, definition, author);
}

std::string lines(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += item + "\n";
  }
  return out;
}

// --- Safetensors files, byte by byte -------------------------------------------------------------

struct BlobTensor {
  std::string key;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;
};

std::string f32_bytes(const std::vector<float>& values) {
  std::string out;
  for (const float v : values) {
    const auto bits = std::bit_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((bits >> (8 * i)) & 0xffu));
    }
  }
  return out;
}

std::string i32_bytes(const std::vector<std::int32_t>& values) {
  std::string out;
  for (const std::int32_t v : values) {
    const auto bits = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((bits >> (8 * i)) & 0xffu));
    }
  }
  return out;
}

// 8-byte little-endian header length, the JSON header, then the data section.
std::string safetensors_file(const std::vector<BlobTensor>& tensors) {
  std::string header = "{";
  std::string data;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const BlobTensor& t = tensors[i];
    header += fmt::format(R"({}"{}": {{"dtype": "{}", "shape": [{}], "data_offsets": [{}, {}]}})",
                          i == 0 ? "" : ", ", t.key, t.dtype, fmt::join(t.shape, ", "), data.size(),
                          data.size() + t.bytes.size());
    data += t.bytes;
  }
  header += "}";
  std::string out;
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xffu));
  }
  return out + header + data;
}

// --- The dataset under test ----------------------------------------------------------------------

class Dataset {
public:
  const std::filesystem::path& root() const { return m_dir.path(); }
  std::string path(std::string_view relative) const { return (root() / relative).string(); }

  void file(std::string_view relative, std::string_view content) const {
    m_dir.write(relative, content);
  }
  void definition(std::string_view name, const std::string& json,
                  std::string_view op_type = "op") const {
    file(fmt::format("definitions/{}/{}.json", op_type, name), json);
  }
  void definition(const DefSpec& spec) const {
    definition(spec.name, definition_json(spec), spec.op_type);
  }
  void workloads(std::string_view name, const std::vector<std::string>& items,
                 std::string_view op_type = "op") const {
    file(fmt::format("workloads/{}/{}.jsonl", op_type, name), lines(items));
  }
  void solution(std::string_view author, std::string_view definition, std::string_view name,
                const std::string& json, std::string_view op_type = "op") const {
    file(fmt::format("solutions/{}/{}/{}/{}.json", author, op_type, definition, name), json);
  }
  void traces(std::string_view author, std::string_view definition,
              const std::vector<std::string>& items, std::string_view op_type = "op") const {
    file(fmt::format("traces/{}/{}/{}.jsonl", author, op_type, definition), lines(items));
  }

  ValidateDatasetOptions options() const {
    ValidateDatasetOptions o;
    o.root = root();
    o.gpu = GpuChecks::disabled;
    return o;
  }
  DatasetReport validate(const ValidateDatasetOptions& o) const {
    DiagnosticList environment;
    DatasetReport report = validate_dataset(o, testing::python(), environment);
    EXPECT_FALSE(environment.has_errors());
    return report;
  }
  DatasetReport validate() const { return validate(options()); }

private:
  TempDir m_dir;
};

// "I[CODE]: …", "W[CODE]: …", "E[CODE]: …" for each message of one category (a readable diff on
// failure): every expectation below asserts the level, the code and the old tool's text.
Messages messages_of(const CheckResult& result) {
  Messages out;
  for (const CheckMessage& m : result.messages) {
    const char* level = m.level == CheckLevel::info      ? "I"
                        : m.level == CheckLevel::warning ? "W"
                                                         : "E";
    out.push_back(fmt::format("{}[{}]: {}", level, m.code, m.message));
  }
  return out;
}

// An expected message: info, warning or error with `code` and `text`.
std::string I(std::string_view code, std::string_view text) {
  return fmt::format("I[{}]: {}", code, text);
}
std::string W(std::string_view code, std::string_view text) {
  return fmt::format("W[{}]: {}", code, text);
}
std::string E(std::string_view code, std::string_view text) {
  return fmt::format("E[{}]: {}", code, text);
}

Messages messages(const DatasetReport& report, const std::string& definition, Category category) {
  const auto it = report.definitions.find(definition);
  if (it == report.definitions.end()) {
    ADD_FAILURE() << "no report entry for " << definition;
    return {};
  }
  const auto& result = it->second[category];
  if (!result) {
    ADD_FAILURE() << "category " << to_string(category) << " did not run";
    return {};
  }
  return messages_of(*result);
}

CheckStatus status(const DatasetReport& report, const std::string& definition, Category category) {
  const auto it = report.definitions.find(definition);
  if (it == report.definitions.end() || !it->second[category]) {
    ADD_FAILURE() << "no result for " << definition << "/" << to_string(category);
    return CheckStatus::ok;
  }
  return it->second[category]->status;
}

CheckStatus status(const DatasetReport& report, const std::string& definition) {
  const auto it = report.definitions.find(definition);
  if (it == report.definitions.end()) {
    ADD_FAILURE() << "no report entry for " << definition;
    return CheckStatus::ok;
  }
  return it->second.status;
}

Messages dataset_messages(const DatasetReport& report) {
  return report.dataset ? messages_of(*report.dataset) : Messages{};
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A clean definition d1 with two valid workloads.
void write_clean(const Dataset& ds) {
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), wl("w2", R"({"M": 3})")});
}

// --- A clean dataset and the status rules (§3.3) -------------------------------------------------

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

// --- layout (§3.2 layout 1–6) --------------------------------------------------------------------

// Layout 1, item 82: the later of two same-stem definitions is kept, with the duplicate error.
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
  // The later file's Definition is still kept (§1.2), so its workloads are checked against it.
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

// Layout 2, items 83 and 84.
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

// Layout 3: the workload file's op_type directory, and only the first mismatching line.
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

// Layout 4 and solution 2, item 99: both categories report path/JSON mismatches; the op_type
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

// Layout 5: the trace file's op_type directory, and only the first mismatching line.
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

// Layout 6 and workload h, item 95: a missing blob is reported in both categories; fib reports it
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
// the workload category skips the line's blob checks after "extra inputs" (item 93).
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

// --- definition (§3.2 definition 1–5) ------------------------------------------------------------

// Definition 1, item 85: a model-validator error; the workload category cannot run.
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

// §1.2: rglob("*.json") matches a directory too; reading it is that entry's parse error.
TEST(DatasetValidate, DirectoryNamedLikeDefinitionIsParseError) {
  Dataset ds;
  std::filesystem::create_directories(ds.root() / "definitions" / "op" / "dir.json");
  const DatasetReport report = ds.validate();
  ASSERT_TRUE(report.definitions.contains("dir"));
  const Messages got = messages(report, "dir", Category::definition);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(got[0], E(codes::k_io_read, "parse error: "))) << got[0];
}

// Definition 2–5, item 86: one warning each, in order.
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

// Item 109: with GPU checks disabled there is no reference build message and no benchmark.
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

// --- workload (§3.2 workload 1–5) ----------------------------------------------------------------

// Workload 1, item 87.
TEST(DatasetValidate, WorkloadFileMissing) {
  Dataset ds;
  ds.definition(DefSpec{});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{W(codes::k_dataset_workload_no_file, "no workload file found")});
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::warning);
}

// Workload 2, item 88: one bad line fails the whole file; the line number counts blank lines.
TEST(DatasetValidate, WorkloadParseErrorFailsWholeFile) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("workloads/op/d1.jsonl",
          wl("w1") + "\n\n" + R"({"definition": "d1",)" + "\n" + wl("w2") + "\n");
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(got[0], E(codes::k_json_parse, "parse error: "))) << got[0];
  EXPECT_TRUE(got[0].ends_with(" (line 3)")) << got[0];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::error);
}

TEST(DatasetValidate, WorkloadSchemaErrorOnLine) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), R"({"definition": "d1", "workload": {"axes": {"M": 2}}})"});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(starts_with(
      got[0], E(codes::k_schema_required, "parse error: 2 validation errors for Trace")))
      << got[0];
  EXPECT_TRUE(got[0].ends_with(" (line 2)")) << got[0];
}

// Workload 4a, item 89.
TEST(DatasetValidate, WorkloadLineWithSolutionOrEvaluation) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1",
               {wl("w1", R"({"M": 2})", k_inputs, "d1",
                   fmt::format(R"(, "solution": "s1", "evaluation": {})", passed_evaluation())),
                wl("w2")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1/2 valid"),
                      E(codes::k_workload_not_workload_only,
                        "w1: workload entry should not have solution or evaluation")}));
}

// Workload 4b–d, items 90–92.
TEST(DatasetValidate, WorkloadAxesChecks) {
  Dataset ds;
  DefSpec spec;
  spec.axes =
      R"({"M": {"type": "var", "description": "m"}, "K": {"type": "var", "description": "k"}, "N": {"type": "const", "value": 4, "description": "n"}})";
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "s": {"shape": ["K"], "dtype": "float32", "description": "s"}})";
  ds.definition(spec);
  const std::string inputs = R"({"A": {"type": "random"}, "s": {"type": "random"}})";
  ds.workloads("d1", {
                         wl("missing", R"({"M": 2})", inputs),
                         wl("extra", R"({"M": 2, "K": 1, "N": 4, "Z": 1})", inputs),
                         wl("zero", R"({"M": 0, "K": 0})", inputs),
                         wl("ok", R"({"K": 3, "M": 2})", inputs),
                     });
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::workload),
      (Messages{I(codes::k_dataset_workload_valid_count, "1/4 valid"),
                E(codes::k_dataset_workload_missing_axes, "missing: missing axes ['K']"),
                E(codes::k_dataset_workload_extra_axes, "extra: extra axes ['N', 'Z']"),
                E(codes::k_dataset_workload_axis_value, "zero: axis M has non-positive value 0"),
                E(codes::k_dataset_workload_axis_value, "zero: axis K has non-positive value 0")}));
}

// Workload 4e, item 93: mismatched input names skip the line's type and blob checks.
TEST(DatasetValidate, WorkloadInputNameChecks) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          R"({"A": {"type": "scalar", "value": 1}, "t": {"type": "random"}, "b": {"type": "random"}})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_missing_inputs, "w1: missing inputs ['s']"),
                      E(codes::k_dataset_workload_extra_inputs, "w1: extra inputs ['b', 't']")}));
}

// Workload 4h, item 94: input kinds against the definition's shapes.
TEST(DatasetValidate, WorkloadInputKindChecks) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "s": {"shape": null, "dtype": "float32", "description": "scale"}, "z": {"shape": [], "dtype": "float32", "description": "0-d"}})";
  spec.reference = R"(def run(A, s, z):\n    return A\n)";
  ds.definition(spec);
  ds.workloads(
      "d1",
      {
          wl("scalar_for_tensor", R"({"M": 2})",
             R"({"A": {"type": "scalar", "value": 1}, "s": {"type": "scalar", "value": 1}, "z": {"type": "random"}})"),
          wl("random_for_scalar", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "random"}, "z": {"type": "random"}})"),
          wl("blob_for_scalar", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "safetensors", "path": "blob/none.safetensors", "tensor_key": "s"}, "z": {"type": "random"}})"),
          wl("scalar_for_0d", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": 1}, "z": {"type": "scalar", "value": 2.0}})"),
          wl("ok", R"({"M": 2})",
             R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": true}, "z": {"type": "random"}})"),
      });
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1/5 valid"),
                      E(codes::k_dataset_workload_input_kind,
                        "scalar_for_tensor: A is scalar but definition expects tensor"),
                      E(codes::k_dataset_workload_input_kind,
                        "random_for_scalar: s is random but definition expects scalar"),
                      E(codes::k_dataset_workload_input_kind,
                        "blob_for_scalar: s is safetensors but definition expects scalar"),
                      E(codes::k_dataset_workload_input_kind,
                        "scalar_for_0d: z is scalar but definition expects tensor")}));
  // The scalar input's blob is still missing as far as layout is concerned.
  EXPECT_EQ(messages(report, "d1", Category::layout),
            Messages{E(codes::k_blob_not_found,
                       "workload blob_for_scalar: blob missing at blob/none.safetensors")});
}

// Workload 5, item 98: "N valid", "v/N valid", and "0 valid" for an empty file.
TEST(DatasetValidate, WorkloadValidCountForEmptyFile) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("workloads/op/d1.jsonl", "\n  \n");
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "0 valid")});
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::ok);
}

// Item 97 (old tool: no error) and fib's warning for a repeated uuid.
TEST(DatasetValidate, DuplicateWorkloadUuidIsFibWarning) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), wl("w2"), wl("w1", R"({"M": 5})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "3 valid"),
                      W(codes::k_dataset_workload_duplicate_uuid,
                        "[fib] duplicate workload uuid w1 on lines 1 and 3")}));
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::warning);
}

// --- Blobs (§3.2 workload h, items 95 and 96) ----------------------------------------------------

class DatasetBlob : public ::testing::Test {
protected:
  void SetUp() override { m_ds.definition(DefSpec{}); }

  // One workload line w1 (M = 2) whose A comes from blob/w1.safetensors, key `key`.
  DatasetReport validate_with_blob(std::string_view key = "A") {
    m_ds.workloads(
        "d1",
        {wl("w1", R"({"M": 2})",
            fmt::format(
                R"({{"A": {{"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "{}"}}, "s": {{"type": "scalar", "value": 1}}}})",
                key))});
    return m_ds.validate();
  }

  Dataset m_ds;
};

TEST_F(DatasetBlob, PresentBlobWithRightShapeAndDtypeIsValid) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  EXPECT_EQ(messages(report, "d1", Category::workload),
            Messages{I(codes::k_dataset_workload_valid_count, "1 valid")});
}

TEST_F(DatasetBlob, WrongShapeIsOldToolError) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "F32", {4, 2}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_blob_shape,
                        "w1: A shape mismatch: expected (2, 4), got (4, 2)")}));
}

TEST(DatasetValidate, ShapeMismatchUsesPythonTupleRepr) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M"], "dtype": "float32", "description": "a"}, "z": {"shape": [], "dtype": "float32", "description": "z"}})";
  spec.outputs = R"({"C": {"shape": ["M", "N"], "dtype": "float32", "description": "c"}})";
  spec.reference = R"(def run(A, z):\n    return A\n)";
  ds.definition(spec);
  ds.file("blob/w1.safetensors", safetensors_file({{"A", "F32", {3}, f32_bytes({1, 2, 3})},
                                                   {"z", "F32", {1}, f32_bytes({1})}}));
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          R"({"A": {"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "A"}, "z": {"type": "safetensors", "path": "blob/w1.safetensors", "tensor_key": "z"}})")});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(
      messages(report, "d1", Category::workload),
      (Messages{
          I(codes::k_dataset_workload_valid_count, "0/1 valid"),
          E(codes::k_dataset_workload_blob_shape, "w1: A shape mismatch: expected (2,), got (3,)"),
          E(codes::k_dataset_workload_blob_shape, "w1: z shape mismatch: expected (), got (1,)")}));
}

// Item 96: the old tool does not check blob dtypes; fib does, as an error of its own. The old
// tool's "N valid" count is unchanged by it.
TEST_F(DatasetBlob, WrongDtypeIsFibError) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "I32", {2, 4}, i32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "1 valid"));
  EXPECT_TRUE(
      starts_with(got[1], E(codes::k_dataset_workload_blob_dtype, "[fib] w1: A dtype mismatch")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "float32")) << got[1];
  EXPECT_TRUE(contains(got[1], "I32")) << got[1];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::error);
}

TEST_F(DatasetBlob, MissingKey) {
  m_ds.file("blob/w1.safetensors",
            safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const DatasetReport report = validate_with_blob("nope");
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "0/1 valid"),
                      E(codes::k_dataset_workload_tensor_key,
                        "w1: tensor key 'nope' not found in blob/w1.safetensors")}));
}

TEST_F(DatasetBlob, GitLfsPointerIsBlobLoadFailure) {
  m_ds.file("blob/w1.safetensors", "version https://git-lfs.github.com/spec/v1\n"
                                   "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2"
                                   "ca24d17e2393\nsize 12345\n");
  const DatasetReport report = validate_with_blob();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{}); // the file exists
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "0/1 valid"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_blob_lfs_pointer, "w1: blob load failed: ")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "LFS")) << got[1];
}

TEST_F(DatasetBlob, TruncatedFileIsBlobLoadFailure) {
  m_ds.file("blob/w1.safetensors", "abc");
  const DatasetReport report = validate_with_blob();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(starts_with(got[1], E(codes::k_blob_malformed, "w1: blob load failed: "))) << got[1];
}

// §1.3: an absolute blob path is used as-is.
TEST(DatasetValidate, AbsoluteBlobPath) {
  Dataset ds;
  ds.definition(DefSpec{});
  TempDir elsewhere;
  const auto blob = elsewhere.write(
      "x.safetensors",
      safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  ds.workloads(
      "d1",
      {wl("w1", R"({"M": 2})",
          fmt::format(
              R"({{"A": {{"type": "safetensors", "path": "{}", "tensor_key": "A"}}, "s": {{"type": "scalar", "value": 1}}}})",
              blob.string()))});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::layout), Messages{});
  // Read all the same, but fib warns: the blob is not part of the dataset.
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1 valid"),
                      W(codes::k_dataset_workload_blob_outside,
                        fmt::format("[fib] w1: blob path '{}' points outside the dataset",
                                    blob.string()))}));
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::warning);
}

// A ".." component: joined with the root and read, as the old tool does, with fib's warning once
// per (uuid, path), also on lines whose other checks fail.
TEST(DatasetValidate, DotDotBlobPathWarnsOncePerUuidAndPath) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "B": {"shape": ["M", "N"], "dtype": "float32", "description": "b"}})";
  spec.reference = R"(def run(A, B):\n    return A\n)";
  ds.definition(spec);
  ds.file("blob/w.safetensors",
          safetensors_file({{"A", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})},
                            {"B", "F32", {2, 4}, f32_bytes({0, 1, 2, 3, 4, 5, 6, 7})}}));
  const std::string inputs =
      R"({"A": {"type": "safetensors", "path": "blob/../blob/w.safetensors", "tensor_key": "A"}, "B": {"type": "safetensors", "path": "blob/../blob/w.safetensors", "tensor_key": "B"}})";
  const std::string inside =
      R"({"A": {"type": "safetensors", "path": "blob/w.safetensors", "tensor_key": "A"}, "B": {"type": "safetensors", "path": "blob/..w.safetensors", "tensor_key": "B"}})";
  ds.workloads("d1", {wl("w1", R"({"M": 2})", inputs), wl("w2", R"({"M": 2, "K": 1})", inputs),
                      wl("w3", R"({"M": 2})", inside)});
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::workload),
            (Messages{I(codes::k_dataset_workload_valid_count, "1/3 valid"),
                      W(codes::k_dataset_workload_blob_outside,
                        "[fib] w1: blob path 'blob/../blob/w.safetensors' points outside the "
                        "dataset"),
                      W(codes::k_dataset_workload_blob_outside,
                        "[fib] w2: blob path 'blob/../blob/w.safetensors' points outside the "
                        "dataset"),
                      E(codes::k_dataset_workload_extra_axes, "w2: extra axes ['K']"),
                      E(codes::k_blob_not_found, "w3: blob missing at blob/..w.safetensors")}));
}

// --- Constraints (fib) ---------------------------------------------------------------------------

TEST(DatasetValidate, ConstraintsHoldOrFail) {
  Dataset ds;
  DefSpec spec;
  spec.extra = R"(, "constraints": ["M <= 8"])";
  ds.definition(spec);
  ds.workloads("d1", {wl("w1"), wl("w2", R"({"M": 16})")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u) << fmt::format("{}", fmt::join(got, "\n"));
  // Constraints are fib's; the old tool's count is unchanged.
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "2 valid"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_dataset_workload_constraint_violated,
                                    "[fib] w2: constraint 'M <= 8' does not hold: ")))
      << got[1];
  EXPECT_TRUE(contains(got[1], "M=16")) << got[1];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::error);
}

TEST(DatasetValidate, ConstraintOnBlobDataIsEvaluated) {
  Dataset ds;
  DefSpec spec;
  spec.inputs =
      R"({"A": {"shape": ["M", "N"], "dtype": "float32", "description": "a"}, "idx": {"shape": ["L"], "dtype": "int32", "description": "indptr"}})";
  spec.axes =
      R"({"M": {"type": "var", "description": "rows"}, "L": {"type": "var", "description": "len"}, "N": {"type": "const", "value": 4, "description": "cols"}})";
  spec.reference = R"(def run(A, idx):\n    return A\n)";
  spec.extra = R"(, "constraints": ["idx[-1].item() == M"])";
  ds.definition(spec);
  ds.file("blob/good.safetensors", safetensors_file({{"idx", "I32", {2}, i32_bytes({0, 2})}}));
  ds.file("blob/bad.safetensors", safetensors_file({{"idx", "I32", {2}, i32_bytes({0, 5})}}));
  const auto inputs = [](std::string_view blob) {
    return fmt::format(
        R"({{"A": {{"type": "random"}}, "idx": {{"type": "safetensors", "path": "blob/{}.safetensors", "tensor_key": "idx"}}}})",
        blob);
  };
  ds.workloads("d1", {wl("good", R"({"M": 2, "L": 2})", inputs("good")),
                      wl("bad", R"({"M": 2, "L": 2})", inputs("bad")),
                      wl("rand", R"({"M": 2, "L": 2})",
                         R"({"A": {"type": "random"}, "idx": {"type": "random"}})"),
                      wl("gone", R"({"M": 2, "L": 2})", inputs("gone"))});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 4u) << fmt::format("{}", fmt::join(got, "\n"));
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "3/4 valid"));
  EXPECT_TRUE(starts_with(got[1], E(codes::k_dataset_workload_constraint_violated,
                                    "[fib] bad: constraint 'idx[-1].item() == M' does not hold: ")))
      << got[1];
  // The missing blob makes its line invalid, but constraints still run on it: the one reading the
  // blob's data is "not evaluated" there, as on the line whose tensor is random.
  EXPECT_EQ(got[2], E(codes::k_blob_not_found, "gone: blob missing at blob/gone.safetensors"));
  EXPECT_TRUE(starts_with(got[3], I(codes::k_dataset_workload_constraint_not_evaluated,
                                    "[fib] constraint 'idx[-1].item() == M' not evaluated on 2 "
                                    "of 4 workloads: ")))
      << got[3];
  EXPECT_TRUE(contains(got[3], "idx")) << got[3];
}

// Echoed constraint text is cut to 80 characters (77 and "..."); short ones are kept whole.
TEST(DatasetValidate, LongConstraintTextIsCut) {
  Dataset ds;
  DefSpec spec;
  const std::string violated = "M <= 8 and " + std::string(90, ' ') + "M >= 1";
  const std::string unknown = "foo(M) > 0 and M " + std::string(100, ' ') + "> 0";
  spec.extra = fmt::format(R"(, "constraints": ["{}", "{}"])", violated, unknown);
  ds.definition(spec);
  ds.workloads("d1", {wl("w1", R"({"M": 16})")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 3u) << fmt::format("{}", fmt::join(got, "\n"));
  const std::string cut_violated = violated.substr(0, 77) + "...";
  const std::string cut_unknown = unknown.substr(0, 77) + "...";
  EXPECT_TRUE(starts_with(
      got[1], E(codes::k_dataset_workload_constraint_violated,
                fmt::format("[fib] w1: constraint '{}' does not hold: ", cut_violated))))
      << got[1];
  EXPECT_TRUE(starts_with(
      got[2],
      I(codes::k_dataset_workload_constraint_not_evaluated,
        fmt::format("[fib] constraint '{}' not evaluated on 1 of 1 workloads: ", cut_unknown))))
      << got[2];
}

TEST(DatasetValidate, ConstraintNotEvaluableIsInfo) {
  Dataset ds;
  DefSpec spec;
  spec.extra = R"(, "constraints": ["M <= 8", "foo(M) > 0"])";
  ds.definition(spec);
  ds.workloads("d1", {wl("w1"), wl("w2", R"({"M": 3})")});
  const DatasetReport report = ds.validate();
  const Messages got = messages(report, "d1", Category::workload);
  ASSERT_EQ(got.size(), 2u) << fmt::format("{}", fmt::join(got, "\n"));
  EXPECT_EQ(got[0], I(codes::k_dataset_workload_valid_count, "2 valid"));
  EXPECT_TRUE(starts_with(got[1], I(codes::k_dataset_workload_constraint_not_evaluated,
                                    "[fib] constraint 'foo(M) > 0' not evaluated on 2 of 2 "
                                    "workloads: ")))
      << got[1];
  EXPECT_EQ(status(report, "d1", Category::workload), CheckStatus::ok);
}

// --- solution (§3.2 solution) --------------------------------------------------------------------

// Solution 1–3, item 100: unparsed entries are errors and do not count.
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

// --- trace (§3.2 trace) --------------------------------------------------------------------------

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

// Item 103: the first mismatching line ends the file's checks; coverage still counts every line.
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

// Items 101 and 102.
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

// Item 104, and the fib warning for trace lines naming workloads not in the workload file.
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

// --- baseline (§3.2 baseline) --------------------------------------------------------------------

// Item 105: a baseline trace without a baseline solution gives no "trace missing".
TEST(DatasetValidate, BaselineNoSolution) {
  Dataset ds;
  write_clean(ds);
  ds.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
  const DatasetReport report = ds.validate();
  EXPECT_EQ(messages(report, "d1", Category::baseline),
            Messages{W(codes::k_dataset_baseline_none, "no baseline solution")});
}

// Item 106; baseline solutions include unparsed ones.
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

// Items 107 and 108, and coverage counting uuids outside the workload set.
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

// --- Scanning quirks (§1.2, items 80, 81, 112) and fib's dataset-level section ------------------

// Item 80: files at the wrong depth are invisible to every definition's report; fib lists them.
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

// Item 81: a flat dataset has no definitions at all.
TEST(DatasetValidate, FlatDatasetHasNoDefinitions) {
  Dataset ds;
  ds.file("definitions/d1.json", definition_json("d1"));
  ds.file("workloads/d1.jsonl", lines({wl("w1")}));
  const DatasetReport report = ds.validate();
  EXPECT_TRUE(report.definitions.empty());
  EXPECT_TRUE(contains(render_report_text(report), "\n0 definitions: 0 ok, 0 warning, 0 error\n"));
}

// §1.2 orphans: the old tool never reports them; fib's dataset section does.
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

// §1.2: a workload file with the same stem in another op_type directory silently replaces the
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

// Item 112: the filters are united; unknown values select nothing.
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

  options.op_types = {"nope"};
  options.definitions = {"missing"};
  report = ds.validate(options);
  EXPECT_TRUE(report.definitions.empty());
}

// --- Item 110: unknown checks and output targets -------------------------------------------------

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

// --- Item 111: report files are never replaced ---------------------------------------------------

TEST(DatasetValidate, ReportFilesAreNeverReplaced) {
  TempDir dir;
  const ReportFiles files = report_files(dir.path() / "reports", "20260101-120000");
  EXPECT_EQ(files.json, dir.path() / "reports" / "report-20260101-120000.json");
  EXPECT_EQ(files.text, dir.path() / "reports" / "report-20260101-120000.txt");
  const ReportTargets all;
  EXPECT_FALSE(check_report_files_free(files, all).has_value());

  DatasetReport report;
  report.config.dataset = "/data";
  report.config.checks = {"layout"};
  EXPECT_FALSE(write_report_files(report, files, all).has_value());
  EXPECT_TRUE(std::filesystem::exists(files.json));
  EXPECT_TRUE(std::filesystem::exists(files.text));

  const auto taken = check_report_files_free(files, all);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->code, codes::k_report_exists);
  EXPECT_EQ(taken->message, "report file already exists: " + files.json.string());
  const auto again = write_report_files(report, files, all);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->code, codes::k_report_exists);

  // Only enabled targets count.
  std::filesystem::remove(files.text);
  EXPECT_FALSE(check_report_files_free(files, ReportTargets{true, false, true}).has_value());
  const auto text_only = check_report_files_free(files, ReportTargets{false, true, false});
  ASSERT_TRUE(text_only.has_value());
  EXPECT_EQ(text_only->message, "report file already exists: " + files.json.string());
}

// --- Sharding and merging ------------------------------------------------------------------------

void write_many(const Dataset& ds, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string name = fmt::format("def{:02}", i);
    ds.definition(name, definition_json(name));
    if (i % 2 == 0) {
      ds.workloads(
          name, {wl("w1", R"({"M": 2})", k_inputs, name), wl("w2", R"({"M": 0})", k_inputs, name)});
    }
  }
  ds.workloads("ghost", {wl("w1", R"({"M": 2})", k_inputs, "ghost")});
  ds.file("definitions/flat.json", definition_json("flat"));
}

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

// More definitions than one chunk holds (64): every definition gets its own files, in order, and
// progress counts across chunks.
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
    last = std::max(last, done);
  };
  const DatasetReport report = ds.validate(options);
  EXPECT_EQ(calls, static_cast<std::size_t>(k_count));
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

// --- Report rendering (§3.5) ---------------------------------------------------------------------

// A category result of (code, text) messages, each at the default level of its code.
CheckResult result(std::vector<std::pair<std::string_view, std::string>> items) {
  CheckResult r;
  for (auto& [code, text] : items) {
    r.add(code, std::move(text));
  }
  return r;
}

// The illustrative example of the old tool's text report.
DatasetReport example_report() {
  DatasetReport report;
  report.config.dataset = "/data/fit";
  report.config.checks = {"layout", "definition", "workload", "solution", "trace", "baseline"};
  report.config.disable_gpu = true;
  DefinitionReport gemm;
  gemm[Category::layout] = result({});
  gemm[Category::definition] =
      result({{codes::k_description_missing, "missing description: axes.M"}});
  gemm[Category::workload] =
      result({{codes::k_dataset_workload_valid_count, "2/3 valid"},
              {codes::k_dataset_workload_extra_axes, "w3: extra axes ['N']"}});
  gemm[Category::solution] = result({{codes::k_dataset_solution_none, "no solutions"}});
  gemm[Category::trace] = result({{codes::k_dataset_trace_none, "no trace files"}});
  gemm[Category::baseline] = result({{codes::k_dataset_baseline_none, "no baseline solution"}});
  gemm.update_status();
  DefinitionReport rms;
  rms[Category::layout] = result({});
  rms[Category::definition] = result({});
  rms[Category::workload] = result({{codes::k_dataset_workload_valid_count, "2 valid"}});
  rms[Category::solution] = result({{codes::k_dataset_solution_count, "1 solutions"}});
  rms[Category::trace] = result({});
  rms[Category::baseline] =
      result({{codes::k_dataset_baseline_solutions, "solution: fi_rmsnorm"},
              {codes::k_dataset_baseline_trace_passed, "trace: all passed"},
              {codes::k_dataset_baseline_trace_covered, "trace: 2/2 workloads"}});
  rms.update_status();
  report.definitions.emplace("rmsnorm_h128", std::move(rms));
  report.definitions.emplace("gemm_n64_k64", std::move(gemm));
  return report;
}

TEST(DatasetReportRender, StatusIsWorstCategory) {
  const DatasetReport report = example_report();
  EXPECT_EQ(report.definitions.at("gemm_n64_k64").status, CheckStatus::error);
  EXPECT_EQ(report.definitions.at("rmsnorm_h128").status, CheckStatus::ok);
  const StatusCounts counts = count_statuses(report);
  EXPECT_EQ(counts.ok, 1u);
  EXPECT_EQ(counts.warning, 0u);
  EXPECT_EQ(counts.error, 1u);
  // Info never affects a status.
  EXPECT_EQ(result({{codes::k_dataset_solution_none, "x"}}).status, CheckStatus::ok);
  CheckResult front = result({{codes::k_dataset_baseline_none, "w"}});
  front.add_front(codes::k_dataset_workload_valid_count, "first");
  EXPECT_EQ(messages_of(front), (Messages{I(codes::k_dataset_workload_valid_count, "first"),
                                          W(codes::k_dataset_baseline_none, "w")}));
  EXPECT_EQ(front.status, CheckStatus::warning);
  // An explicit level wins over the code's default (a diagnostic passed through).
  CheckResult explicit_level;
  explicit_level.add(CheckLevel::error, codes::k_axis_unused, "e");
  EXPECT_EQ(explicit_level.status, CheckStatus::error);
}

TEST(DatasetReportRender, TextMatchesContractExample) {
  const std::string expected = R"(=== Dataset Validation Report ===
dataset:       /data/fit
checks:        layout, definition, workload, solution, trace, baseline
disable_gpu:   True
op_types:      (all)
definitions:   (all)

2 definitions: 1 ok, 0 warning, 1 error

--- gemm_n64_k64 [ERROR] ---
  layout:      ok
  definition:  warning
    - missing description: axes.M
  workload:    error
    - 2/3 valid
    - w3: extra axes ['N']
  solution:    ok
    - no solutions
  trace:       ok
    - no trace files
  baseline:    warning
    - no baseline solution
  benchmark:   None (skipped)

--- rmsnorm_h128 [OK] ---
  layout:      ok
  definition:  ok
  workload:    ok
    - 2 valid
  solution:    ok
    - 1 solutions
  trace:       ok
  baseline:    ok
    - solution: fi_rmsnorm
    - trace: all passed
    - trace: 2/2 workloads
  benchmark:   None (skipped)
)";
  const std::string text = render_report_text(example_report());
  EXPECT_EQ(text, expected);
  // Lines joined with "\n", the last one empty: exactly one trailing newline (contract §3.5).
  EXPECT_TRUE(text.ends_with("skipped)\n"));
  EXPECT_FALSE(text.ends_with("\n\n"));
}

TEST(DatasetReportRender, TextHeaderFiltersFalseGpuAndMultilineMessages) {
  DatasetReport report;
  report.config.dataset = "ds";
  report.config.checks = {"layout"};
  report.config.disable_gpu = false;
  report.config.op_types = {"gemm", "rmsnorm"};
  report.config.definitions = {"x"};
  DefinitionReport x;
  x[Category::layout] =
      result({{codes::k_json_parse, "parse error: 1 validation error\n  detail"}});
  x.update_status();
  report.definitions.emplace("x", std::move(x));
  const std::string expected = "=== Dataset Validation Report ===\n"
                               "dataset:       ds\n"
                               "checks:        layout\n"
                               "disable_gpu:   False\n"
                               "op_types:      gemm, rmsnorm\n"
                               "definitions:   x\n"
                               "\n"
                               "1 definitions: 0 ok, 0 warning, 1 error\n"
                               "\n"
                               "--- x [ERROR] ---\n"
                               "  layout:      error\n"
                               "    - parse error: 1 validation error\n  detail\n"
                               "  definition:  None (skipped)\n"
                               "  workload:    None (skipped)\n"
                               "  solution:    None (skipped)\n"
                               "  trace:       None (skipped)\n"
                               "  baseline:    None (skipped)\n"
                               "  benchmark:   None (skipped)\n";
  EXPECT_EQ(render_report_text(report), expected);
}

TEST(DatasetReportRender, TextPrintsFibDatasetSectionAfterDefinitions) {
  DatasetReport report;
  report.config.dataset = "ds";
  report.dataset = result({{codes::k_dataset_orphan, "a: orphan"}});
  const std::string text = render_report_text(report);
  EXPECT_TRUE(text.ends_with("    - a: orphan\n")) << text;
  EXPECT_FALSE(text.ends_with("\n\n")) << text;
  EXPECT_TRUE(contains(text, "0 definitions: 0 ok, 0 warning, 0 error\n\n--- dataset")) << text;
  // An empty section prints nothing.
  report.dataset = CheckResult{};
  EXPECT_FALSE(contains(render_report_text(report), "--- dataset"));
}

// Python's json.dumps(indent=2, ensure_ascii=False) of the report model, no trailing newline,
// with fib's "code" after each message.
TEST(DatasetReportRender, JsonFieldOrderNullsAndNoTrailingNewline) {
  DatasetReport report;
  report.config.dataset = "/data/fit";
  report.config.checks = {"layout", "workload"};
  report.config.disable_gpu = true;
  report.config.op_types = {"gemm"};
  DefinitionReport g;
  g[Category::layout] = result({});
  g[Category::workload] = result({{codes::k_dataset_workload_valid_count, "1/2 valid"}});
  // A message without a code (read from an old report) has no "code" key.
  g[Category::workload]->add(CheckLevel::error, "", "w2: café\nline \"2\"");
  g.update_status();
  report.definitions.emplace("g", std::move(g));
  const std::string expected = R"({
  "config": {
    "dataset": "/data/fit",
    "checks": [
      "layout",
      "workload"
    ],
    "disable_gpu": true,
    "op_types": [
      "gemm"
    ],
    "definitions": []
  },
  "definitions": {
    "g": {
      "status": "error",
      "layout": {
        "status": "ok",
        "messages": []
      },
      "definition": null,
      "workload": {
        "status": "error",
        "messages": [
          {
            "level": "info",
            "message": "1/2 valid",
            "code": "dataset.workload.valid-count"
          },
          {
            "level": "error",
            "message": "w2: café\nline \"2\""
          }
        ]
      },
      "solution": null,
      "trace": null,
      "baseline": null,
      "benchmark": null
    }
  }
})";
  EXPECT_EQ(render_report_json(report), expected);
}

TEST(DatasetReportRender, JsonEmptyDefinitions) {
  DatasetReport report;
  report.config.dataset = "d";
  EXPECT_EQ(render_report_json(report), R"({
  "config": {
    "dataset": "d",
    "checks": [],
    "disable_gpu": false,
    "op_types": [],
    "definitions": []
  },
  "definitions": {}
})");
}

TEST(DatasetReportRender, JsonRoundTrip) {
  const DatasetReport example = example_report();
  const std::string json = render_report_json(example);
  const auto parsed = parse_report_json(json, "report.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(render_report_json(*parsed), json);
  EXPECT_EQ(render_report_text(*parsed), render_report_text(example));
  EXPECT_FALSE(parsed->dataset.has_value());

  // A real report, with fib's dataset section.
  Dataset ds;
  write_many(ds, 4);
  ds.solution("baseline", "def00", "b1", solution_json("b1", "def00", "baseline"));
  const DatasetReport real = ds.validate();
  ASSERT_TRUE(real.dataset.has_value());
  const std::string real_json = render_report_json(real);
  const auto real_parsed = parse_report_json(real_json, "report.json");
  ASSERT_TRUE(real_parsed) << real_parsed.error().message;
  EXPECT_EQ(render_report_json(*real_parsed), real_json);
  ASSERT_TRUE(real_parsed->dataset.has_value());
  EXPECT_EQ(messages_of(*real_parsed->dataset), messages_of(*real.dataset));
}

TEST(DatasetReportRender, ParseRejectsInvalidLevel) {
  const auto parsed = parse_report_json(
      R"({"config": {"dataset": "d", "checks": [], "disable_gpu": true, "op_types": [], "definitions": []},
          "definitions": {"x": {"status": "ok", "layout": {"status": "ok", "messages": [{"level": "fatal", "message": "m"}]}}}})",
      "r.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, codes::k_report_invalid);
}

} // namespace
} // namespace fib

namespace fib {
namespace {

// The old tool's report (no "code" keys) and fib's (with them) both read, and each renders back
// to itself; a code that is not a string is invalid.
TEST(DatasetReportRender, ReadsReportsWithAndWithoutCodes) {
  const auto report_with = [](std::string_view code_key) {
    return fmt::format(R"({{
  "config": {{
    "dataset": "d",
    "checks": [
      "workload"
    ],
    "disable_gpu": true,
    "op_types": [],
    "definitions": []
  }},
  "definitions": {{
    "x": {{
      "status": "error",
      "layout": null,
      "definition": null,
      "workload": {{
        "status": "error",
        "messages": [
          {{
            "level": "error",
            "message": "w1: extra axes ['K']"{}
          }}
        ]
      }},
      "solution": null,
      "trace": null,
      "baseline": null,
      "benchmark": null
    }}
  }}
}})",
                       code_key);
  };
  const std::string old_json = report_with("");
  const auto old_report = parse_report_json(old_json, "old.json");
  ASSERT_TRUE(old_report) << old_report.error().message;
  EXPECT_EQ(messages(*old_report, "x", Category::workload),
            Messages{E("", "w1: extra axes ['K']")});
  EXPECT_EQ(render_report_json(*old_report), old_json);

  const std::string new_json =
      report_with(",\n            \"code\": \"dataset.workload.extra-axes\"");
  const auto new_report = parse_report_json(new_json, "new.json");
  ASSERT_TRUE(new_report) << new_report.error().message;
  EXPECT_EQ(messages(*new_report, "x", Category::workload),
            Messages{E(codes::k_dataset_workload_extra_axes, "w1: extra axes ['K']")});
  EXPECT_EQ(render_report_json(*new_report), new_json);
  EXPECT_EQ(render_report_text(*new_report), render_report_text(*old_report));

  const auto bad = parse_report_json(report_with(",\n\"code\": 5"), "bad.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, codes::k_report_invalid);
  EXPECT_EQ(bad.error().pointer, "/definitions/x/workload/messages/0/code");
}

// Shards written with and without codes merge; dataset-level messages keep their codes and are
// de-duplicated by level and text.
TEST(DatasetReportRender, MergeKeepsCodes) {
  DatasetReport with_codes;
  with_codes.definitions["a"][Category::layout] =
      result({{codes::k_dataset_trace_op_type_mismatch, "m"}});
  with_codes.dataset = result({{codes::k_dataset_orphan, "o"}});
  DatasetReport without_codes;
  without_codes.definitions["b"][Category::layout].emplace().add(CheckLevel::error, "", "m");
  without_codes.dataset.emplace().add(CheckLevel::warning, "", "o");
  const DatasetReport merged = merge_reports({with_codes, without_codes});
  EXPECT_EQ(messages(merged, "a", Category::layout),
            Messages{E(codes::k_dataset_trace_op_type_mismatch, "m")});
  EXPECT_EQ(messages(merged, "b", Category::layout), Messages{E("", "m")});
  EXPECT_EQ(dataset_messages(merged), Messages{W(codes::k_dataset_orphan, "o")});
}

// The report's messages counted as findings for the exit status: never environment or usage
// errors, whatever their code (an unreadable file is a finding about the dataset here).
TEST(DatasetReportRender, CountFindingsCountsEveryMessage) {
  DatasetReport report = example_report();
  report.definitions["z"][Category::definition] =
      result({{codes::k_io_read, "parse error: cannot read"}});
  report.dataset = result({{codes::k_dataset_unread_file, "f: not a .json file"},
                           {codes::k_dataset_misplaced, "g.json: at the wrong depth"}});
  const DiagnosticCounts counts = count_findings(report);
  EXPECT_EQ(counts.errors, 2u);   // w3's extra axes, z's unreadable file
  EXPECT_EQ(counts.warnings, 3u); // a description, gemm's baseline, the misplaced file
  EXPECT_EQ(counts.notes, 9u);    // 3 of gemm, 5 of rmsnorm, the unread file
  EXPECT_EQ(counts.environment_errors, 0u);
  EXPECT_EQ(counts.usage_errors, 0u);
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
