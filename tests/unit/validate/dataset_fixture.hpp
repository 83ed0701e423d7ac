#pragma once
// What the dataset-validation tests share: documents and safetensors files built in code, a
// dataset in a temporary directory, and expectations that name each message's level, code and
// text.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/dataset.hpp>
#include <fib/validate/report.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fib::dataset_testing {

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

inline std::string definition_json(const DefSpec& s) {
  return fmt::format(
      R"({{"name": "{}", "op_type": "{}", {}"axes": {}, "inputs": {}, "outputs": {}, "reference": "{}"{}}})",
      s.name, s.op_type, s.description, s.axes, s.inputs, s.outputs, s.reference, s.extra);
}

inline std::string definition_json(std::string_view name, std::string_view op_type = "op") {
  DefSpec s;
  s.name = name;
  s.op_type = op_type;
  return definition_json(s);
}

inline constexpr std::string_view k_inputs =
    R"({"A": {"type": "random"}, "s": {"type": "scalar", "value": 1.5}})";

// A workloads/ line. `tail` is appended inside the outer object (e.g. a solution).
inline std::string wl(std::string_view uuid, std::string_view axes = R"({"M": 2})",
                      std::string_view inputs = k_inputs, std::string_view definition = "d1",
                      std::string_view tail = R"(, "solution": null, "evaluation": null)") {
  return fmt::format(
      R"({{"definition": "{}", "workload": {{"axes": {}, "inputs": {}, "uuid": "{}"}}{}}})",
      definition, axes, inputs, uuid, tail);
}

inline std::string passed_evaluation() {
  return R"({"status": "PASSED", "environment": {"hardware": "cpu"}, "timestamp": "2026-01-01T00:00:00Z", "correctness": {"max_relative_error": 0.0, "max_absolute_error": 0.0}, "performance": {"latency_ms": 1.0, "reference_latency_ms": 1.0, "speedup_factor": 1.0}})";
}

inline std::string failed_evaluation() {
  return R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "cpu"}, "timestamp": "2026-01-01T00:00:00Z", "log": "boom"})";
}

// A traces/ line: solution `solution` (a JSON value: "\"s1\"" or "null") evaluated on `uuid`.
inline std::string tr(std::string_view uuid, std::string_view solution_value,
                      const std::string& evaluation = passed_evaluation(),
                      std::string_view definition = "d1") {
  return fmt::format(
      R"({{"definition": "{}", "workload": {{"axes": {{"M": 2}}, "inputs": {}, "uuid": "{}"}}, "solution": {}, "evaluation": {}}})",
      definition, k_inputs, uuid, solution_value, evaluation);
}

inline std::string solution_json(std::string_view name, std::string_view definition,
                                 std::string_view author) {
  return fmt::format(
      R"({{"name": "{}", "definition": "{}", "author": "{}",
 "spec": {{"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A, s):\n    return A\n"}}]}})",
      name, definition, author);
}

inline std::string lines(const std::vector<std::string>& items) {
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

inline std::string f32_bytes(const std::vector<float>& values) {
  std::string out;
  for (const float v : values) {
    const auto bits = std::bit_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((bits >> (8 * i)) & 0xffu));
    }
  }
  return out;
}

inline std::string i32_bytes(const std::vector<std::int32_t>& values) {
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
inline std::string safetensors_file(const std::vector<BlobTensor>& tensors) {
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
inline Messages messages_of(const CheckResult& result) {
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
inline std::string I(std::string_view code, std::string_view text) {
  return fmt::format("I[{}]: {}", code, text);
}
inline std::string W(std::string_view code, std::string_view text) {
  return fmt::format("W[{}]: {}", code, text);
}
inline std::string E(std::string_view code, std::string_view text) {
  return fmt::format("E[{}]: {}", code, text);
}

inline Messages messages(const DatasetReport& report, const std::string& definition,
                         Category category) {
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

inline CheckStatus status(const DatasetReport& report, const std::string& definition,
                          Category category) {
  const auto it = report.definitions.find(definition);
  if (it == report.definitions.end() || !it->second[category]) {
    ADD_FAILURE() << "no result for " << definition << "/" << to_string(category);
    return CheckStatus::ok;
  }
  return it->second[category]->status;
}

inline CheckStatus status(const DatasetReport& report, const std::string& definition) {
  const auto it = report.definitions.find(definition);
  if (it == report.definitions.end()) {
    ADD_FAILURE() << "no report entry for " << definition;
    return CheckStatus::ok;
  }
  return it->second.status;
}

inline Messages dataset_messages(const DatasetReport& report) {
  return report.dataset ? messages_of(*report.dataset) : Messages{};
}

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A clean definition d1 with two valid workloads.
inline void write_clean(const Dataset& ds) {
  ds.definition(DefSpec{});
  ds.workloads("d1", {wl("w1"), wl("w2", R"({"M": 3})")});
}

// Definitions def00… with every second one a workload file (w2 invalid), an orphan workload
// file and a definition at the wrong depth.
inline void write_many(const Dataset& ds, int count) {
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

// Definitions def000… (`count` of them) whose findings vary with the index i, so that every kind
// of result is spread over several chunks of a parallel or cached run:
// - i % 7 == 0: a reference that does not parse; i % 7 == 1: a run() that cannot take the inputs
//   (one parameter for two inputs); i % 7 == 2: a constraint that does not parse ("M >") beside
//   one that does;
// - i % 11 == 5: a definition file that is not JSON (a load failure);
// - each definition has workloads w1 (axis M = 0, a workload error, when i % 3 == 0; M = 2
//   otherwise) and w2 (input A from blob/w.safetensors, which does not exist), a solution s1 by
//   alice, and one passed trace of s1 on w1.
inline void write_varied(const Dataset& ds, int count) {
  for (int i = 0; i < count; ++i) {
    const std::string name = fmt::format("def{:03}", i);
    DefSpec spec;
    spec.name = name;
    if (i % 7 == 0) {
      spec.reference = R"(def run(A, s:\n    return A\n)";
    } else if (i % 7 == 1) {
      spec.reference = R"(def run(A):\n    return A\n)";
    } else if (i % 7 == 2) {
      spec.extra = R"(, "constraints": ["M >", "M > 0"])";
    }
    ds.definition(name, i % 11 == 5 ? std::string("{not json") : definition_json(spec));
    ds.workloads(
        name,
        {wl("w1", i % 3 == 0 ? R"({"M": 0})" : R"({"M": 2})", k_inputs, name),
         wl("w2", R"({"M": 2})",
            R"({"A": {"type": "safetensors", "path": "blob/w.safetensors", "tensor_key": "A"}, "s": {"type": "scalar", "value": 1}})",
            name)});
    ds.solution("alice", name, "s1", solution_json("s1", name, "alice"));
    ds.traces("alice", name, {tr("w1", R"("s1")", passed_evaluation(), name)});
  }
}

} // namespace fib::dataset_testing
