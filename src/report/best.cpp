// `fib report best`: the best trace of each definition (or of each definition on each device).

#include "fib/report/summary.hpp"

#include "report/report_text.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <set>
#include <utility>

namespace fib {

using detail::error_json;
using detail::failures_text;
using detail::render_table;
using detail::report_unknown_definitions;
using detail::selected_definitions;
using detail::statuses_json;

namespace {

// "--warmup 0, --iterations 1" from a fib trace's settings; "" when they are fine or absent.
std::string timing_warning_of(const Trace& trace) {
  const auto& settings = trace.evaluation->settings;
  if (!settings) {
    return "";
  }
  std::string out;
  const auto warmup = settings->find("warmup");
  if (warmup != settings->end() && warmup->is_number() && warmup->get<double>() <= 0) {
    out = "--warmup 0";
  }
  const auto iterations = settings->find("iterations");
  if (iterations != settings->end() && iterations->is_number() && iterations->get<double>() <= 1) {
    out += fmt::format("{}--iterations {}", out.empty() ? "" : ", ",
                       iterations->get<double>() <= 0 ? "0" : "1");
  }
  return out;
}

// The best trace among the definition's traces that `keep` accepts, as get_best_trace picks it
// (PASSED, within the bounds, with performance, the highest speedup_factor; the first on a tie),
// and why there is none.
template <class Keep>
BestEntry best_entry(const TraceSet& set, const std::string& definition, ErrorBounds bounds,
                     Keep&& keep) {
  BestEntry entry;
  entry.definition = definition;
  std::size_t passed = 0;
  if (const auto traces = set.traces.find(definition); traces != set.traces.end()) {
    for (const Trace& trace : traces->second) {
      if (!trace.evaluation || !keep(trace)) {
        continue;
      }
      ++entry.traces;
      ++entry.statuses[std::string(to_string(trace.evaluation->status))];
      passed += trace.evaluation->status == EvaluationStatus::passed ? 1 : 0;
    }
  }
  const Trace* best = nullptr;
  for (const Trace* trace : set.filter_traces(definition, bounds)) {
    if (!keep(*trace) || !trace->evaluation->performance) {
      continue;
    }
    if (best == nullptr || trace->evaluation->performance->speedup_factor >
                               best->evaluation->performance->speedup_factor) {
      best = trace;
    }
  }
  if (best == nullptr) {
    entry.outcome = entry.traces == 0 ? BestOutcome::no_traces
                    : passed == 0     ? BestOutcome::no_passed
                                      : BestOutcome::none_within_bounds;
    return entry;
  }
  entry.outcome = BestOutcome::found;
  entry.hardware = best->evaluation->environment.hardware;
  entry.solution = best->solution.value_or("");
  if (const Solution* solution = set.find_solution(entry.solution)) {
    entry.author = solution->author;
  }
  entry.workload = best->workload.uuid;
  const Performance& p = *best->evaluation->performance;
  entry.speedup_factor = p.speedup_factor;
  entry.latency_ms = p.latency_ms;
  entry.reference_latency_ms = p.reference_latency_ms;
  if (best->evaluation->correctness) {
    entry.max_absolute_error = best->evaluation->correctness->max_absolute_error;
    entry.max_relative_error = best->evaluation->correctness->max_relative_error;
  }
  entry.timing_warning = timing_warning_of(*best);
  return entry;
}

// The devices (environment.hardware) the definition's evaluated traces name, in name order.
std::set<std::string> devices_of(const TraceSet& set, const std::string& definition) {
  std::set<std::string> out;
  if (const auto traces = set.traces.find(definition); traces != set.traces.end()) {
    for (const Trace& trace : traces->second) {
      if (trace.evaluation) {
        out.insert(trace.evaluation->environment.hardware);
      }
    }
  }
  return out;
}

std::string_view outcome_name(BestOutcome outcome) {
  switch (outcome) {
  case BestOutcome::found:
    return "found";
  case BestOutcome::no_traces:
    return "no_traces";
  case BestOutcome::no_passed:
    return "no_passed";
  case BestOutcome::none_within_bounds:
    break;
  }
  return "none_within_bounds";
}

// The cells of one entry's line.
std::vector<std::string> entry_cells(const BestEntry& e, BestGrouping grouping) {
  std::vector<std::string> cells{e.definition};
  if (grouping == BestGrouping::per_device) {
    cells.push_back(e.hardware.empty() ? "(no device)" : e.hardware);
  }
  switch (e.outcome) {
  case BestOutcome::no_traces:
    cells.push_back("no traces");
    return cells;
  case BestOutcome::no_passed:
    cells.push_back(fmt::format("no PASSED trace ({} trace{}: {})", e.traces,
                                e.traces == 1 ? "" : "s", failures_text(e.statuses)));
    return cells;
  case BestOutcome::none_within_bounds: {
    const auto passed = e.statuses.find("PASSED");
    cells.push_back(fmt::format("no PASSED trace within the bounds ({} PASSED of {} trace{})",
                                passed == e.statuses.end() ? 0 : passed->second, e.traces,
                                e.traces == 1 ? "" : "s"));
    return cells;
  }
  case BestOutcome::found:
    break;
  }
  cells.push_back(fmt::format("{} ({})", e.solution, e.author.value_or("unknown author")));
  cells.push_back(fmt::format("speedup {:.2f}x", e.speedup_factor));
  cells.push_back(fmt::format("latency {:.3f} ms", e.latency_ms));
  cells.push_back(fmt::format("reference {:.3f} ms", e.reference_latency_ms));
  cells.push_back(
      fmt::format("errors {:.3g} / {:.3g}", e.max_absolute_error, e.max_relative_error));
  std::string last = fmt::format("workload {}", e.workload);
  if (grouping == BestGrouping::per_definition && !e.hardware.empty()) {
    last += fmt::format("  on {}", e.hardware);
  }
  if (!e.timing_warning.empty()) {
    last += fmt::format("  [timed with {}: not a steady-state figure]", e.timing_warning);
  }
  cells.push_back(std::move(last));
  return cells;
}

} // namespace

BestReport best_traces(const BestReportOptions& options, DiagnosticSink& sink) {
  BestReport report;
  report.bounds = options.bounds;
  report.grouping = options.grouping;
  std::set<std::string, std::less<>> seen;
  bool any_loaded = false;
  for (const auto& root : options.datasets) {
    DatasetBest entry;
    entry.dataset = root;
    auto set = load_trace_set(root, sink);
    if (!set) {
      entry.load_error = std::move(set).error();
      report.datasets.push_back(std::move(entry));
      continue;
    }
    any_loaded = true;
    for (const std::string& name : selected_definitions(*set, options.definitions, seen)) {
      const auto devices = options.grouping == BestGrouping::per_device ? devices_of(*set, name)
                                                                        : std::set<std::string>{};
      if (devices.empty()) {
        entry.entries.push_back(
            best_entry(*set, name, options.bounds, [](const Trace&) { return true; }));
      }
      for (const std::string& device : devices) {
        BestEntry best = best_entry(*set, name, options.bounds, [&](const Trace& t) {
          return t.evaluation && t.evaluation->environment.hardware == device;
        });
        best.hardware = device;
        entry.entries.push_back(std::move(best));
      }
    }
    report.datasets.push_back(std::move(entry));
  }
  if (any_loaded) {
    report_unknown_definitions(options.definitions, seen, sink);
  }
  return report;
}

std::string render_best_text(const BestReport& report) {
  std::string out;
  for (const DatasetBest& d : report.datasets) {
    out += fmt::format("dataset {} (atol {}, rtol {})\n", d.dataset.string(),
                       report.bounds.max_absolute_error, report.bounds.max_relative_error);
    if (d.load_error) {
      out += fmt::format("  not loaded: {}\n", d.load_error->code);
      continue;
    }
    if (d.entries.empty()) {
      out += "  no definitions\n";
      continue;
    }
    std::vector<std::vector<std::string>> rows;
    for (const BestEntry& e : d.entries) {
      rows.push_back(entry_cells(e, report.grouping));
    }
    out += render_table(rows, "  ");
  }
  return out;
}

Json best_to_json(const BestReport& report) {
  Json out = Json::object();
  out["fib_report"] = "best";
  out["atol"] = report.bounds.max_absolute_error;
  out["rtol"] = report.bounds.max_relative_error;
  out["grouping"] = report.grouping == BestGrouping::per_device ? "device" : "definition";
  Json datasets = Json::array();
  for (const DatasetBest& d : report.datasets) {
    Json entry = Json::object();
    entry["dataset"] = d.dataset.string();
    entry["error"] = error_json(d.load_error);
    if (d.load_error) {
      entry["definitions"] = nullptr;
      datasets.push_back(std::move(entry));
      continue;
    }
    Json definitions = Json::array();
    for (const BestEntry& e : d.entries) {
      Json row = Json::object();
      row["definition"] = e.definition;
      row["hardware"] = e.hardware.empty() ? Json(nullptr) : Json(e.hardware);
      row["outcome"] = outcome_name(e.outcome);
      row["traces"] = e.traces;
      row["statuses"] = statuses_json(e.statuses);
      const bool found = e.outcome == BestOutcome::found;
      row["solution"] = found ? Json(e.solution) : Json(nullptr);
      row["author"] = found && e.author ? Json(*e.author) : Json(nullptr);
      row["workload"] = found ? Json(e.workload) : Json(nullptr);
      for (const auto& [key, value] :
           {std::pair{"speedup_factor", e.speedup_factor}, std::pair{"latency_ms", e.latency_ms},
            std::pair{"reference_latency_ms", e.reference_latency_ms},
            std::pair{"max_absolute_error", e.max_absolute_error},
            std::pair{"max_relative_error", e.max_relative_error}}) {
        row[key] = found ? Json(value) : Json(nullptr);
      }
      row["timing_warning"] =
          found && !e.timing_warning.empty() ? Json(e.timing_warning) : Json(nullptr);
      definitions.push_back(std::move(row));
    }
    entry["definitions"] = std::move(definitions);
    datasets.push_back(std::move(entry));
  }
  out["datasets"] = std::move(datasets);
  return out;
}

} // namespace fib
