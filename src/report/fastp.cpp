#include "fib/report/fastp.hpp"

#include "report/report_text.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace fib {

using detail::error_json;
using detail::render_table;

namespace {

using Task = std::pair<std::string, std::string>; // definition, workload uuid

// The best recorded speedup of each task, per author, among PASSED traces within the bounds; and
// the tasks each author attempted.
struct TaskResults {
  std::set<Task> tasks;
  std::map<std::string, std::map<Task, double>> best; // author → task → speedup
  std::map<std::string, std::set<Task>> attempted;
  std::set<std::string> authors;
};

// Keeps the larger of `value` and what `best` holds for `task`.
void keep_max(std::map<Task, double>& best, const Task& task, double value) {
  const auto [it, added] = best.emplace(task, value);
  if (!added && value > it->second) {
    it->second = value;
  }
}

TaskResults collect(const TraceSet& set, const std::vector<std::string>& names,
                    const ErrorBounds& bounds) {
  TaskResults out;
  for (const Solution& solution : set.solutions) {
    out.authors.insert(solution.author);
  }
  for (const std::string& name : names) {
    if (const auto workloads = set.workloads.find(name); workloads != set.workloads.end()) {
      for (const Trace& w : workloads->second) {
        out.tasks.emplace(name, w.workload.uuid);
      }
    }
    const auto traces = set.traces.find(name);
    if (traces == set.traces.end()) {
      continue;
    }
    for (const Trace& trace : traces->second) {
      if (!trace.evaluation) {
        continue;
      }
      const Task task{name, trace.workload.uuid};
      out.tasks.insert(task);
      const Solution* solution = set.find_solution(trace.solution.value_or(""));
      if (solution == nullptr) {
        continue;
      }
      out.attempted[solution->author].insert(task);
    }
    for (const Trace* trace : set.filter_traces(name, bounds)) {
      const Solution* solution = set.find_solution(trace->solution.value_or(""));
      if (solution == nullptr || !trace->evaluation->performance) {
        continue;
      }
      keep_max(out.best[solution->author], Task{name, trace->workload.uuid},
               trace->evaluation->performance->speedup_factor);
    }
  }
  return out;
}

FastpCurve curve_of(std::string author, const std::map<Task, double>& best, std::size_t attempted,
                    std::size_t tasks, const std::vector<double>& thresholds) {
  FastpCurve curve{std::move(author), attempted, best.size(), {}};
  for (const double p : thresholds) {
    FastpPoint point{p, 0, 0.0};
    for (const auto& [task, speedup] : best) {
      point.fast += speedup > p ? 1 : 0;
    }
    point.fast_p = tasks == 0 ? 0.0 : static_cast<double>(point.fast) / static_cast<double>(tasks);
    curve.points.push_back(point);
  }
  return curve;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(text);
  }
  std::string out = "\"";
  for (const char c : text) {
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return out + "\"";
}

} // namespace

std::vector<double> default_fastp_thresholds() {
  return {0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0, 4.0, 5.0, 10.0};
}

DatasetFastp fastp_of(const TraceSet& set, const std::vector<std::string>& definitions,
                      const ErrorBounds& bounds, const std::vector<double>& thresholds) {
  DatasetFastp entry;
  entry.dataset = set.root;
  const TaskResults results = collect(set, definitions, bounds);
  entry.tasks = results.tasks.size();
  std::map<Task, double> overall;
  std::set<Task> any_attempt;
  for (const std::string& author : results.authors) {
    static const std::map<Task, double> k_none;
    static const std::set<Task> k_no_tasks;
    const auto best = results.best.find(author);
    const auto attempted = results.attempted.find(author);
    const auto& best_tasks = best == results.best.end() ? k_none : best->second;
    const auto& attempted_tasks =
        attempted == results.attempted.end() ? k_no_tasks : attempted->second;
    entry.curves.push_back(
        curve_of(author, best_tasks, attempted_tasks.size(), entry.tasks, thresholds));
    for (const auto& [task, speedup] : best_tasks) {
      keep_max(overall, task, speedup);
    }
    any_attempt.insert(attempted_tasks.begin(), attempted_tasks.end());
  }
  entry.curves.push_back(curve_of("", overall, any_attempt.size(), entry.tasks, thresholds));
  return entry;
}

