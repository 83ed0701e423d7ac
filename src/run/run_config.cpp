// `fib run --config FILE` (include/fib/run/run_config.hpp): the file read into JSON (TOML through
// toml++ at the boundary), its layers checked, and the settings of a definition resolved.

#include <fib/run/run_config.hpp>

#include <fib/base/codes.hpp>
#include <fib/exec/sampling.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/toml_depth.hpp>
#include <fib/util/closest_match.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cmath>
#include <functional>

namespace fib {
namespace {

constexpr std::uintmax_t k_max_run_config_bytes = std::uintmax_t{4} << 20;
constexpr std::size_t k_max_toml_depth = 64;

// The settings of one layer, by their file keys.
const std::vector<std::string>& layer_keys() {
  static const std::vector<std::string> keys = {
      "warmup_runs", "iterations", "num_trials", "atol",       "rtol", "required_matched_ratio",
      "tolerance",   "evaluator",  "cold_cache", "stop_at_ci", "extra"};
  return keys;
}

// The old tool's run options, which fib takes on the command line only.
const std::map<std::string, std::string, std::less<>>& command_line_only() {
  static const std::map<std::string, std::string, std::less<>> keys = {
      {"definitions", "--definitions"},
      {"solutions", "--solutions"},
      {"timeout_seconds", "--timeout"},
      {"use_isolated_runner", ""},
      {"profile_baseline", ""},
      {"log_dir", ""},
      {"sampling_validation_trials", "--sampling-validation-trials (or extra."
                                     "sampling_validation_trials)"},
      {"sampling_tvd_threshold", "--sampling-tvd-threshold (or extra.sampling_tvd_threshold)"}};
  return keys;
}

// Reports one file's problems, with the line of the value where it is known.
class ConfigProblems {
public:
  ConfigProblems(const std::filesystem::path& file, DiagnosticSink& sink,
                 std::function<int(const std::string&)> line_of)
      : m_file(file), m_sink(sink), m_line_of(std::move(line_of)) {}

  void error(const std::string& pointer, std::string message) {
    report(codes::k_run_config_invalid, pointer, std::move(message));
    m_failed = true;
  }
  void warning(const std::string& pointer, std::string message) {
    report(codes::k_run_settings, pointer, std::move(message));
  }
  bool failed() const { return m_failed; }

private:
  void report(std::string_view code, const std::string& pointer, std::string message) {
    Diagnostic d = make_diagnostic(code, std::move(message));
    if (code == codes::k_run_settings) {
      d.severity = Severity::warning;
    }
    d.file = m_file;
    d.pointer = pointer;
    d.line = m_line_of ? m_line_of(pointer) : 0;
    m_sink.report(std::move(d));
  }

