#include "fib/model/trace.hpp"

#include "io/keys.hpp"
#include "io/schema_reader.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace fib {
namespace {

using namespace detail;

double read_error_bound(Reader& r, const Json& object, const std::string& pointer,
                        std::string_view key) {
  const Json* raw = r.member(object, pointer, key, Presence::optional);
  if (raw == nullptr) {
    return 0.0;
  }
  const std::string field_pointer = pointer_append(pointer, key);
  const auto value = r.number(*raw, field_pointer);
  if (!value) {
    return 0.0;
  }
  if (!std::isnan(*value) && *value < 0) {
    r.report(codes::k_schema_range, field_pointer,
             fmt::format("Value error, {} must be non-negative or NaN", key));
  }
  return *value;
}

double read_non_negative(Reader& r, const Json& object, const std::string& pointer,
                         std::string_view key) {
  const Json* raw = r.member(object, pointer, key, Presence::optional);
  if (raw == nullptr) {
    return 0.0;
  }
  const std::string field_pointer = pointer_append(pointer, key);
  const auto value = r.number(*raw, field_pointer);
  if (!value) {
    return 0.0;
  }
  if (std::isnan(*value) || *value < 0) {
    r.report(codes::k_schema_range, field_pointer,
             fmt::format("Input should be greater than or equal to 0, got {}", *value));
  }
  return *value;
}

Correctness parse_correctness(Reader& r, const Json& object, const std::string& pointer) {
  Correctness c;
  if (!r.expect_object(object, pointer)) {
    return c;
  }
  c.max_relative_error = read_error_bound(r, object, pointer, k_key_max_relative_error);
  c.max_absolute_error = read_error_bound(r, object, pointer, k_key_max_absolute_error);
  if (const Json* extra = r.member(object, pointer, k_key_extra, Presence::optional)) {
    if (!extra->is_null()) {
      if (r.expect_object(*extra, pointer_append(pointer, k_key_extra))) {
        c.extra = *extra;
      }
    }
  }
  r.note_unknown_keys(object, pointer,
                      {k_key_max_relative_error, k_key_max_absolute_error, k_key_extra});
  return c;
}

Performance parse_performance(Reader& r, const Json& object, const std::string& pointer) {
  Performance p;
  if (!r.expect_object(object, pointer)) {
    return p;
  }
  p.latency_ms = read_non_negative(r, object, pointer, k_key_latency_ms);
  p.reference_latency_ms = read_non_negative(r, object, pointer, k_key_reference_latency_ms);
  p.speedup_factor = read_non_negative(r, object, pointer, k_key_speedup_factor);
  if (const Json* extra = r.member(object, pointer, k_key_extra, Presence::optional)) {
    if (!extra->is_null() && r.expect_object(*extra, pointer_append(pointer, k_key_extra))) {
      p.extra = *extra;
    }
  }
  r.note_unknown_keys(
      object, pointer,
      {k_key_latency_ms, k_key_reference_latency_ms, k_key_speedup_factor, k_key_extra});
  return p;
}

Environment parse_environment(Reader& r, const Json& object, const std::string& pointer) {
  Environment env;
  if (!r.expect_object(object, pointer)) {
    return env;
  }
  if (const Json* hw = r.member(object, pointer, k_key_hardware, Presence::required)) {
    env.hardware =
        r.string(*hw, pointer_append(pointer, k_key_hardware), EmptyString::forbidden).value_or("");
  }
  if (const Json* libs = r.member(object, pointer, k_key_libs, Presence::optional)) {
    const std::string libs_pointer = pointer_append(pointer, k_key_libs);
    if (r.expect_object(*libs, libs_pointer)) {
      for (const auto& [name, version] : libs->items()) {
        if (auto v = r.string(version, pointer_append(libs_pointer, name), EmptyString::allowed)) {
          env.libs.emplace_back(name, *v);
        }
      }
    }
  }
  if (const Json* state = r.member(object, pointer, k_key_device_state, Presence::optional)) {
    if (!state->is_null() && r.expect_object(*state, pointer_append(pointer, k_key_device_state))) {
      env.device_state = *state;
    }
  }
  r.note_unknown_keys(object, pointer, {k_key_hardware, k_key_libs, k_key_device_state});
  return env;
}

std::optional<Evaluation> parse_evaluation(Reader& r, const Json& object,
                                           const std::string& pointer) {
  if (!r.expect_object(object, pointer)) {
    return std::nullopt;
  }
  Evaluation e;
  bool status_known = false;
  if (const Json* status = r.member(object, pointer, k_key_status, Presence::required)) {
    const auto parsed = status->is_string()
                            ? parse_evaluation_status(status->get_ref<const std::string&>())
                            : std::nullopt;
    if (parsed) {
      e.status = *parsed;
      status_known = true;
    } else {
      r.report(
          codes::k_schema_choice, pointer_append(pointer, k_key_status),
          fmt::format("Input should be 'PASSED', 'INCORRECT_SHAPE', 'INCORRECT_NUMERICAL', "
                      "'INCORRECT_DTYPE', 'RUNTIME_ERROR', 'COMPILE_ERROR' or 'TIMEOUT', got {}",
                      json_excerpt(*status)));
    }
  }
  if (const Json* env = r.member(object, pointer, k_key_environment, Presence::required)) {
    e.environment = parse_environment(r, *env, pointer_append(pointer, k_key_environment));
  }
  if (const Json* ts = r.member(object, pointer, k_key_timestamp, Presence::required)) {
    e.timestamp = r.string(*ts, pointer_append(pointer, k_key_timestamp), EmptyString::forbidden)
                      .value_or("");
  }
  if (const Json* log = r.member(object, pointer, k_key_log, Presence::optional)) {
    e.log = r.string(*log, pointer_append(pointer, k_key_log), EmptyString::allowed).value_or("");
  }
  const std::string correctness_pointer = pointer_append(pointer, k_key_correctness);
  const std::string performance_pointer = pointer_append(pointer, k_key_performance);
  if (const Json* c = r.member(object, pointer, k_key_correctness, Presence::optional);
      c != nullptr && !c->is_null()) {
    e.correctness = parse_correctness(r, *c, correctness_pointer);
  }
  if (const Json* p = r.member(object, pointer, k_key_performance, Presence::optional);
      p != nullptr && !p->is_null()) {
    e.performance = parse_performance(r, *p, performance_pointer);
  }
  if (const Json* settings = r.member(object, pointer, k_key_settings, Presence::optional);
      settings != nullptr && !settings->is_null()) {
    if (settings->is_object()) {
      e.settings = *settings;
    } else {
      r.report(codes::k_trace_settings_ignored, pointer_append(pointer, k_key_settings),
               fmt::format("settings should be an object, got {}; it is ignored",
                           json_type_name(*settings)));
    }
  }
  r.note_unknown_keys(object, pointer,
                      {k_key_status, k_key_environment, k_key_timestamp, k_key_log,
                       k_key_correctness, k_key_performance, k_key_settings});
  if (status_known) {
    // The old tool formats the status as Python >= 3.11 prints an enum member.
    const std::string status_text = fmt::format("EvaluationStatus.{}", to_string(e.status));
    const bool needs_correctness =
        e.status == EvaluationStatus::passed || e.status == EvaluationStatus::incorrect_numerical;
    const bool needs_performance = e.status == EvaluationStatus::passed;
    if (needs_correctness && !e.correctness) {
      r.report(codes::k_correctness_missing, correctness_pointer,
               fmt::format("Evaluation must include correctness when status is {}", status_text));
    } else if (!needs_correctness && e.correctness) {
      r.report(
          codes::k_correctness_unexpected, correctness_pointer,
          fmt::format("Evaluation must not include correctness when status is {}", status_text));
    }
    if (needs_performance && !e.performance) {
      r.report(codes::k_performance_missing, performance_pointer,
               fmt::format("Evaluation must include performance when status is {}", status_text));
    } else if (!needs_performance && e.performance) {
      r.report(
          codes::k_performance_unexpected, performance_pointer,
          fmt::format("Evaluation must not include performance when status is {}", status_text));
    }
  }
  return e;
}

Json float_or_token(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "Infinity" : "-Infinity";
  }
  return value;
}