FastpReport fastp_curves(const FastpOptions& options, DiagnosticSink& sink) {
  FastpReport report{options.bounds, options.thresholds, {}};
  std::set<std::string, std::less<>> seen;
  bool any_loaded = false;
  for (const auto& root : options.datasets) {
    DatasetFastp entry;
    entry.dataset = root;
    auto set = load_trace_set(root, sink);
    if (!set) {
      entry.load_error = std::move(set).error();
      report.datasets.push_back(std::move(entry));
      continue;
    }
    any_loaded = true;
    DatasetFastp computed =
        fastp_of(*set, detail::selected_definitions(*set, options.definitions, seen),
                 options.bounds, options.thresholds);
    entry.tasks = computed.tasks;
    entry.curves = std::move(computed.curves);
    report.datasets.push_back(std::move(entry));
  }
  if (any_loaded) {
    detail::report_unknown_definitions(options.definitions, seen, sink);
  }
  return report;
}

std::string render_fastp_text(const FastpReport& report) {
  std::string out;
  for (const DatasetFastp& d : report.datasets) {
    out += fmt::format("dataset {} (atol {}, rtol {}): {} task{} (workloads of definitions)\n",
                       d.dataset.string(), report.bounds.max_absolute_error,
                       report.bounds.max_relative_error, d.tasks, d.tasks == 1 ? "" : "s");
    if (d.load_error) {
      out += fmt::format("  not loaded: {}\n", d.load_error->code);
      continue;
    }
    std::vector<std::string> header{"author"};
    for (const double p : report.thresholds) {
      header.push_back(fmt::format("fast_{:g}", p));
    }
    header.insert(header.end(), {"attempted", "correct"});
    std::vector<std::vector<std::string>> rows{header};
    for (const FastpCurve& c : d.curves) {
      std::vector<std::string> row{c.author.empty() ? "(best of all)" : c.author};
      for (const FastpPoint& point : c.points) {
        row.push_back(detail::percent(point.fast_p));
      }
      row.push_back(std::to_string(c.attempted));
      row.push_back(std::to_string(c.correct));
      rows.push_back(std::move(row));
    }
    out += render_table(rows, "  ");
  }
  return out;
}

std::string render_fastp_csv(const FastpReport& report) {
  std::string out = "dataset,author,p,fast,tasks,fast_p\n";
  for (const DatasetFastp& d : report.datasets) {
    if (d.load_error) {
      continue;
    }
    for (const FastpCurve& c : d.curves) {
      for (const FastpPoint& point : c.points) {
        out += fmt::format("{},{},{:g},{},{},{:.6g}\n", csv_field(d.dataset.string()),
                           csv_field(c.author.empty() ? "(best)" : c.author), point.p, point.fast,
                           d.tasks, point.fast_p);
      }
    }
  }
  return out;
}

Json fastp_to_json(const FastpReport& report) {
  Json out = Json::object();
  out["fib_report"] = "fastp";
  out["atol"] = report.bounds.max_absolute_error;
  out["rtol"] = report.bounds.max_relative_error;
  out["thresholds"] = report.thresholds;
  Json datasets = Json::array();
  for (const DatasetFastp& d : report.datasets) {
    Json entry = Json::object();
    entry["dataset"] = d.dataset.string();
    entry["error"] = error_json(d.load_error);
    entry["tasks"] = d.load_error ? Json(nullptr) : Json(d.tasks);
    Json curves = d.load_error ? Json(nullptr) : Json::array();
    for (const FastpCurve& c : d.curves) {
      Json points = Json::array();
      for (const FastpPoint& point : c.points) {
        points.push_back(Json{{"p", point.p}, {"fast", point.fast}, {"fast_p", point.fast_p}});
      }
      curves.push_back(Json{{"author", c.author.empty() ? Json(nullptr) : Json(c.author)},
                            {"attempted", c.attempted},
                            {"correct", c.correct},
                            {"points", std::move(points)}});
    }
    entry["curves"] = std::move(curves);
    datasets.push_back(std::move(entry));
  }
  out["datasets"] = std::move(datasets);
  return out;
}

Expected<std::vector<double>> parse_fastp_thresholds(std::string_view text) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    double value = 0.0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() ||
        !std::isfinite(value) || value < 0) {
      return unexpected(make_diagnostic(
          codes::k_usage,
          fmt::format("--thresholds: '{}' is not a non-negative number", text_excerpt(item))));
    }
    if (!out.empty() && value <= out.back()) {
      return unexpected(make_diagnostic(
          codes::k_usage, fmt::format("--thresholds: {:g} does not come after {:g}; list them "
                                      "in ascending order",
                                      value, out.back())));
    }
    out.push_back(value);
    start = comma + 1;
  }
  return out;
}

} // namespace fib
