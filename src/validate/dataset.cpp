// validate_dataset: the old tool's per-definition categories (contract §3.2) plus fib's extra
// checks, which are always marked "[fib]" in their message.

#include "fib/validate/dataset.hpp"

#include "io/python_repr.hpp"
#include "util/parallel_for.hpp"

#include <fib/base/codes.hpp>
#include <fib/constraint/constraint.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/solution.hpp>
#include <fib/model/trace.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>

namespace fib {
namespace {

using detail::parallel_for;
using detail::py_list_repr;
using detail::py_tuple_repr;

constexpr std::string_view k_fib = "[fib] ";
constexpr std::size_t k_max_constraint_tensor_elements = std::size_t{1} << 20;

bool is_legacy_error(const Diagnostic& d) {
  const CodeInfo* info = find_code(d.code);
  return d.severity == Severity::error && info != nullptr && info->origin == CheckOrigin::legacy;
}

// The codes of the old tool's model-level validators: pydantic prints their errors with no
// location, as "Value error, <message>".
bool is_model_level(std::string_view code) {
  static constexpr std::string_view k_model_level[] = {
      codes::k_reference_syntax,    codes::k_reference_no_run,
      codes::k_io_overlap,          codes::k_constraint_syntax,
      codes::k_axis_undefined,      codes::k_shape_expression,
      codes::k_source_duplicate,    codes::k_entry_missing_source,
      codes::k_correctness_missing, codes::k_correctness_unexpected,
      codes::k_performance_missing, codes::k_performance_unexpected};
  return std::find(std::begin(k_model_level), std::end(k_model_level), code) !=
         std::end(k_model_level);
}

// The old tool embeds str(ValidationError): a count line, then a location and a message per
// field-level error, "Value error, <message>" without a location per model-level one.
std::string validation_error_text(std::string_view model, const std::vector<Diagnostic>& errors) {
  std::string text = fmt::format("{} validation error{} for {}", errors.size(),
                                 errors.size() == 1 ? "" : "s", model);
  for (const Diagnostic& d : errors) {
    std::string message = d.message;
    if (d.code == codes::k_json_parse || d.code == codes::k_json_too_deep) {
      message = "Invalid JSON: " + message.substr(message.find(':') + 2);
    }
    if (is_model_level(d.code)) {
      text += fmt::format("\n  Value error, {}", message);
    } else if (d.pointer.empty()) {
      text += fmt::format("\n  {}", message);
    } else {
      std::string location = d.pointer.substr(1);
      std::replace(location.begin(), location.end(), '/', '.');
      text += fmt::format("\n{}\n  {}", location, message);
    }
  }
  return text;
}

std::vector<Diagnostic> legacy_errors(const DiagnosticList& list) {
  std::vector<Diagnostic> out;
  for (const Diagnostic& d : list.items()) {
    if (is_legacy_error(d)) {
      out.push_back(d);
    }
  }
  return out;
}

struct LoadedDefinition {
  const DefinitionFile* entry = nullptr;
  std::optional<JsonDocument> document;
  Definition definition;
  std::vector<Diagnostic> errors; // legacy errors: the definition "failed to load"
  DiagnosticList findings;        // everything parse/lint reported
  bool loaded() const { return errors.empty() && !entry->duplicate_error; }
  // The Definition parsed. A duplicate stem keeps the later file's parsed Definition (contract
  // §1.2), so its workloads are still checked.
  bool parsed() const { return errors.empty(); }
};

struct LoadedTraceFile {
  const ScannedFile* file = nullptr;
  bool parsed = false;
  std::vector<TraceLine> lines;
  std::string error; // "{text} (line N)" when not parsed
};

struct LoadedSolution {
  const ScannedFile* file = nullptr;
  bool parsed = false;
  Solution solution;
  std::string error;
};

void load_definition(LoadedDefinition& out) {
  const auto& path = out.entry->file.path;
  auto text = read_text_file(path);
  if (!text) {
    out.errors.push_back(text.error());
    return;
  }
  // The report shows no line numbers, so the line index is not built.
  auto document = parse_json(*text, path, out.findings, 1, LineIndex::skipped);
  if (!document) {
    out.errors.push_back(document.error());
    return;
  }
  out.definition = parse_definition(*document, out.findings);
  out.document = std::move(*document);
  out.errors = legacy_errors(out.findings);
}

void load_trace_file(LoadedTraceFile& out) {
  auto text = read_text_file(out.file->path);
  if (!text) {
    out.error = text.error().message;
    return;
  }
  for (const JsonlLine& line : split_jsonl_lines(*text)) {
    DiagnosticList sink;
    auto lines =
        parse_trace_lines(line.text, out.file->path, TraceFileKind::any, sink, LineIndex::skipped);
    std::vector<Diagnostic> errors = legacy_errors(sink);
    if (lines.empty() && errors.empty()) {
      continue;
    }
    if (!errors.empty()) {
      // One bad line fails the whole file, as in the old tool.
      out.error = fmt::format("{} (line {})", validation_error_text("Trace", errors), line.line);
      out.lines.clear();
      return;
    }
    lines.front().line = line.line;
    out.lines.push_back(std::move(lines.front()));
  }
  out.parsed = true;
}

void load_solution(LoadedSolution& out) {
  auto text = read_text_file(out.file->path);
  if (!text) {
    out.error = text.error().message;
    return;
  }
  DiagnosticList sink;
  auto document = parse_json(*text, out.file->path, sink, 1, LineIndex::skipped);
  if (!document) {
    out.error = validation_error_text("Solution", {document.error()});
    return;
  }
  out.solution = parse_solution(*document, sink);
  const auto errors = legacy_errors(sink);
  if (!errors.empty()) {
    out.error = validation_error_text("Solution", errors);
    return;
  }
  out.parsed = true;
}

// Everything validate needs about one target definition.
struct DefinitionJob {
  std::string name;
  LoadedDefinition* definition = nullptr;
  LoadedTraceFile* workload = nullptr;
  std::vector<LoadedSolution*> solutions;
  std::vector<LoadedTraceFile*> traces;
  std::vector<std::string> fib_definition_errors; // from the Python phase (fib-origin errors)
  // From the reference phase: the build check (and smoke run), in the definition category.
  std::optional<std::vector<CheckMessage>> reference_messages;
  // From the same phase: the builds of the baseline solutions, and the benchmark category.
  std::optional<std::vector<CheckMessage>> baseline_build_messages;
  std::optional<CheckResult> benchmark;
  DefinitionReport report;
};

std::string fib_message(std::string_view text) {
  return std::string(k_fib) + std::string(text);
}

// User text echoed in fib's messages, cut to 80 bytes like fib::json_excerpt (77 and "..."), never
// inside a UTF-8 sequence.
std::string excerpt(std::string_view text) {
  constexpr std::size_t k_max = 80;
  if (text.size() <= k_max) {
    return std::string(text);
  }
  std::size_t cut = k_max - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + "...";
}

// True when a blob path names a file outside the dataset root: absolute, or with a ".." component.
bool points_outside(const std::string& blob_path) {
  const std::filesystem::path path(blob_path);
  return path.is_absolute() ||
         std::any_of(path.begin(), path.end(),
                     [](const std::filesystem::path& part) { return part == ".."; });
}

// Each blob's header, read at most once per definition (the workload checks and the constraint
// environment both need it). Keyed by the full path the blob is read from.
using HeaderCache = std::map<std::filesystem::path, Expected<SafetensorsHeader>>;

const Expected<SafetensorsHeader>& cached_header(HeaderCache& cache,
                                                 const std::filesystem::path& full) {
  auto it = cache.find(full);
  if (it == cache.end()) {
    it = cache.emplace(full, read_safetensors_header(full)).first;
  }
  return it->second;
}

// ---- categories -------------------------------------------------------------------------------

CheckResult check_layout(const DefinitionJob& job, const std::filesystem::path& root,
                         std::set<std::string>& missing_blobs) {
  CheckResult r;
  const LoadedDefinition& d = *job.definition;
  if (d.entry->duplicate_error) {
    r.add(CheckLevel::error, *d.entry->duplicate_error);
    return r;
  }
  const std::string& def_dir = d.entry->file.op_type;
  if (d.loaded()) {
    if (d.entry->file.name != d.definition.name) {
      r.add(CheckLevel::error,
            fmt::format("definition name mismatch: path says '{}', JSON says '{}'",
                        d.entry->file.name, d.definition.name));
    }
    if (def_dir != d.definition.op_type) {
      r.add(CheckLevel::error,
            fmt::format("definition op_type mismatch: path says '{}', JSON says '{}'", def_dir,
                        d.definition.op_type));
    }
  }
  if (job.workload != nullptr) {
    if (job.workload->file->op_type != def_dir) {
      r.add(CheckLevel::error, fmt::format("workload op_type mismatch: expected '{}', got '{}'",
                                           def_dir, job.workload->file->op_type));
    }
    if (job.workload->parsed) {
      for (const TraceLine& line : job.workload->lines) {
        if (line.trace.definition != job.name) {
          r.add(CheckLevel::error,
                fmt::format("workload trace definition mismatch: expected '{}', got '{}'", job.name,
                            line.trace.definition));
          break;
        }
      }
    }
  }
  for (const LoadedSolution* s : job.solutions) {
    if (!s->parsed) {
      continue;
    }
    const ScannedFile& f = *s->file;
    if (f.author != s->solution.author) {
      r.add(CheckLevel::error, fmt::format("solution '{}' author mismatch: path '{}', JSON '{}'",
                                           f.name, f.author, s->solution.author));
    }
    if (job.name != s->solution.definition) {
      r.add(CheckLevel::error,
            fmt::format("solution '{}' definition mismatch: path '{}', JSON '{}'", f.name, job.name,
                        s->solution.definition));
    }
    if (f.name != s->solution.name) {
      r.add(CheckLevel::error,
            fmt::format("solution name mismatch: path '{}', JSON '{}'", f.name, s->solution.name));
    }
    if (f.op_type != def_dir) {
      r.add(CheckLevel::error,
            fmt::format("solution '{}' op_type mismatch: expected '{}', got '{}'", f.name, def_dir,
                        f.op_type));
    }
  }
  for (const LoadedTraceFile* t : job.traces) {
    if (t->file->op_type != def_dir) {
      r.add(CheckLevel::error,
            fmt::format("trace file op_type mismatch for author '{}': expected '{}', got '{}'",
                        t->file->author, def_dir, t->file->op_type));
    }
    if (t->parsed) {
      for (const TraceLine& line : t->lines) {
        if (line.trace.definition != job.name) {
          r.add(CheckLevel::error,
                fmt::format("trace definition mismatch for author '{}': expected '{}', got '{}'",
                            t->file->author, job.name, line.trace.definition));
          break;
        }
      }
    }
  }
  if (job.workload != nullptr && job.workload->parsed && d.loaded()) {
    for (const TraceLine& line : job.workload->lines) {
      for (const auto& [input, spec] : line.trace.workload.inputs) {
        const auto* blob = std::get_if<SafetensorsInput>(&spec);
        if (blob == nullptr) {
          continue;
        }
        const std::filesystem::path full = root / blob->path;
        std::error_code ec;
        if (!std::filesystem::exists(full, ec)) {
          // The old tool repeats this once per input; fib reports each missing blob once.
          const std::string message =
              fmt::format("workload {}: blob missing at {}", line.trace.workload.uuid, blob->path);
          if (missing_blobs.insert(message).second) {
            r.add(CheckLevel::error, message);
          }
        }
      }
    }
  }
  return r;
}

// Plausibility checks on a definition's const axes and name (fib's own).
void check_plausibility(const Definition& def, CheckResult& r) {
  const auto consts = def.const_axes();
  const auto find_const = [&](std::initializer_list<std::string_view> names)
      -> std::optional<std::pair<std::string, std::int64_t>> {
    for (const std::string_view n : names) {
      if (auto it = consts.find(std::string(n)); it != consts.end()) {
        return *it;
      }
    }
    return std::nullopt;
  };
  const auto q = find_const({"num_qo_heads", "num_q_heads", "num_attention_heads"});
  const auto kv = find_const({"num_kv_heads", "num_k_heads", "num_key_value_heads"});
  if (q && kv && kv->second > 0 && q->second % kv->second != 0) {
    r.add(CheckLevel::warning,
          fib_message(fmt::format("{} = {} is not a multiple of {} = {}: query heads must be a "
                                  "whole number of groups per KV head (were the axes read from "
                                  "the wrong tensor layout?)",
                                  q->first, q->second, kv->first, kv->second)));
  }
  // Naming convention (contract §7.3): tokens the name must carry for its const axes.
  struct Token {
    std::string_view prefix;
    std::initializer_list<std::string_view> axes;
  };
  struct Convention {
    std::string_view name_prefix;
    std::initializer_list<Token> tokens;
  };
  static const Convention conventions[] = {
      {"gqa_paged_",
       {{"h", {"num_qo_heads"}},
        {"kv", {"num_kv_heads"}},
        {"d", {"head_dim"}},
        {"ps", {"page_size"}}}},
      {"gqa_ragged_", {{"h", {"num_qo_heads"}}, {"kv", {"num_kv_heads"}}, {"d", {"head_dim"}}}},
      {"mla_paged_",
       {{"h", {"num_qo_heads"}},
        {"ckv", {"head_dim_ckv"}},
        {"kpe", {"head_dim_kpe"}},
        {"ps", {"page_size"}}}},
      {"rmsnorm_", {{"h", {"hidden_size"}}}},
      {"fused_add_rmsnorm_", {{"h", {"hidden_size"}}}},
  };
  for (const Convention& c : conventions) {
    if (!def.name.starts_with(c.name_prefix)) {
      continue;
    }
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= def.name.size();) {
      const std::size_t end = std::min(def.name.find('_', start), def.name.size());
      parts.push_back(def.name.substr(start, end - start));
      start = end + 1;
    }
    for (const Token& token : c.tokens) {
      const auto axis = find_const(token.axes);
      if (!axis) {
        continue;
      }
      const std::string expected = fmt::format("{}{}", token.prefix, axis->second);
      if (std::find(parts.begin(), parts.end(), expected) == parts.end()) {
        r.add(
            CheckLevel::warning,
            fib_message(fmt::format("name '{}' does not carry '{}' for {} = {}, as the "
                                    "{}* naming convention expects",
                                    def.name, expected, axis->first, axis->second, c.name_prefix)));
      }
    }
    break;
  }
}

CheckResult check_definition(const DefinitionJob& job, GpuChecks gpu) {
  CheckResult r;
  const LoadedDefinition& d = *job.definition;
  if (d.entry->duplicate_error) {
    r.add(CheckLevel::error, fmt::format("parse error: {}", *d.entry->duplicate_error));
    return r;
  }
  if (!d.loaded()) {
    r.add(CheckLevel::error,
          fmt::format("parse error: {}", validation_error_text("Definition", d.errors)));
    return r;
  }
  DiagnosticList lint;
  lint_definition(d.definition, *d.document, lint);
  for (const Diagnostic& diag : lint.items()) {
    if (diag.code == codes::k_description_missing) {
      r.add(CheckLevel::warning, diag.message);
    }
  }
  for (const std::string& error : job.fib_definition_errors) {
    r.add(CheckLevel::error, fib_message(error));
  }
  for (const Diagnostic& diag : lint.items()) {
    if (diag.code == codes::k_axis_unbound) {
      r.add(CheckLevel::warning, fib_message(diag.message));
    } else if (diag.code == codes::k_axis_unused || diag.code == codes::k_tag_format) {
      r.add(CheckLevel::info, fib_message(diag.message));
    }
  }
  check_plausibility(d.definition, r);
  if (job.reference_messages) {
    for (const CheckMessage& message : *job.reference_messages) {
      r.add(message.level, message.message);
    }
  } else if (gpu == GpuChecks::enabled) {
    r.add(CheckLevel::info, fib_message("reference build not run: the reference worker is not "
                                        "available (fib built without torch, or fib-worker "
                                        "failed to start; use --disable-gpu to silence this)"));
  }
  return r;
}

ConstraintEnvironment constraint_environment(const Definition& def, const Workload& workload,
                                             const std::vector<ConcreteShape>& shapes,
                                             const std::filesystem::path& root,
                                             HeaderCache& headers) {
  ConstraintEnvironment env;
  env.axes = def.const_axes();
  for (const auto& [name, value] : workload.axes) {
    env.axes[name] = value;
  }
  for (std::size_t i = 0; i < def.inputs.size(); ++i) {
    const auto& [name, spec] = def.inputs[i];
    const InputSpec* input = find_entry(workload.inputs, name);
    if (input == nullptr) {
      continue;
    }
    if (const auto* scalar = std::get_if<ScalarInput>(input)) {
      std::visit([&](const auto& v) { env.scalars[name] = v; }, scalar->value);
      continue;
    }
    if (!shapes[i]) {
      continue;
    }
    TensorFacts facts;
    facts.shape = *shapes[i];
    facts.integral = spec.dtype == DType::int64 || spec.dtype == DType::int32 ||
                     spec.dtype == DType::int16 || spec.dtype == DType::int8 ||
                     spec.dtype == DType::boolean;
    if (const auto* blob = std::get_if<SafetensorsInput>(input)) {
      const std::filesystem::path full = root / blob->path;
      if (const auto& header = cached_header(headers, full)) {
        if (auto values = read_tensor_values(full, *header, blob->tensor_key,
                                             k_max_constraint_tensor_elements)) {
          facts.values = std::move(*values);
        }
      }
    }
    env.tensors[name] = std::move(facts);
  }
  return env;
}

CheckResult check_workload(const DefinitionJob& job, const std::filesystem::path& root,
                           std::set<std::string>& missing_blobs) {
  CheckResult r;
  if (job.workload == nullptr) {
    r.add(CheckLevel::warning, "no workload file found");
    return r;
  }
  if (!job.workload->parsed) {
    r.add(CheckLevel::error, fmt::format("parse error: {}", job.workload->error));
    return r;
  }
  const LoadedDefinition& d = *job.definition;
  if (!d.parsed()) {
    r.add(CheckLevel::error, "cannot validate workloads: definition failed to load");
    return r;
  }
  const Definition& def = d.definition;
  const std::vector<std::string> var_axes = def.var_axes();
  const std::set<std::string> var_set(var_axes.begin(), var_axes.end());
  std::set<std::string> input_names;
  for (const auto& entry : def.inputs) {
    input_names.insert(entry.first);
  }
  struct ConstraintTally {
    std::size_t not_evaluated = 0;
    std::string first_detail;
  };
  std::vector<ConstraintTally> tallies(def.constraints.size());
  std::map<std::string, int> first_line_of_uuid;
  std::set<std::pair<std::string, std::string>> outside_blobs;
  HeaderCache headers;
  std::size_t valid = 0;
  const std::size_t total = job.workload->lines.size();
  for (const TraceLine& line : job.workload->lines) {
    const Trace& t = line.trace;
    const Workload& w = t.workload;
    const std::string& uuid = w.uuid;
    if (auto [it, inserted] = first_line_of_uuid.emplace(uuid, line.line); !inserted) {
      r.add(CheckLevel::warning,
            fib_message(fmt::format("duplicate workload uuid {} on lines {} and {}", uuid,
                                    it->second, line.line)));
    }
    for (const auto& [input, spec] : w.inputs) {
      const auto* blob = std::get_if<SafetensorsInput>(&spec);
      if (blob != nullptr && points_outside(blob->path) &&
          outside_blobs.emplace(uuid, blob->path).second) {
        // Still read from root / path, as the old tool does.
        r.add(CheckLevel::warning,
              fib_message(
                  fmt::format("{}: blob path '{}' points outside the dataset", uuid, blob->path)));
      }
    }
    bool skip = false;
    if (!t.is_workload_trace()) {
      r.add(CheckLevel::error,
            fmt::format("{}: workload entry should not have solution or evaluation", uuid));
      skip = true;
    }
    std::set<std::string> provided;
    for (const auto& entry : w.axes) {
      provided.insert(entry.first);
    }
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    std::set_difference(var_set.begin(), var_set.end(), provided.begin(), provided.end(),
                        std::back_inserter(missing));
    std::set_difference(provided.begin(), provided.end(), var_set.begin(), var_set.end(),
                        std::back_inserter(extra));
    if (!missing.empty()) {
      r.add(CheckLevel::error, fmt::format("{}: missing axes {}", uuid, py_list_repr(missing)));
      skip = true;
    }
    if (!extra.empty()) {
      r.add(CheckLevel::error, fmt::format("{}: extra axes {}", uuid, py_list_repr(extra)));
      skip = true;
    }
    for (const auto& [name, value] : w.axes) {
      if (value <= 0) {
        r.add(CheckLevel::error,
              fmt::format("{}: axis {} has non-positive value {}", uuid, name, value));
        skip = true;
      }
    }
    std::set<std::string> given;
    for (const auto& entry : w.inputs) {
      given.insert(entry.first);
    }
    std::vector<std::string> missing_inputs;
    std::vector<std::string> extra_inputs;
    std::set_difference(input_names.begin(), input_names.end(), given.begin(), given.end(),
                        std::back_inserter(missing_inputs));
    std::set_difference(given.begin(), given.end(), input_names.begin(), input_names.end(),
                        std::back_inserter(extra_inputs));
    if (!missing_inputs.empty()) {
      r.add(CheckLevel::error,
            fmt::format("{}: missing inputs {}", uuid, py_list_repr(missing_inputs)));
      skip = true;
    }
    if (!extra_inputs.empty()) {
      r.add(CheckLevel::error,
            fmt::format("{}: extra inputs {}", uuid, py_list_repr(extra_inputs)));
      skip = true;
    }
    if (skip) {
      continue;
    }
    std::map<std::string, std::int64_t> var_values(w.axes.begin(), w.axes.end());
    auto shapes = input_shapes(def, var_values);
    if (!shapes) {
      r.add(CheckLevel::error,
            fmt::format("{}: shape inference failed: {}", uuid, shapes.error().message));
      continue;
    }
    bool line_ok = true;
    for (std::size_t i = 0; i < def.inputs.size(); ++i) {
      const auto& [name, spec] = def.inputs[i];
      const InputSpec& input = *find_entry(w.inputs, name);
      if (std::holds_alternative<ScalarInput>(input)) {
        if (!spec.is_scalar()) {
          r.add(CheckLevel::error,
                fmt::format("{}: {} is scalar but definition expects tensor", uuid, name));
          line_ok = false;
        }
        continue;
      }
      if (std::holds_alternative<RandomInput>(input)) {
        if (spec.is_scalar()) {
          r.add(CheckLevel::error,
                fmt::format("{}: {} is random but definition expects scalar", uuid, name));
          line_ok = false;
        }
        continue;
      }
      const auto& blob = std::get<SafetensorsInput>(input);
      if (spec.is_scalar()) {
        r.add(CheckLevel::error,
              fmt::format("{}: {} is safetensors but definition expects scalar", uuid, name));
        line_ok = false;
        continue;
      }
      const std::filesystem::path full = root / blob.path;
      std::error_code ec;
      if (!std::filesystem::exists(full, ec)) {
        const std::string message = fmt::format("{}: blob missing at {}", uuid, blob.path);
        if (missing_blobs.insert(message).second) {
          r.add(CheckLevel::error, message);
        }
        line_ok = false;
        continue;
      }
      const auto& header = cached_header(headers, full);
      if (!header) {
        std::string message = fmt::format("{}: blob load failed: {}", uuid, header.error().message);
        if (!header.error().hint.empty()) {
          message += fmt::format(" ({})", header.error().hint);
        }
        r.add(CheckLevel::error, message);
        line_ok = false;
        continue;
      }
      const auto entry = header->tensors.find(blob.tensor_key);
      if (entry == header->tensors.end()) {
        r.add(CheckLevel::error,
              fmt::format("{}: tensor key '{}' not found in {}", uuid, blob.tensor_key, blob.path));
        line_ok = false;
        continue;
      }
      const std::vector<std::int64_t>& expected = *(*shapes)[i];
      if (entry->second.shape != expected) {
        r.add(CheckLevel::error,
              fmt::format("{}: {} shape mismatch: expected {}, got {}", uuid, name,
                          py_tuple_repr(expected), py_tuple_repr(entry->second.shape)));
        line_ok = false;
        continue;
      }
      const std::string_view expected_dtype = safetensors_dtype_name(spec.dtype);
      const bool dtype_ok = spec.dtype == DType::float4_e2m1
                                ? entry->second.dtype == "U8" || entry->second.dtype == "I8"
                                : entry->second.dtype == expected_dtype;
      if (!dtype_ok) {
        r.add(CheckLevel::error,
              fib_message(fmt::format("{}: {} dtype mismatch: the definition says {} ({}), the "
                                      "blob holds {}",
                                      uuid, name, to_string(spec.dtype),
                                      expected_dtype.empty() ? "U8" : expected_dtype,
                                      entry->second.dtype)));
        // fib's own check: the old tool's "N valid" count is unchanged by it.
      }
    }
    // fib's constraint checks run on every line whose axes and inputs match the definition, so a
    // missing blob only leaves the constraints that read its data unevaluated.
    if (!def.constraints.empty()) {
      const ConstraintEnvironment env = constraint_environment(def, w, *shapes, root, headers);
      for (std::size_t c = 0; c < def.constraints.size(); ++c) {
        const ConstraintResult result = evaluate_constraint(def.constraints[c], env);
        if (result.outcome == ConstraintOutcome::violated) {
          r.add(CheckLevel::error,
                fib_message(fmt::format("{}: constraint '{}' does not hold: {}", uuid,
                                        excerpt(def.constraints[c]), result.detail)));
        } else if (result.outcome == ConstraintOutcome::not_evaluable) {
          if (tallies[c].not_evaluated++ == 0) {
            tallies[c].first_detail = result.detail;
          }
        }
      }
    }
    if (line_ok) {
      ++valid;
    }
  }
  for (std::size_t c = 0; c < tallies.size(); ++c) {
    if (tallies[c].not_evaluated > 0) {
      r.add(CheckLevel::info,
            fib_message(fmt::format("constraint '{}' not evaluated on {} of {} workloads: {}",
                                    excerpt(def.constraints[c]), tallies[c].not_evaluated, total,
                                    tallies[c].first_detail)));
    }
  }
  r.add_front(CheckLevel::info, valid == total ? fmt::format("{} valid", total)
                                               : fmt::format("{}/{} valid", valid, total));
  return r;
}

CheckResult check_solution(const DefinitionJob& job) {
  CheckResult r;
  if (job.solutions.empty()) {
    r.add(CheckLevel::info, "no solutions");
    return r;
  }
  std::size_t parsed = 0;
  for (const LoadedSolution* s : job.solutions) {
    const ScannedFile& f = *s->file;
    if (!s->parsed) {
      r.add(CheckLevel::error, fmt::format("{}: parse error: {}", f.name, s->error));
      continue;
    }
    ++parsed;
    if (s->solution.definition != job.name) {
      r.add(CheckLevel::error, fmt::format("{}: definition field '{}' != '{}'", f.name,
                                           s->solution.definition, job.name));
    }
    if (s->solution.author != f.author) {
      r.add(CheckLevel::error, fmt::format("{}: author field '{}' != path '{}'", f.name,
                                           s->solution.author, f.author));
    }
    if (s->solution.name != f.name) {
      r.add(CheckLevel::error,
            fmt::format("{}: name field '{}' != path '{}'", f.name, s->solution.name, f.name));
    }
  }
  r.add_front(CheckLevel::info, fmt::format("{} solutions", parsed));
  return r;
}

std::set<std::string> workload_uuids(const DefinitionJob& job) {
  std::set<std::string> uuids;
  if (job.workload != nullptr && job.workload->parsed) {
    for (const TraceLine& line : job.workload->lines) {
      uuids.insert(line.trace.workload.uuid);
    }
  }
  return uuids;
}

std::set<std::string> parsed_solution_names(const DefinitionJob& job) {
  std::set<std::string> names;
  for (const LoadedSolution* s : job.solutions) {
    if (s->parsed) {
      names.insert(s->file->name);
    }
  }
  return names;
}

CheckResult check_trace(const DefinitionJob& job) {
  CheckResult r;
  if (job.traces.empty()) {
    r.add(CheckLevel::info, "no trace files");
    return r;
  }
  const std::set<std::string> uuids = workload_uuids(job);
  const std::set<std::string> solutions = parsed_solution_names(job);
  for (const LoadedTraceFile* t : job.traces) {
    const std::string& author = t->file->author;
    if (!t->parsed) {
      r.add(CheckLevel::error, fmt::format("{}: parse error: {}", author, t->error));
      continue;
    }
    // Coverage counts every line of the file, including those after a definition mismatch.
    std::set<std::string> seen;
    std::size_t unknown_workloads = 0;
    std::string first_unknown;
    for (const TraceLine& line : t->lines) {
      seen.insert(line.trace.workload.uuid);
      if (!uuids.empty() && !uuids.contains(line.trace.workload.uuid) && unknown_workloads++ == 0) {
        first_unknown = line.trace.workload.uuid;
      }
    }
    for (const TraceLine& line : t->lines) {
      const Trace& trace = line.trace;
      if (trace.definition != job.name) {
        r.add(CheckLevel::error,
              fmt::format("{}: trace definition '{}' != '{}'", author, trace.definition, job.name));
        break;
      }
      if (!trace.solution || !trace.evaluation) {
        r.add(CheckLevel::error, fmt::format("{}: trace entry {} missing solution or evaluation",
                                             author, trace.workload.uuid));
        continue;
      }
      if (!solutions.contains(*trace.solution)) {
        r.add(CheckLevel::error,
              fmt::format("{}: trace references unknown solution '{}'", author, *trace.solution));
      }
    }
    if (!t->lines.empty() && !uuids.empty()) {
      std::size_t missing = 0;
      for (const std::string& u : uuids) {
        missing += seen.contains(u) ? 0 : 1;
      }
      if (missing > 0) {
        r.add(CheckLevel::warning,
              fmt::format("{} missing {}/{} workloads", author, missing, uuids.size()));
      }
    }
    if (unknown_workloads > 0) {
      r.add(CheckLevel::warning,
            fib_message(fmt::format("{}: {} trace entr{} name workloads that are not in the "
                                    "workload file (first: {})",
                                    author, unknown_workloads, unknown_workloads == 1 ? "y" : "ies",
                                    first_unknown)));
    }
  }
  return r;
}

CheckResult check_baseline(const DefinitionJob& job, GpuChecks gpu) {
  CheckResult r;
  std::vector<const LoadedSolution*> baselines;
  for (const LoadedSolution* s : job.solutions) {
    if (s->file->author == "baseline") {
      baselines.push_back(s);
    }
  }
  if (baselines.empty()) {
    r.add(CheckLevel::warning, "no baseline solution");
  } else {
    std::vector<std::string> stems;
    for (const LoadedSolution* s : baselines) {
      stems.push_back(s->file->name);
    }
    r.add(CheckLevel::info, fmt::format("solution: {}", fmt::join(stems, ", ")));
    if (job.baseline_build_messages) {
      for (const CheckMessage& message : *job.baseline_build_messages) {
        r.add(message.level, message.message);
      }
    } else if (gpu == GpuChecks::enabled && job.definition->loaded()) {
      r.add(CheckLevel::info, fib_message("baseline builds not run: the reference worker is not "
                                          "available (use --disable-gpu to silence this)"));
    }
  }
  const LoadedTraceFile* trace = nullptr;
  for (const LoadedTraceFile* t : job.traces) {
    if (t->file->author == "baseline") {
      trace = t;
    }
  }
  if (trace == nullptr) {
    if (!baselines.empty()) {
      r.add(CheckLevel::warning, "trace missing");
    }
    return r;
  }
  if (!trace->parsed) {
    r.add(CheckLevel::error, fmt::format("trace parse error: {}", trace->error));
    return r;
  }
  std::set<std::string> baseline_names;
  for (const LoadedSolution* s : baselines) {
    baseline_names.insert(s->file->name);
  }
  for (const TraceLine& line : trace->lines) {
    const auto& solution = line.trace.solution;
    if (solution && !solution->empty() && !baseline_names.contains(*solution)) {
      r.add(CheckLevel::error,
            fmt::format("trace references non-baseline solution '{}'", *solution));
      break;
    }
  }
  std::size_t failing = 0;
  std::set<std::string> covered;
  for (const TraceLine& line : trace->lines) {
    if (line.trace.evaluation && line.trace.evaluation->status != EvaluationStatus::passed) {
      ++failing;
    }
    covered.insert(line.trace.workload.uuid);
  }
  if (failing > 0) {
    r.add(CheckLevel::warning, fmt::format("trace has {} non-passing entries", failing));
  } else {
    r.add(CheckLevel::info, "trace: all passed");
  }
  const std::set<std::string> uuids = workload_uuids(job);
  if (!uuids.empty()) {
    const bool all_covered = std::all_of(uuids.begin(), uuids.end(),
                                         [&](const std::string& u) { return covered.contains(u); });
    if (all_covered) {
      r.add(CheckLevel::info, fmt::format("trace: {}/{} workloads", covered.size(), uuids.size()));
    } else {
      r.add(CheckLevel::warning,
            fmt::format("trace covers {}/{} workloads", covered.size(), uuids.size()));
    }
  }
  return r;
}

// fib's dataset-level section: everything the old tool never reports.
CheckResult check_dataset_level(const DatasetScan& scan) {
  CheckResult r;
  for (const auto& [name, file] : scan.workloads) {
    if (!scan.definitions.contains(name)) {
      r.add(CheckLevel::warning,
            fmt::format("{}: workload file for '{}', but there is no definitions/*/{}.json",
                        file.path.string(), name, name));
    }
  }
  for (const ScannedFile& s : scan.solutions) {
    if (!scan.definitions.contains(s.definition)) {
      r.add(CheckLevel::warning,
            fmt::format("{}: solution for '{}', but there is no definitions/*/{}.json",
                        s.path.string(), s.definition, s.definition));
    }
  }
  for (const auto& [key, file] : scan.traces) {
    if (!scan.definitions.contains(file.name)) {
      r.add(CheckLevel::warning,
            fmt::format("{}: trace file for '{}', but there is no definitions/*/{}.json",
                        file.path.string(), file.name, file.name));
    }
  }
  for (const ScannedFile& f : scan.shadowed) {
    r.add(CheckLevel::warning,
          fmt::format("{}: ignored, a later file with the same name replaces it", f.path.string()));
  }
  for (const IgnoredFile& f : scan.ignored) {
    const bool json_like = f.path.extension() == ".json" || f.path.extension() == ".jsonl";
    r.add(json_like ? CheckLevel::warning : CheckLevel::info,
          fmt::format("{}: {}", f.path.string(), f.reason));
  }
  return r;
}

// The files one target definition needs (pointers into the scan).
struct TargetFiles {
  const DefinitionFile* definition = nullptr;
  const ScannedFile* workload = nullptr;
  std::vector<const ScannedFile*> solutions;
  std::vector<const ScannedFile*> traces;
  std::uintmax_t bytes = 0; // the files' total size on disk (0 for one that cannot be stat'ed)
};

std::uintmax_t file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// Target definitions validated together (loaded, Python-checked and checked, then freed): at most
// 64, and no more once their files reach 4 MiB, so that large trace files do not pile up in one
// chunk. A chunk always holds at least one definition.
constexpr std::size_t k_chunk_definitions = 64;
constexpr std::uintmax_t k_chunk_bytes = std::uintmax_t{4} << 20;

// The end of the chunk that starts at `begin`.
std::size_t chunk_end(const std::vector<TargetFiles>& files, std::size_t begin) {
  std::size_t end = begin;
  std::uintmax_t bytes = 0;
  while (end < files.size() && end - begin < k_chunk_definitions &&
         (end == begin || bytes + files[end].bytes <= k_chunk_bytes)) {
    bytes += files[end].bytes;
    ++end;
  }
  return end;
}

// Hands the pages freed with a chunk back to the system. glibc keeps freed memory in the arenas of
// the worker threads (one per thread), which would otherwise add up over the chunks.
void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// One chunk's loaded files and jobs. The jobs point into the other vectors.
struct LoadedChunk {
  std::vector<LoadedDefinition> definitions;
  std::vector<LoadedTraceFile> workloads;
  std::vector<LoadedSolution> solutions;
  std::vector<LoadedTraceFile> traces;
  std::vector<DefinitionJob> jobs;
};

// Reads and parses, in parallel, the files of targets [begin, end).
void load_chunk(const std::vector<std::string>& targets, const std::vector<TargetFiles>& files,
                std::size_t begin, std::size_t end, LoadedChunk& chunk) {
  const std::size_t n = end - begin;
  std::size_t workload_count = 0;
  std::size_t solution_count = 0;
  std::size_t trace_count = 0;
  for (std::size_t i = begin; i < end; ++i) {
    workload_count += files[i].workload != nullptr ? 1 : 0;
    solution_count += files[i].solutions.size();
    trace_count += files[i].traces.size();
  }
  // Reserved up front: the jobs hold pointers into these vectors.
  chunk.definitions.resize(n);
  chunk.jobs.resize(n);
  chunk.workloads.reserve(workload_count);
  chunk.solutions.reserve(solution_count);
  chunk.traces.reserve(trace_count);
  for (std::size_t k = 0; k < n; ++k) {
    const TargetFiles& f = files[begin + k];
    DefinitionJob& job = chunk.jobs[k];
    chunk.definitions[k].entry = f.definition;
    job.name = targets[begin + k];
    job.definition = &chunk.definitions[k];
    if (f.workload != nullptr) {
      job.workload = &chunk.workloads.emplace_back(LoadedTraceFile{f.workload, false, {}, {}});
    }
    for (const ScannedFile* s : f.solutions) {
      job.solutions.push_back(&chunk.solutions.emplace_back(LoadedSolution{s, false, {}, {}}));
    }
    for (const ScannedFile* t : f.traces) {
      job.traces.push_back(&chunk.traces.emplace_back(LoadedTraceFile{t, false, {}, {}}));
    }
  }
  const std::size_t loads = chunk.definitions.size() + chunk.workloads.size() +
                            chunk.solutions.size() + chunk.traces.size();
  parallel_for(loads, [&](std::size_t i) {
    if (i < chunk.definitions.size()) {
      load_definition(chunk.definitions[i]);
      return;
    }
    i -= chunk.definitions.size();
    if (i < chunk.workloads.size()) {
      load_trace_file(chunk.workloads[i]);
      return;
    }
    i -= chunk.workloads.size();
    if (i < chunk.solutions.size()) {
      load_solution(chunk.solutions[i]);
      return;
    }
    load_trace_file(chunk.traces[i - chunk.solutions.size()]);
  });
}

// The Python-exact definition checks of one chunk, on the calling thread. After the first
// interpreter failure (reported once to `environment`) no more are attempted.
void run_python_checks(LoadedChunk& chunk, PythonFrontend& python, bool& python_failed,
                       DiagnosticSink& environment) {
  for (std::size_t i = 0; i < chunk.definitions.size(); ++i) {
    LoadedDefinition& d = chunk.definitions[i];
    if (python_failed || !d.document || !d.document->root.is_object()) {
      continue;
    }
    DiagnosticList sink;
    if (auto failure =
            check_definition_python(d.definition, *d.document, python, ArityCheck::yes, sink)) {
      environment.report(std::move(*failure));
      python_failed = true;
      continue;
    }
    for (const Diagnostic& diag : sink.items()) {
      if (is_legacy_error(diag)) {
        d.errors.push_back(diag);
      } else if (diag.severity == Severity::error) {
        chunk.jobs[i].fib_definition_errors.push_back(diag.message);
      }
    }
  }
}

// The dumper's `init` source of a definition ("" when it has none).
std::string init_source(const LoadedDefinition& definition) {
  if (!definition.document || !definition.document->root.is_object()) {
    return "";
  }
  const auto it = definition.document->root.find("init");
  return it != definition.document->root.end() && it->is_string() ? it->get<std::string>() : "";
}

// The reference phase of one chunk (this thread: one worker for the whole run). Definitions that
// failed to load are not run, as the old tool builds only loaded ones.
void run_reference_checks_of(LoadedChunk& chunk, const ValidateDatasetOptions& options,
                             bool& unavailable_reported, DiagnosticSink& environment) {
  for (DefinitionJob& job : chunk.jobs) {
    if (job.definition == nullptr || !job.definition->loaded()) {
      continue;
    }
    std::vector<CheckMessage> messages;
    bool unavailable = false;
    for (const Diagnostic& d :
         run_reference_checks(job.definition->definition, options.reference_checks, *options.runner,
                              init_source(*job.definition))) {
      if (d.code == codes::k_worker_unavailable || d.code == codes::k_worker_protocol) {
        unavailable = true;
        if (!unavailable_reported && options.reference_checks_requested) {
          environment.report(d);
          unavailable_reported = true;
        }
        continue;
      }
      if (d.code == codes::k_reference_build_failed ||
          (d.code == codes::k_reference_ok && d.message == "reference build: ok")) {
        // The old tool's own messages, as it writes them.
        messages.push_back(CheckMessage{
            d.severity == Severity::error ? CheckLevel::error : CheckLevel::info, d.message});
        continue;
      }
      const CheckLevel level = d.severity == Severity::error     ? CheckLevel::error
                               : d.severity == Severity::warning ? CheckLevel::warning
                                                                 : CheckLevel::info;
      messages.push_back(CheckMessage{level, fib_message(d.message)});
    }
    if (!unavailable) {
      job.reference_messages = std::move(messages);
    }
  }
}

// The last non-empty line of a build log: what the old tool's exception text would say.
std::string last_line(const std::string& log) {
  std::size_t end = log.size();
  while (end > 0) {
    const std::size_t start = log.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    if (end > from) {
      return log.substr(from, end - from);
    }
    if (start == std::string::npos) {
      break;
    }
    end = start;
  }
  return log;
}

// Baseline builds (baseline category) and the benchmark category (contract §3.2), through the
// worker: the baseline solutions and the reference as a pseudo-solution on every workload.
void run_solution_checks_of(LoadedChunk& chunk, const ValidateDatasetOptions& options,
                            const std::set<Category>& enabled) {
  const std::filesystem::path cache = default_build_cache();
  for (DefinitionJob& job : chunk.jobs) {
    if (job.definition == nullptr || !job.definition->parsed()) {
      continue;
    }
    std::vector<const LoadedSolution*> baselines;
    for (const LoadedSolution* s : job.solutions) {
      if (s->file->author == "baseline" && s->parsed) {
        baselines.push_back(s);
      }
    }
    if (enabled.contains(Category::baseline)) {
      std::vector<CheckMessage> messages;
      bool unavailable = false;
      for (const LoadedSolution* s : baselines) {
        auto built = options.runner->build_solution(s->solution, cache);
        if (built.verdict == ReferenceVerdict::unavailable) {
          unavailable = true;
          break;
        }
        messages.push_back(
            built.verdict == ReferenceVerdict::ok
                ? CheckMessage{CheckLevel::info, fmt::format("build {}: ok", s->file->name)}
                : CheckMessage{CheckLevel::error, fmt::format("build {} failed: {}", s->file->name,
                                                              last_line(built.log))});
      }
      if (!unavailable) {
        job.baseline_build_messages = std::move(messages);
      }
    }
    if (!enabled.contains(Category::benchmark)) {
      continue;
    }
    CheckResult r;
    if (!job.definition->loaded()) {
      r.add(CheckLevel::error, "cannot benchmark: definition failed to load");
      job.benchmark = r;
      continue;
    }
    std::vector<const Workload*> workloads;
    if (job.workload != nullptr && job.workload->parsed) {
      for (const TraceLine& line : job.workload->lines) {
        workloads.push_back(&line.trace.workload);
      }
    }
    if (workloads.empty()) {
      r.add(CheckLevel::warning, "no workloads to benchmark");
      job.benchmark = r;
      continue;
    }
    if (baselines.empty()) {
      r.add(CheckLevel::warning, "no baseline solutions for benchmark");
      job.benchmark = r;
      continue;
    }
    const Definition& definition = job.definition->definition;
    Solution reference;
    reference.name = definition.name + "__reference";
    reference.definition = definition.name;
    reference.author = "__reference__";
    reference.spec.language = Language::python;
    reference.spec.target_hardware = {"cuda"};
    reference.spec.entry_point = "main.py::run";
    reference.spec.destination_passing_style = DestinationPassing::no;
    reference.sources = {SourceFile{"main.py", definition.reference}};
    EvaluateOptions evaluate;
    evaluate.warmup = 2;
    evaluate.iterations = 5;
    evaluate.cache = cache;
    evaluate.dataset_root = options.root;
    bool baseline_failed = false;
    bool reference_failed = false;
    bool unavailable = false;
    const auto status_of = [&](const SolutionEvaluation& e) -> std::optional<std::string> {
      if (!e.evaluation) {
        for (const auto& d : e.diagnostics) {
          if (d.code == codes::k_worker_unavailable || d.code == codes::k_worker_protocol) {
            unavailable = true;
          }
        }
        return std::nullopt; // skipped: no trace, as the old runner's skipped workloads
      }
      return e.evaluation->value("status", std::string("?"));
    };
    for (const LoadedSolution* s : baselines) {
      for (const Workload* workload : workloads) {
        const auto status =
            status_of(options.runner->evaluate(definition, s->solution, *workload, evaluate));
        if (status && *status != "PASSED") {
          r.add(CheckLevel::error, fmt::format("baseline failed: {} on {}: {}", s->solution.name,
                                               workload->uuid, *status));
          baseline_failed = true;
        }
      }
    }
    for (const Workload* workload : workloads) {
      const auto status =
          status_of(options.runner->evaluate(definition, reference, *workload, evaluate));
      if (status && *status != "PASSED") {
        r.add(CheckLevel::error,
              fmt::format("reference failed: workload {}: {}", workload->uuid, *status));
        reference_failed = true;
      }
    }
    if (unavailable) {
      r = CheckResult{};
      r.add(CheckLevel::error, "benchmark failed: the reference worker is not available");
      job.benchmark = r;
      continue;
    }
    if (!baseline_failed) {
      r.add(CheckLevel::info, "baseline: PASS");
    }
    if (!reference_failed) {
      r.add(CheckLevel::info, "reference: PASS");
    }
    job.benchmark = r;
  }
}

// Runs the enabled categories of one definition, in their fixed order, and sets its status.
void run_categories(DefinitionJob& job, const std::set<Category>& enabled,
                    const std::filesystem::path& root, GpuChecks gpu) {
  std::set<std::string> layout_blobs;
  std::set<std::string> workload_blobs;
  for (const Category category : k_category_order) {
    if (!enabled.contains(category)) {
      continue;
    }
    switch (category) {
    case Category::layout:
      job.report[category] = check_layout(job, root, layout_blobs);
      break;
    case Category::definition:
      job.report[category] = check_definition(job, gpu);
      break;
    case Category::workload:
      job.report[category] = check_workload(job, root, workload_blobs);
      break;
    case Category::solution:
      job.report[category] = check_solution(job);
      break;
    case Category::trace:
      job.report[category] = check_trace(job);
      break;
    case Category::baseline:
      job.report[category] = check_baseline(job, gpu);
      break;
    case Category::benchmark:
      // Run in the reference phase; "None (skipped)" when the worker was not available.
      if (job.benchmark) {
        job.report[category] = *job.benchmark;
      }
      break;
    }
  }
  job.report.update_status();
}

} // namespace

