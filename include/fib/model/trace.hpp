#pragma once
// Trace, Evaluation and friends (one line of a trace file: a workload, and how a solution did on
// it), and JSON Lines files of them.

#include <fib/base/enum_names.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/workload.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

enum class EvaluationStatus {
  passed,
  incorrect_shape,
  incorrect_numerical,
  incorrect_dtype,
  runtime_error,
  compile_error,
  timeout,
};

template <> struct EnumNames<EvaluationStatus> {
  static constexpr std::array k_table = std::to_array<EnumName<EvaluationStatus>>({
      {EvaluationStatus::passed, "PASSED"},
      {EvaluationStatus::incorrect_shape, "INCORRECT_SHAPE"},
      {EvaluationStatus::incorrect_numerical, "INCORRECT_NUMERICAL"},
      {EvaluationStatus::incorrect_dtype, "INCORRECT_DTYPE"},
      {EvaluationStatus::runtime_error, "RUNTIME_ERROR"},
      {EvaluationStatus::compile_error, "COMPILE_ERROR"},
      {EvaluationStatus::timeout, "TIMEOUT"},
  });
};

// "PASSED", "INCORRECT_SHAPE", …, "TIMEOUT".
inline std::string_view to_string(EvaluationStatus status) {
  return enum_name(status);
}
// Exact, case-sensitive.
inline std::optional<EvaluationStatus> parse_evaluation_status(std::string_view name) {
  return parse_enum<EvaluationStatus>(name);
}

// max errors are ≥ 0 or NaN (+inf allowed).
struct Correctness {
  double max_relative_error = 0.0;
  double max_absolute_error = 0.0;
  std::optional<Json> extra;
};

// Each ≥ 0, NaN rejected, +inf allowed.
struct Performance {
  double latency_ms = 0.0; // fib: the median of the timed calls (the mean of the trials' medians)
  double reference_latency_ms = 0.0;
  double speedup_factor = 0.0;
  // fib's own (the old tool has no such key and drops it): the timed calls' dispersion
  // ("timed_calls", "latency_min_ms", "latency_q1_ms", "latency_q3_ms", "latency_max_ms"), the
  // plausibility floor ("plausibility_floor_ms") and "implausible": true under it. Written only
  // when present.
  std::optional<Json> extra;
};

struct Environment {
  std::string hardware;
  OrderedMap<std::string> libs;
  // fib's own (the old tool drops it): a GPU's clocks, power, temperature and throttle reasons
  // right after the solution's timed calls, where fib could read them. Written only when present.
  std::optional<Json> device_state;
};

struct Evaluation {
  EvaluationStatus status = EvaluationStatus::passed;
  Environment environment;
  std::string timestamp;
  std::string log;
  std::optional<Correctness> correctness;
  std::optional<Performance> performance;
  // fib's record of how the evaluation was made (`fib run` writes it: device, warm-up, iterations,
  // tolerances; docs/run.md): an object, or nullopt when the line has none (the old tool's lines)
  // or its value was not an object (`trace.settings-ignored`). The old tool ignores the key.
  std::optional<Json> settings;
};

struct Trace {
  std::string definition;
  Workload workload;
  std::optional<std::string> solution; // "" counts as present
  std::optional<Evaluation> evaluation;

  // Neither a solution nor an evaluation.
  bool is_workload_trace() const { return !solution.has_value() && !evaluation.has_value(); }
  bool is_successful() const {
    return !is_workload_trace() && evaluation.has_value() &&
           evaluation->status == EvaluationStatus::passed;
  }
};

// Reads one Trace object (one JSON Lines line).
Trace parse_trace(const JsonDocument& document, DiagnosticSink& sink);

// One parsed line of a JSON Lines file.
struct TraceLine {
  int line = 0;
  Trace trace;
  bool valid = false; // no error was reported for this line
};

// Which JSON Lines file: under workloads/ every line must be a workload trace, under traces/ every
// line needs a solution and an evaluation; `any` checks only the Trace model itself.
enum class TraceFileKind { workload, trace, any };

// Parses every line of a workload or trace file. Lines that are not JSON are reported and skipped;
// every other line is checked in full. For TraceFileKind::workload a line with a solution or an
// evaluation gets `workload.not-workload-only`.
std::vector<TraceLine> parse_trace_lines(std::string_view text, const std::filesystem::path& file,
                                         TraceFileKind kind, DiagnosticSink& sink,
                                         LineIndex index = LineIndex::recorded);

// One line of such a file, as split_jsonl_lines gives it (its number is where positions in
// messages count from), with the checks parse_trace_lines makes of each line; nullopt when it is
// not JSON (the error is reported). parse_trace_lines is this over every line.
std::optional<TraceLine> parse_trace_line(const JsonlLine& line, const std::filesystem::path& file,
                                          TraceFileKind kind, DiagnosticSink& sink,
                                          LineIndex index = LineIndex::recorded);

// JSON in the old tool's dump order. Correctness NaN/±inf become "NaN"/"Infinity"/"-Infinity";
// Performance +inf becomes null (as the old tool writes it). Workload traces keep explicit nulls.
// Settings, when the evaluation has them, come last. Traces without settings dump as before.
Json to_json(const Evaluation& evaluation);
Json to_json(const Trace& trace);

// What makes two trace lines the same evaluation (docs/run.md, "Resuming and duplicates"): the
// definition, the solution, the workload's uuid and the settings it was made with. `settings` is
// the compact JSON text of evaluation.settings with the keys sorted at every level (so the order
// in which a writer put them does not matter), "" for a line without settings.
struct TraceIdentity {
  std::string definition;
  std::string solution;
  std::string workload_uuid;
  std::string settings;

  auto operator<=>(const TraceIdentity&) const = default;
};

// The identity of an evaluated trace; nullopt for a workload trace (no solution or evaluation).
std::optional<TraceIdentity> trace_identity(const Trace& trace);

// The `settings` text of TraceIdentity for an evaluation.settings object.
std::string settings_identity(const Json& settings);

} // namespace fib