Json float_or_null(double value) {
  if (!std::isfinite(value)) {
    return nullptr;
  }
  return value;
}

// Moves the string of the member `evaluation.log` out of `root`, leaving an empty string (the same
// type, so every check reads the member as before: the log may be empty); "" when there is no
// such string. Logs are most of a trace file's bytes, and reading the member would copy them.
std::string take_evaluation_log(Json& root) {
  if (!root.is_object()) {
    return {};
  }
  const auto evaluation = root.find(std::string(k_key_evaluation));
  if (evaluation == root.end() || !evaluation->is_object()) {
    return {};
  }
  const auto log = evaluation->find(std::string(k_key_log));
  if (log == evaluation->end() || !log->is_string()) {
    return {};
  }
  return std::exchange(log->get_ref<std::string&>(), std::string{});
}

} // namespace

Trace parse_trace(const JsonDocument& document, DiagnosticSink& sink) {
  Reader r(document, sink);
  Trace trace;
  const Json& root = document.root;
  if (!root.is_object()) {
    r.report(codes::k_schema_type, "",
             fmt::format("Input should be a valid dictionary or instance of Trace, got {}",
                         json_type_name(root)));
    return trace;
  }
  if (const Json* def = r.member(root, "", k_key_definition, Presence::required)) {
    trace.definition = r.string(*def, "/definition", EmptyString::forbidden).value_or("");
  }
  if (const Json* workload = r.member(root, "", k_key_workload, Presence::required)) {
    trace.workload = parse_workload(document, *workload, "/workload", sink);
  }
  if (const Json* solution = r.member(root, "", k_key_solution, Presence::optional);
      solution != nullptr && !solution->is_null()) {
    trace.solution = r.string(*solution, "/solution", EmptyString::allowed);
    if (!trace.solution) {
      trace.solution = std::string{};
    }
  }
  if (const Json* evaluation = r.member(root, "", k_key_evaluation, Presence::optional);
      evaluation != nullptr && !evaluation->is_null()) {
    trace.evaluation = parse_evaluation(r, *evaluation, "/evaluation");
  }
  r.note_unknown_keys(root, "",
                      {k_key_definition, k_key_workload, k_key_solution, k_key_evaluation});
  return trace;
}