DatasetReport validate_dataset(const ValidateDatasetOptions& options, PythonFrontend& python,
                               DiagnosticSink& environment) {
  DatasetReport report;
  const std::filesystem::path root = normalize_root(options.root);
  report.config.dataset = root.string();
  if (auto checks = resolve_checks(options.checks, options.gpu)) {
    report.config.checks = std::move(*checks);
  }
  report.config.disable_gpu = options.gpu == GpuChecks::disabled;
  report.config.op_types = options.op_types;
  report.config.definitions = options.definitions;
  std::set<Category> enabled;
  for (const std::string& c : report.config.checks) {
    if (auto category = parse_category(c)) {
      enabled.insert(*category);
    }
  }

  if (enabled.contains(Category::benchmark) && options.runner == nullptr) {
    spdlog::warn("the benchmark category is reported as skipped: no reference worker to run it");
  }
  spdlog::info("Scanning dataset at {}", root.string());
  const DatasetScan scan = scan_dataset(root);
  spdlog::info("Found {} definitions", scan.definitions.size());

  // Target definitions: all, or the union of the filters; then this shard's part.
  std::vector<std::string> targets;
  const bool filtered = !options.op_types.empty() || !options.definitions.empty();
  for (const auto& [name, entry] : scan.definitions) {
    const bool selected = !filtered ||
                          std::find(options.op_types.begin(), options.op_types.end(),
                                    entry.file.op_type) != options.op_types.end() ||
                          std::find(options.definitions.begin(), options.definitions.end(), name) !=
                              options.definitions.end();
    if (selected && shard_owns(options.shard, name)) {
      targets.push_back(name);
    }
  }
  spdlog::info("Target definitions: {}", targets.size());

  // Where each target's files are (pointers into `scan`), in the old tool's order: solutions by
  // path, traces by author.
  std::vector<TargetFiles> files(targets.size());
  {
    std::map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      index.emplace(targets[i], i);
      files[i].definition = &scan.definitions.at(targets[i]);
      files[i].bytes = file_bytes(files[i].definition->file.path);
      report.definition_files.emplace(targets[i], files[i].definition->file.path);
    }
    for (const auto& [name, file] : scan.workloads) {
      if (auto it = index.find(name); it != index.end()) {
        files[it->second].workload = &file;
        files[it->second].bytes += file_bytes(file.path);
      }
    }
    for (const ScannedFile& file : scan.solutions) {
      if (auto it = index.find(file.definition); it != index.end()) {
        files[it->second].solutions.push_back(&file);
        files[it->second].bytes += file_bytes(file.path);
      }
    }
    for (const auto& [key, file] : scan.traces) {
      if (auto it = index.find(file.name); it != index.end()) {
        files[it->second].traces.push_back(&file);
        files[it->second].bytes += file_bytes(file.path);
      }
    }
  }

  // Chunk by chunk, so that only one chunk's parsed files are held at a time.
  bool python_failed = false;
  bool worker_unavailable_reported = false;
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  for (std::size_t begin = 0, end = 0; begin < targets.size(); begin = end) {
    end = chunk_end(files, begin);
    LoadedChunk chunk;
    // Phase 1 (parallel): read and parse every file the chunk's targets need.
    load_chunk(targets, files, begin, end, chunk);
    // Phase 2 (this thread): the Python-exact checks, one interpreter for the whole run.
    run_python_checks(chunk, python, python_failed, environment);
    // Phase 2b (this thread): reference execution through the worker, when asked for.
    if (options.reference_checks != ReferenceChecks::none && options.runner != nullptr) {
      run_reference_checks_of(chunk, options, worker_unavailable_reported, environment);
    }
    if (options.gpu == GpuChecks::enabled && options.runner != nullptr &&
        (enabled.contains(Category::baseline) || enabled.contains(Category::benchmark))) {
      run_solution_checks_of(chunk, options, enabled);
    }
    // Phase 3 (parallel): the categories of each definition.
    parallel_for(chunk.jobs.size(), [&](std::size_t i) {
      DefinitionJob& job = chunk.jobs[i];
      run_categories(job, enabled, root, options.gpu);
      const std::size_t finished = ++done;
      if (options.progress) {
        const std::lock_guard lock(progress_mutex);
        options.progress(finished, targets.size());
      }
    });
    for (DefinitionJob& job : chunk.jobs) {
      report.definitions.emplace(job.name, std::move(job.report));
    }
    chunk = LoadedChunk{};
    release_free_memory();
  }
  report.dataset = check_dataset_level(scan);
  return report;
}

} // namespace fib
