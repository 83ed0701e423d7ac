// The workload category: each line of the workload file against the definition (axes, inputs,
// blobs), plus fib's blob dtype, duplicate uuid, blob path and constraint checks. The old tool's
// "N valid" count is unchanged by fib's checks.

#include "validate/dataset_job.hpp"

#include "io/python_repr.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/constraint/constraint.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace fib::dataset_checks {
namespace {

using detail::py_list_repr;
using detail::py_tuple_repr;

constexpr std::size_t k_max_constraint_tensor_elements = std::size_t{1} << 20;

// The elements of `a` not in `b`, sorted.
std::vector<std::string> difference(const std::set<std::string>& a,
                                    const std::set<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

template <class Map> std::set<std::string> keys_of(const Map& map) {
  std::set<std::string> keys;
  for (const auto& entry : map) {
    keys.insert(entry.first);
  }
  return keys;
}

// The pointer of a workload input in a line, and of `member` in it.
std::string input_pointer(const std::string& input, std::string_view member = {}) {
  return pointer_append("/workload/inputs", input) + std::string(member);
}

bool is_integral(DType dtype) {
  return dtype == DType::int64 || dtype == DType::int32 || dtype == DType::int16 ||
         dtype == DType::int8 || dtype == DType::boolean;
}

// Checks the lines of one workload file against one definition, collecting into `r`.
class WorkloadChecker {
public:
  WorkloadChecker(const Definition& definition, const std::filesystem::path& root,
                  BlobPresence& blobs, CheckResult& r,
                  WorkloadLines lines = WorkloadLines::workload_file)
      : m_def(definition), m_root(root), m_blobs(blobs), m_r(r), m_lines(lines),
        m_tallies(definition.constraints.size()) {
    const std::vector<std::string> var_axes = definition.var_axes();
    m_var_axes.insert(var_axes.begin(), var_axes.end());
    m_inputs = keys_of(definition.inputs);
    m_constraints.reserve(definition.constraints.size());
    for (const std::string& constraint : definition.constraints) {
      m_constraints.emplace_back(constraint); // parsed once, evaluated on every line
    }
  }

  // Every message of the line names its line number.
  void check(const TraceLine& line) {
    const std::size_t before = m_r.messages.size();
    check_line(line);
    for (std::size_t i = before; i < m_r.messages.size(); ++i) {
      m_r.messages[i].where.line = line.line > 0 ? static_cast<std::uint32_t>(line.line) : 0;
    }
  }

  // The constraints that could not be evaluated, then the count in front.
  void finish(std::size_t total) {
    for (std::size_t c = 0; c < m_tallies.size(); ++c) {
      if (m_tallies[c].not_evaluated > 0) {
        m_r.add(codes::k_dataset_workload_constraint_not_evaluated,
                fib_message(fmt::format("constraint '{}' not evaluated on {} of {} workloads: {}",
                                        excerpt(m_def.constraints[c]), m_tallies[c].not_evaluated,
                                        total, m_tallies[c].first_detail)));
      }
    }
    m_r.add_front(codes::k_dataset_workload_valid_count,
                  m_valid == total ? fmt::format("{} valid", total)
                                   : fmt::format("{}/{} valid", m_valid, total));
  }

private:
  struct ConstraintTally {
    std::size_t not_evaluated = 0;
    std::string first_detail;
  };

  void check_line(const TraceLine& line) {
    const Workload& w = line.trace.workload;
    check_uuid_and_paths(line);
    if (!check_structure(line.trace)) {
      return;
    }
    const std::map<std::string, std::int64_t> var_values(w.axes.begin(), w.axes.end());
    auto shapes = input_shapes(m_def, var_values);
    if (!shapes) {
      m_r.add(CheckLevel::error, shapes.error().code,
              fmt::format("{}: shape inference failed: {}", w.uuid, shapes.error().message));
      return;
    }
    const bool inputs_ok = check_inputs(w, *shapes);
    check_constraints(w, *shapes);
    m_valid += inputs_ok ? 1 : 0;
  }

  // fib's: a repeated uuid, blob paths outside the dataset (once per uuid and path).
  void check_uuid_and_paths(const TraceLine& line) {
    const Workload& w = line.trace.workload;
    if (auto [it, inserted] = m_first_line_of_uuid.emplace(w.uuid, line.line);
        !inserted && m_lines == WorkloadLines::workload_file) {
      m_r.add(codes::k_dataset_workload_duplicate_uuid,
              fib_message(fmt::format("duplicate workload uuid {} on lines {} and {}", w.uuid,
                                      it->second, line.line)))
          .where.pointer = "/workload/uuid";
    }
    for (const auto& [input, spec] : w.inputs) {
      const auto* blob = std::get_if<SafetensorsInput>(&spec);
      if (blob != nullptr && points_outside(blob->path) &&
          m_outside_blobs.emplace(w.uuid, blob->path).second) {
        // Still read from root / path, as the old tool does.
        m_r.add(codes::k_dataset_workload_blob_outside,
                fib_message(fmt::format("{}: blob path '{}' points outside the dataset", w.uuid,
                                        blob->path)))
            .where.pointer = input_pointer(input, "/path");
      }
    }
  }

  // The old tool's line checks before shapes: workload-only, axes, input names. False when the
  // line's input checks are skipped.
  bool check_structure(const Trace& t) {
    const Workload& w = t.workload;
    const std::string& uuid = w.uuid;
    bool ok = true;
    const auto fail = [&](std::string_view code, std::string message, std::string pointer) {
      m_r.add(code, std::move(message)).where.pointer = std::move(pointer);
      ok = false;
    };
    if (m_lines == WorkloadLines::workload_file && !t.is_workload_trace()) {
      fail(codes::k_workload_not_workload_only,
           fmt::format("{}: workload entry should not have solution or evaluation", uuid),
           t.solution ? "/solution" : "/evaluation");
    }
    const std::set<std::string> provided = keys_of(w.axes);
    if (const auto missing = difference(m_var_axes, provided); !missing.empty()) {
      fail(codes::k_dataset_workload_missing_axes,
           fmt::format("{}: missing axes {}", uuid, py_list_repr(missing)), "/workload/axes");
    }
    if (const auto extra = difference(provided, m_var_axes); !extra.empty()) {
      fail(codes::k_dataset_workload_extra_axes,
           fmt::format("{}: extra axes {}", uuid, py_list_repr(extra)),
           pointer_append("/workload/axes", extra.front()));
    }
    for (const auto& [name, value] : w.axes) {
      if (value <= 0) {
        fail(codes::k_dataset_workload_axis_value,
             fmt::format("{}: axis {} has non-positive value {}", uuid, name, value),
             pointer_append("/workload/axes", name));
      }
    }
    const std::set<std::string> given = keys_of(w.inputs);
    if (const auto missing = difference(m_inputs, given); !missing.empty()) {
      fail(codes::k_dataset_workload_missing_inputs,
           fmt::format("{}: missing inputs {}", uuid, py_list_repr(missing)), "/workload/inputs");
    }
    if (const auto extra = difference(given, m_inputs); !extra.empty()) {
      fail(codes::k_dataset_workload_extra_inputs,
           fmt::format("{}: extra inputs {}", uuid, py_list_repr(extra)),
           input_pointer(extra.front()));
    }
    return ok;
  }

  // Each input's kind, and a blob's existence, key, shape and (fib's) dtype. False when one of
  // the old tool's checks failed.
  bool check_inputs(const Workload& w, const std::vector<ConcreteShape>& shapes) {
    bool ok = true;
    for (std::size_t i = 0; i < m_def.inputs.size(); ++i) {
      const auto& [name, spec] = m_def.inputs[i];
      const InputSpec& input = *find_entry(w.inputs, name);
      if (std::holds_alternative<ScalarInput>(input)) {
        ok = expect_kind(!spec.is_scalar(), w.uuid, name, "scalar", "tensor") && ok;
      } else if (std::holds_alternative<RandomInput>(input)) {
        ok = expect_kind(spec.is_scalar(), w.uuid, name, "random", "scalar") && ok;
      } else if (spec.is_scalar()) {
        ok = expect_kind(true, w.uuid, name, "safetensors", "scalar") && ok;
      } else {
        ok = check_blob(w.uuid, name, spec, std::get<SafetensorsInput>(input), shapes[i]) && ok;
      }
    }
    return ok;
  }

  // Reports "{uuid}: {name} is {kind} but definition expects {expected}" when `mismatch`.
  bool expect_kind(bool mismatch, const std::string& uuid, const std::string& name,
                   std::string_view kind, std::string_view expected) {
    if (mismatch) {
      m_r.add(codes::k_dataset_workload_input_kind,
              fmt::format("{}: {} is {} but definition expects {}", uuid, name, kind, expected))
          .where.pointer = input_pointer(name, "/type");
    }
    return !mismatch;
  }

  bool check_blob(const std::string& uuid, const std::string& name, const TensorSpec& spec,
                  const SafetensorsInput& blob, const ConcreteShape& expected) {
    const std::string full_text = detail::joined_path_text(m_root.native(), blob.path);
    if (!m_blobs.exists(full_text)) {
      std::string message = fmt::format("{}: blob missing at {}", uuid, blob.path);
      if (m_missing_blobs.insert(message).second) {
        m_r.add(codes::k_blob_not_found, std::move(message)).where.pointer =
            input_pointer(name, "/path");
      }
      return false;
    }
    const std::filesystem::path full(full_text);
    const auto& header = cached_header(m_headers, full);
    if (!header) {
      std::string message = fmt::format("{}: blob load failed: {}", uuid, header.error().message);
      if (!header.error().hint.empty()) {
        message += fmt::format(" ({})", header.error().hint);
      }
      m_r.add(CheckLevel::error, header.error().code, std::move(message)).where.pointer =
          input_pointer(name, "/path");
      return false;
    }
    const auto entry = header->tensors.find(blob.tensor_key);
    if (entry == header->tensors.end()) {
      m_r.add(codes::k_dataset_workload_tensor_key,
              fmt::format("{}: tensor key '{}' not found in {}", uuid, blob.tensor_key, blob.path))
          .where.pointer = input_pointer(name, "/tensor_key");
      return false;
    }
    if (entry->second.shape != *expected) {
      m_r.add(codes::k_dataset_workload_blob_shape,
              fmt::format("{}: {} shape mismatch: expected {}, got {}", uuid, name,
                          py_tuple_repr(*expected), py_tuple_repr(entry->second.shape)))
          .where.pointer = input_pointer(name);
      return false;
    }
    const std::string_view expected_dtype = safetensors_dtype_name(spec.dtype);
    const bool dtype_ok = spec.dtype == DType::float4_e2m1
                              ? entry->second.dtype == "U8" || entry->second.dtype == "I8"
                              : entry->second.dtype == expected_dtype;
    if (!dtype_ok) {
      // fib's own check: it does not make the line invalid.
      m_r.add(codes::k_dataset_workload_blob_dtype,
              fib_message(fmt::format("{}: {} dtype mismatch: the definition says {} ({}), the "
                                      "blob holds {}",
                                      uuid, name, to_string(spec.dtype),
                                      expected_dtype.empty() ? "U8" : expected_dtype,
                                      entry->second.dtype)))
          .where.pointer = input_pointer(name);
    }
    return true;
  }

  // fib's constraint checks run on every line whose axes and inputs match the definition, so a
  // missing blob only leaves the constraints that read its data unevaluated.
  void check_constraints(const Workload& w, const std::vector<ConcreteShape>& shapes) {
    if (m_def.constraints.empty()) {
      return;
    }
    const ConstraintEnvironment env = environment(w, shapes);
    for (std::size_t c = 0; c < m_def.constraints.size(); ++c) {
      const ConstraintResult result = m_constraints[c].evaluate(env);
      if (result.outcome == ConstraintOutcome::violated) {
        m_r.add(codes::k_dataset_workload_constraint_violated,
                fib_message(fmt::format("{}: constraint '{}' does not hold: {}", w.uuid,
                                        excerpt(m_def.constraints[c]), result.detail)));
      } else if (result.outcome == ConstraintOutcome::not_evaluable &&
                 m_tallies[c].not_evaluated++ == 0) {
        m_tallies[c].first_detail = result.detail;
      }
    }
  }

  // What the constraints of one line can read: axes, scalars, tensor shapes and small blobs.
  ConstraintEnvironment environment(const Workload& w, const std::vector<ConcreteShape>& shapes) {
    ConstraintEnvironment env;
    env.axes = m_def.const_axes();
    for (const auto& [name, value] : w.axes) {
      env.axes[name] = value;
    }
    for (std::size_t i = 0; i < m_def.inputs.size(); ++i) {
      const auto& [name, spec] = m_def.inputs[i];
      const InputSpec* input = find_entry(w.inputs, name);
      if (input == nullptr) {
        continue;
      }
      if (const auto* scalar = std::get_if<ScalarInput>(input)) {
        // An init-capture: clang before 16 cannot capture a structured binding itself.
        std::visit([&scalars = env.scalars,
                    &input_name = name](const auto& v) { scalars[input_name] = v; },
                   scalar->value);
        continue;
      }
      if (!shapes[i]) {
        continue;
      }
      TensorFacts facts;
      facts.shape = *shapes[i];
      facts.integral = is_integral(spec.dtype);
      if (const auto* blob = std::get_if<SafetensorsInput>(input)) {
        facts.values = blob_values(*blob);
      }
      env.tensors[name] = std::move(facts);
    }
    return env;
  }

  std::optional<std::vector<double>> blob_values(const SafetensorsInput& blob) {
    const std::string full_text = detail::joined_path_text(m_root.native(), blob.path);
    if (!m_blobs.exists(full_text)) {
      return std::nullopt; // its header cannot be read either
    }
    const std::filesystem::path full(full_text);
    const auto& header = cached_header(m_headers, full);
    if (!header) {
      return std::nullopt;
    }
    auto values =
        read_tensor_values(full, *header, blob.tensor_key, k_max_constraint_tensor_elements);
    return values ? std::optional(std::move(*values)) : std::nullopt;
  }

  const Definition& m_def;
  const std::filesystem::path& m_root;
  BlobPresence& m_blobs;
  CheckResult& m_r;
  WorkloadLines m_lines;
  std::set<std::string> m_var_axes;
  std::set<std::string> m_inputs;
  std::vector<ConstraintTally> m_tallies;
  std::vector<CompiledConstraint> m_constraints; // m_def.constraints, parsed
  std::map<std::string, int> m_first_line_of_uuid;
  std::set<std::pair<std::string, std::string>> m_outside_blobs;
  std::set<std::string> m_missing_blobs;
  HeaderCache m_headers;
  std::size_t m_valid = 0;
};

} // namespace

std::vector<std::vector<CheckMessage>> workload_line_errors(const Definition& definition,
                                                            const std::filesystem::path& root,
                                                            const LoadedTraceFile& file,
                                                            WorkloadLines lines) {
  std::vector<std::vector<CheckMessage>> errors;
  CheckResult r;
  BlobPresence blobs;
  WorkloadChecker checker(definition, root, blobs, r, lines);
  for (const TraceLine& line : file.lines) {
    const std::size_t before = r.messages.size();
    checker.check(line);
    std::vector<CheckMessage>& of_line = errors.emplace_back();
    for (std::size_t i = before; i < r.messages.size(); ++i) {
      if (r.messages[i].level == CheckLevel::error) {
        of_line.push_back(r.messages[i]);
      }
    }
  }
  return errors;
}

std::optional<CheckResult> check_workload(const DefinitionJob& job,
                                          const CategoryContext& context) {
  CheckResult r;
  if (job.workload == nullptr) {
    r.add(codes::k_dataset_workload_no_file, "no workload file found");
    return r;
  }
  if (!job.workload->parsed) {
    r.add(CheckLevel::error, job.workload->error.code,
          fmt::format("parse error: {}", job.workload->error.text))
        .where = location_in(*job.workload->file, context.root, job.workload->error.line,
                             job.workload->error.pointer);
    return r;
  }
  if (!job.definition->parsed()) {
    r.add(codes::k_dataset_definition_not_loaded,
          "cannot validate workloads: definition failed to load");
    return r;
  }
  WorkloadChecker checker(job.definition->definition, context.root, *context.blobs, r);
  for (const TraceLine& line : job.workload->lines) {
    checker.check(line);
  }
  checker.finish(job.workload->lines.size());
  locate_unplaced(r, *job.workload->file, context.root);
  return r;
}

} // namespace fib::dataset_checks