  std::filesystem::path m_file;
  DiagnosticSink& m_sink;
  std::function<int(const std::string&)> m_line_of;
  bool m_failed = false;
};

std::string json_type_name(const Json& value) {
  if (value.is_object()) {
    return "an object";
  }
  if (value.is_array()) {
    return "an array";
  }
  if (value.is_string()) {
    return "a string";
  }
  if (value.is_boolean()) {
    return "a boolean";
  }
  if (value.is_number()) {
    return "a number";
  }
  return "null";
}

std::optional<int> whole_number(ConfigProblems& problems, const Json& value,
                                const std::string& pointer, std::string_view key, int low,
                                int high) {
  if (!value.is_number_integer()) {
    problems.error(pointer,
                   fmt::format("'{}' must be a whole number, not {}", key, json_type_name(value)));
    return std::nullopt;
  }
  const auto number = value.get<std::int64_t>();
  if (number < low || number > high) {
    problems.error(pointer,
                   fmt::format("'{}' must be between {} and {}, not {}", key, low, high, number));
    return std::nullopt;
  }
  return static_cast<int>(number);
}

std::optional<double> real_number(ConfigProblems& problems, const Json& value,
                                  const std::string& pointer, std::string_view key) {
  if (!value.is_number()) {
    problems.error(pointer,
                   fmt::format("'{}' must be a number, not {}", key, json_type_name(value)));
    return std::nullopt;
  }
  const double number = value.get<double>();
  if (!std::isfinite(number)) {
    problems.error(pointer, fmt::format("'{}' must be a finite number", key));
    return std::nullopt;
  }
  return number;
}

template <typename Enum>
std::optional<Enum> named_value(ConfigProblems& problems, const Json& value,
                                const std::string& pointer, std::string_view key) {
  std::vector<std::string> names;
  for (const auto& entry : EnumNames<Enum>::k_table) {
    names.emplace_back(entry.name);
  }
  if (value.is_string()) {
    if (auto parsed = parse_enum<Enum>(value.get<std::string>())) {
      return *parsed;
    }
  }
  problems.error(pointer, fmt::format("'{}' must be one of \"{}\", not {}", key,
                                      fmt::join(names, "\", \""), json_excerpt(value)));
  return std::nullopt;
}

void read_extra(ConfigProblems& problems, const Json& value, const std::string& pointer,
                EvaluationOverrides& out) {
  if (!value.is_object()) {
    problems.error(pointer, fmt::format("'extra' must be a table, not {}", json_type_name(value)));
    return;
  }
  for (const auto& [key, item] : value.items()) {
    const std::string at = pointer_append(pointer, key);
    if (key == "sampling_validation_trials") {
      out.sampling_validation_trials = whole_number(problems, item, at, key, 1, 100000);
    } else if (key == "sampling_samples") {
      if (auto number = whole_number(problems, item, at, key, 1, 100'000'000)) {
        out.sampling_samples = *number;
      }
    } else if (key == "sampling_tvd_threshold") {
      auto number = real_number(problems, item, at, key);
      if (number && (*number < 0 || *number > 1)) {
        problems.error(at, fmt::format("'{}' must be between 0 and 1, not {:g}", key, *number));
        number.reset();
      }
      out.sampling_tvd_threshold = number;
    } else {
      const std::string near = closest_match(
          key, {"sampling_validation_trials", "sampling_tvd_threshold", "sampling_samples"});
      problems.error(at, near.empty() ? fmt::format("unknown key 'extra.{}'", key)
                                      : fmt::format("unknown key 'extra.{}' (did you mean "
                                                    "'extra.{}'?)",
                                                    key, near));
    }
  }
}

// One layer's keys, at `pointer`; the top level also has the old tool's run options to refuse.
EvaluationOverrides read_layer(ConfigProblems& problems, const Json& layer,
                               const std::string& pointer, bool top_level) {
  EvaluationOverrides out;
  for (const auto& [key, value] : layer.items()) {
    const std::string at = pointer_append(pointer, key);
    if (key == "warmup_runs") {
      out.warmup = whole_number(problems, value, at, key, 0, 100000);
    } else if (key == "iterations") {
      out.iterations = whole_number(problems, value, at, key, 1, 100000);
    } else if (key == "num_trials") {
      out.trials = whole_number(problems, value, at, key, 1, 1000);
    } else if (key == "atol" || key == "rtol") {
      auto number = real_number(problems, value, at, key);
      if (number && *number < 0) {
        problems.error(at, fmt::format("'{}' must not be negative", key));
        number.reset();
      }
      (key == "atol" ? out.atol : out.rtol) = number;
    } else if (key == "required_matched_ratio") {
      auto number = real_number(problems, value, at, key);
      if (number && (*number <= 0 || *number > 1)) {
        problems.error(at,
                       fmt::format("'{}' must be above 0 and at most 1, not {:g}", key, *number));
        number.reset();
      }
      out.required_matched_ratio = number;
    } else if (key == "tolerance") {
      if (value == "fixed" || value == "per-dtype") {
        out.tolerance = value == "fixed" ? ToleranceTable::off : ToleranceTable::on;
      } else {
        problems.error(at, fmt::format("'tolerance' must be \"fixed\" or \"per-dtype\", not {}",
                                       json_excerpt(value)));
      }
    } else if (key == "evaluator") {
      out.evaluator = named_value<EvaluatorChoice>(problems, value, at, key);
    } else if (key == "cold_cache") {
      if (value.is_boolean()) {
        out.cold_cache = value.get<bool>() ? ColdCache::yes : ColdCache::no;
      } else {
        problems.error(
            at, fmt::format("'cold_cache' must be true or false, not {}", json_type_name(value)));
      }
    } else if (key == "stop_at_ci") {
      auto number = real_number(problems, value, at, key);
      if (number && (*number <= 0 || *number >= 1)) {
        problems.error(at, fmt::format("'{}' must be above 0 and under 1, not {:g}", key, *number));
        number.reset();
      }
      out.stop_at_ci = number;
    } else if (key == "extra") {
      read_extra(problems, value, at, out);
    } else if (key == "scratch_limit") {
      problems.error(at, "'scratch_limit' is a setting of the whole run (each worker's scratch): "
                         "give it at the top of the file, not per op type or definition");
    } else if (const auto flag = command_line_only().find(key);
               top_level && flag != command_line_only().end()) {
      problems.error(at, flag->second.empty()
                             ? fmt::format("'{}' is a setting of the old tool's runner that fib "
                                           "does not have",
                                           key)
                             : fmt::format("'{}' is a run option, not an evaluation setting: give "
                                           "it on the command line ({})",
                                           key, flag->second));
    } else {
      std::vector<std::string> known = layer_keys();
      if (top_level) {
        known.insert(known.end(), {"op_type_config", "definition_config"});
      }
      const std::string near = closest_match(key, known);
      problems.error(at, near.empty()
                             ? fmt::format("unknown key '{}'", key)
                             : fmt::format("unknown key '{}' (did you mean '{}'?)", key, near));
    }
  }
  return out;
}

// The top-level `scratch_limit`: bytes, a whole number of at least 1 MiB (a worker's scratch
// holds its inputs and kept outputs too).
std::optional<std::uint64_t> scratch_limit(ConfigProblems& problems, const Json& value) {
  constexpr std::uint64_t k_smallest = std::uint64_t{1} << 20;
  if (!value.is_number_integer() ||
      value.get<std::int64_t>() < static_cast<std::int64_t>(k_smallest)) {
    problems.error("/scratch_limit",
                   fmt::format("'scratch_limit' must be a whole number of bytes, at least {}, not "
                               "{}",
                               k_smallest, json_excerpt(value)));
    return std::nullopt;
  }
  return value.get<std::uint64_t>();
}

void read_layers(ConfigProblems& problems, const Json& root, std::string_view key,
                 std::map<std::string, EvaluationOverrides>& into) {
  const std::string pointer = pointer_append("", key);
  const Json& table = root[std::string(key)];
  if (!table.is_object()) {
    problems.error(pointer,
                   fmt::format("'{}' must be a table, not {}", key, json_type_name(table)));
    return;
  }
  for (const auto& [name, layer] : table.items()) {
    const std::string at = pointer_append(pointer, name);
    if (!layer.is_object()) {
      problems.error(at, fmt::format("'{}.{}' must be a table of settings, not {}", key, name,
                                     json_type_name(layer)));
      continue;
    }
    into[name] = read_layer(problems, layer, at, false);
  }
}

// A TOML document as JSON, with the line of each value; an error text for what JSON cannot hold.
std::optional<std::string> toml_to_json(const toml::node& node, const std::string& pointer,
                                        std::size_t depth, Json& out,
                                        std::map<std::string, int>& lines) {
  lines[pointer] = static_cast<int>(node.source().begin.line);
  if (depth > k_max_toml_depth) {
    return fmt::format("the document nests deeper than {} levels", k_max_toml_depth);
  }
  if (const auto* table = node.as_table()) {
    out = Json::object();
    for (const auto& [key, value] : *table) {
      const std::string name(key.str());
      if (auto problem =
              toml_to_json(value, pointer_append(pointer, name), depth + 1, out[name], lines)) {
        return problem;
      }
    }
  } else if (const auto* array = node.as_array()) {
    out = Json::array();
    for (std::size_t i = 0; i < array->size(); ++i) {
      out.push_back(nullptr);
      if (auto problem =
              toml_to_json((*array)[i], pointer_append(pointer, i), depth + 1, out.back(), lines)) {
        return problem;
      }
    }
  } else if (const auto* text = node.as_string()) {
    out = text->get();
  } else if (const auto* integer = node.as_integer()) {
    out = integer->get();
  } else if (const auto* real = node.as_floating_point()) {
    out = real->get();
  } else if (const auto* flag = node.as_boolean()) {
    out = flag->get();
  } else {
    out = fmt::format("<date or time on line {}>", node.source().begin.line);
  }
  return std::nullopt;
}

} // namespace

std::optional<RunConfig> load_run_config(const std::filesystem::path& file, DiagnosticSink& sink) {
  const auto fail = [&](std::string message, int line = 0) -> std::optional<RunConfig> {
    Diagnostic d = make_diagnostic(codes::k_run_config_invalid, std::move(message));
    d.file = file;
    d.line = line;
    sink.report(std::move(d));
    return std::nullopt;
  };
  if (file.extension() == ".yaml" || file.extension() == ".yml") {
    return fail("fib reads settings files as TOML (.toml) or JSON: write the same keys "
                "(op_type_config, definition_config, num_trials, ...) in one of those");
  }
  auto text = read_text_file(file, k_max_run_config_bytes);
  if (!text) {
    return fail(fmt::format("the settings file cannot be read: {}", text.error().message));
  }
  Json root;
  std::map<std::string, int> toml_lines;
  std::optional<JsonDocument> json_document;
  if (file.extension() == ".toml") {
    if (const auto line = toml_key_too_deep(*text)) {
      return fail(fmt::format("a key has more than {} dotted parts", k_max_toml_key_parts),
                  static_cast<int>(*line));
    }
    try {
      const toml::table document = toml::parse(*text, file.string());
      if (auto problem = toml_to_json(document, "", 0, root, toml_lines)) {
        return fail(*problem);
      }
    } catch (const toml::parse_error& error) {
      return fail(fmt::format("TOML: {}", error.description()),
                  static_cast<int>(error.source().begin.line));
    }
  } else {
    DiagnosticList ignored;
    auto parsed = parse_json(*text, file, ignored);
    if (!parsed) {
      Diagnostic d = parsed.error();
      d.code = std::string(codes::k_run_config_invalid);
      d.severity = Severity::error;
      d.message = "JSON: " + d.message;
      sink.report(std::move(d));
      return std::nullopt;
    }
    json_document = std::move(*parsed);
    root = json_document->root;
  }
  ConfigProblems problems(file, sink, [&](const std::string& pointer) {
    if (json_document) {
      return json_document->line_of(pointer);
    }
    const auto it = toml_lines.find(pointer);
    return it == toml_lines.end() ? 0 : it->second;
  });
  if (!root.is_object()) {
    problems.error(
        "", fmt::format("the settings must be a table (an object), not {}", json_type_name(root)));
    return std::nullopt;
  }
  RunConfig config;
  config.file = file;
  Json top = root;
  for (const auto* key : {"op_type_config", "definition_config"}) {
    top.erase(key);
  }
  if (const auto limit = top.find("scratch_limit"); limit != top.end()) {
    config.scratch_limit = scratch_limit(problems, *limit);
    top.erase(limit);
  }
  config.all = read_layer(problems, top, "", true);
  if (root.contains("op_type_config")) {
    read_layers(problems, root, "op_type_config", config.op_types);
  }
  if (root.contains("definition_config")) {
    read_layers(problems, root, "definition_config", config.definitions);
  }
  if (problems.failed()) {
    return std::nullopt;
  }
  return config;
}

Evaluator evaluator_for(const Definition& definition) {
  if (is_sampler(definition)) {
    return Evaluator::sampling;
  }
  if (definition.op_type == "moe") {
    return Evaluator::low_bit;
  }
  for (const auto& tag : definition.tags) {
    if (tag.starts_with("quant:") || tag.starts_with("quantization:")) {
      return Evaluator::low_bit;
    }
  }
  const auto low_bit_dtype = [](DType dtype) {
    return dtype == DType::float8_e4m3fn || dtype == DType::float8_e5m2 ||
           dtype == DType::float4_e2m1;
  };
  for (const auto* specs : {&definition.inputs, &definition.outputs}) {
    for (const auto& [name, spec] : *specs) {
      if (low_bit_dtype(spec.dtype)) {
        return Evaluator::low_bit;
      }
    }
  }
  return Evaluator::standard;
}

EvaluateOptions evaluation_for(const EvaluateOptions& base, const RunConfig& config,
                               const EvaluationOverrides& command_line,
                               const Definition& definition) {
  EvaluateOptions out = base;
  std::optional<EvaluatorChoice> choice;
  const auto apply = [&](const EvaluationOverrides& layer) {
    out.warmup = layer.warmup.value_or(out.warmup);
    out.iterations = layer.iterations.value_or(out.iterations);
    out.trials = layer.trials.value_or(out.trials);
    out.atol = layer.atol.value_or(out.atol);
    out.rtol = layer.rtol.value_or(out.rtol);
    out.tolerance_table = layer.tolerance.value_or(out.tolerance_table);
    out.cold_cache = layer.cold_cache.value_or(out.cold_cache);
    if (layer.stop_at_ci) {
      out.stop_at_ci = layer.stop_at_ci;
    }
    if (layer.required_matched_ratio) {
      out.required_matched_ratio = layer.required_matched_ratio;
    }
    if (layer.evaluator) {
      choice = layer.evaluator;
    }
    out.sampling.validation_trials =
        layer.sampling_validation_trials.value_or(out.sampling.validation_trials);
    out.sampling.tvd_threshold = layer.sampling_tvd_threshold.value_or(out.sampling.tvd_threshold);
    out.sampling.samples_per_row = layer.sampling_samples.value_or(out.sampling.samples_per_row);
  };
  apply(config.all);
  if (const auto op = config.op_types.find(definition.op_type); op != config.op_types.end()) {
    apply(op->second);
  }
  if (const auto own = config.definitions.find(definition.name); own != config.definitions.end()) {
    apply(own->second);
  }
  apply(command_line);
  switch (choice.value_or(EvaluatorChoice::automatic)) {
  case EvaluatorChoice::automatic:
    out.evaluator = evaluator_for(definition);
    break;
  case EvaluatorChoice::standard:
    out.evaluator = Evaluator::standard;
    break;
  case EvaluatorChoice::low_bit:
    out.evaluator = Evaluator::low_bit;
    break;
  case EvaluatorChoice::sampling:
    out.evaluator = Evaluator::sampling;
    break;
  }
  if (out.evaluator == Evaluator::low_bit && !out.required_matched_ratio) {
    out.required_matched_ratio = k_default_low_bit_matched_ratio;
  }
  return out;
}

} // namespace fib