std::optional<TraceLine> parse_trace_line(const JsonlLine& line, const std::filesystem::path& file,
                                          TraceFileKind kind, DiagnosticSink& sink,
                                          LineIndex index) {
  DiagnosticList line_sink;
  auto document = parse_json(line.text, file, line_sink, line.line, index);
  if (!document) {
    sink.report(document.error());
    return std::nullopt;
  }
  TraceLine parsed;
  parsed.line = line.line;
  std::string log = take_evaluation_log(document->root);
  parsed.trace = parse_trace(*document, line_sink);
  if (parsed.trace.evaluation) {
    parsed.trace.evaluation->log = std::move(log); // what parse_trace read was its empty stand-in
  }
  const Trace& t = parsed.trace;
  if (kind == TraceFileKind::workload && !t.is_workload_trace()) {
    Reader r(*document, line_sink);
    r.report(codes::k_workload_not_workload_only, t.solution ? "/solution" : "/evaluation",
             t.workload.uuid.empty()
                 ? std::string("workload entry should not have solution or evaluation")
                 : fmt::format("{}: workload entry should not have solution or evaluation",
                               t.workload.uuid),
             "lines of a workloads/ file carry only `definition` and `workload`");
  } else if (kind == TraceFileKind::trace && (!t.solution || !t.evaluation)) {
    Reader r(*document, line_sink);
    r.report(codes::k_trace_not_evaluated, t.solution ? "/evaluation" : "/solution",
             fmt::format("trace entry {} missing solution or evaluation", t.workload.uuid));
  }
  parsed.valid = !line_sink.has_errors();
  for (const Diagnostic& d : line_sink.items()) {
    sink.report(d);
  }
  return parsed;
}

std::vector<TraceLine> parse_trace_lines(std::string_view text, const std::filesystem::path& file,
                                         TraceFileKind kind, DiagnosticSink& sink,
                                         LineIndex index) {
  std::vector<TraceLine> out;
  for (const JsonlLine& line : split_jsonl_lines(text)) {
    if (auto parsed = parse_trace_line(line, file, kind, sink, index)) {
      out.push_back(std::move(*parsed));
    }
  }
  return out;
}

Json to_json(const Evaluation& e) {
  Json out = Json::object();
  out["status"] = std::string(to_string(e.status));
  Json env = Json::object();
  env["hardware"] = e.environment.hardware;
  Json libs = Json::object();
  for (const auto& [name, version] : e.environment.libs) {
    libs[name] = version;
  }
  env["libs"] = std::move(libs);
  if (e.environment.device_state) {
    env["device_state"] = *e.environment.device_state;
  }
  out["environment"] = std::move(env);
  out["timestamp"] = e.timestamp;
  out["log"] = e.log;
  if (e.correctness) {
    Json c = Json::object();
    c["max_relative_error"] = float_or_token(e.correctness->max_relative_error);
    c["max_absolute_error"] = float_or_token(e.correctness->max_absolute_error);
    c["extra"] = e.correctness->extra ? *e.correctness->extra : Json(nullptr);
    out["correctness"] = std::move(c);
  } else {
    out["correctness"] = nullptr;
  }
  if (e.performance) {
    Json p = Json::object();
    p["latency_ms"] = float_or_null(e.performance->latency_ms);
    p["reference_latency_ms"] = float_or_null(e.performance->reference_latency_ms);
    p["speedup_factor"] = float_or_null(e.performance->speedup_factor);
    if (e.performance->extra) {
      p["extra"] = *e.performance->extra;
    }
    out["performance"] = std::move(p);
  } else {
    out["performance"] = nullptr;
  }
  if (e.settings) {
    out["settings"] = *e.settings;
  }
  return out;
}

Json to_json(const Trace& trace) {
  Json out = Json::object();
  out["definition"] = trace.definition;
  out["workload"] = to_json(trace.workload);
  out["solution"] = trace.solution ? Json(*trace.solution) : Json(nullptr);
  out["evaluation"] = trace.evaluation ? to_json(*trace.evaluation) : Json(nullptr);
  return out;
}

std::string settings_identity(const Json& settings) {
  // nlohmann::json keeps object keys sorted; the round trip through the text sorts every level.
  return nlohmann::json::parse(settings.dump(-1, ' ', false, Json::error_handler_t::replace))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<TraceIdentity> trace_identity(const Trace& trace) {
  if (!trace.solution || !trace.evaluation) {
    return std::nullopt;
  }
  return TraceIdentity{trace.definition, *trace.solution, trace.workload.uuid,
                       trace.evaluation->settings ? settings_identity(*trace.evaluation->settings)
                                                  : std::string()};
}

} // namespace fib
