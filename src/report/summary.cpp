#include "fib/report/summary.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace fib {
namespace {

Json error_json(const std::optional<Diagnostic>& diagnostic) {
  if (!diagnostic) {
    return nullptr;
  }
  Json out = Json::object();
  out["code"] = diagnostic->code;
  out["message"] = diagnostic->message;
  return out;
}

std::string percent(double rate) {
  return fmt::format("{:.1f}%", rate * 100.0);
}

// Left-aligned columns separated by two spaces.
std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         std::string_view indent) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    // The last cell of a row is not padded, so it does not widen its column.
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
    }
    out += line + "\n";
  }
  return out;
}

} // namespace

SummaryReport summarize_datasets(const SummaryReportOptions& options, DiagnosticSink& sink) {
  SummaryReport report;
  report.baseline_author = options.baseline_author;
  for (const auto& root : options.datasets) {
    DatasetSummary entry;
    entry.dataset = root;
    auto set = load_trace_set(root, sink);
    if (!set) {
      entry.load_error = std::move(set).error();
      report.datasets.push_back(std::move(entry));
      continue;
    }
    auto summary = set->summary(options.baseline_author);
    if (summary) {
      entry.summary = std::move(*summary);
    } else {
      // The same counts TraceSet::summary computes before it ranks.
      for (const auto& [name, traces] : set->traces) {
        entry.summary.total += traces.size();
        entry.summary.passed += static_cast<std::size_t>(
            std::count_if(traces.begin(), traces.end(), [](const Trace& t) {
              return t.evaluation && t.evaluation->status == EvaluationStatus::passed;
            }));
      }
      entry.summary.failed = entry.summary.total - entry.summary.passed;
      Diagnostic d = std::move(summary).error();
      if (d.file.empty()) {
        d.file = root;
      }
      if (d.code == codes::k_score_no_baseline && d.hint.empty()) {
        d.hint = "every definition with solutions needs exactly one solution by the baseline "
                 "author; --baseline-author picks another one";
      }
      entry.ranking_error = d;
      sink.report(std::move(d));
    }
    report.datasets.push_back(std::move(entry));
  }
  return report;
}

std::string render_summary_text(const SummaryReport& report) {
  std::string out;
  for (const DatasetSummary& d : report.datasets) {
    out += fmt::format("dataset {}\n", d.dataset.string());
    if (d.load_error) {
      out += fmt::format("  not loaded: {}\n", d.load_error->code);
      continue;
    }
    const TraceSetSummary& s = d.summary;
    out += fmt::format("  traces: {} total, {} passed, {} failed\n", s.total, s.passed, s.failed);
    if (d.ranking_error) {
      out += fmt::format("  rankings: not available ({})\n", d.ranking_error->code);
      continue;
    }
    if (s.total == 0) {
      out += "  rankings: none (no traces)\n";
      continue;
    }
    if (s.rankings.empty()) {
      out += fmt::format("  rankings: none (no author has a score against \"{}\")\n",
                         report.baseline_author);
      continue;
    }
    out += fmt::format("  rankings against baseline author \"{}\":\n", report.baseline_author);
    std::vector<std::vector<std::string>> rows{
        {"rank", "author", "avg_speedup", "win_rate", "success_rate", "definitions", "workloads"}};
    for (std::size_t i = 0; i < s.rankings.size(); ++i) {
      const SpeedupMetrics& m = s.rankings[i].metrics;
      rows.push_back({std::to_string(i + 1), s.rankings[i].author,
                      fmt::format("{:.2f}x", m.avg_speedup), percent(m.win_rate),
                      percent(m.success_rate), std::to_string(m.definitions),
                      std::to_string(m.workloads)});
    }
    out += render_table(rows, "    ");
  }
  return out;
}

Json summary_to_json(const SummaryReport& report) {
  Json out = Json::object();
  out["fib_report"] = "summary";
  out["baseline_author"] = report.baseline_author;
  Json datasets = Json::array();
  for (const DatasetSummary& d : report.datasets) {
    Json entry = Json::object();
    entry["dataset"] = d.dataset.string();
    entry["error"] = error_json(d.load_error);
    if (d.load_error) {
      entry["total"] = nullptr;
      entry["passed"] = nullptr;
      entry["failed"] = nullptr;
      entry["rankings"] = nullptr;
      entry["ranking_error"] = nullptr;
      datasets.push_back(std::move(entry));
      continue;
    }
    const TraceSetSummary& s = d.summary;
    entry["total"] = s.total;
    entry["passed"] = s.passed;
    entry["failed"] = s.failed;
    if (d.ranking_error) {
      entry["rankings"] = nullptr;
    } else {
      Json rankings = Json::array();
      for (std::size_t i = 0; i < s.rankings.size(); ++i) {
        const SpeedupMetrics& m = s.rankings[i].metrics;
        Json row = Json::object();
        row["rank"] = i + 1;
        row["author"] = s.rankings[i].author;
        row["avg_speedup"] = m.avg_speedup;
        row["win_rate"] = m.win_rate;
        row["success_rate"] = m.success_rate;
        row["definitions"] = m.definitions;
        row["workloads"] = m.workloads;
        Json best = Json::object();
        for (const auto& [definition, solution] : m.best_solutions) {
          best[definition] = solution;
        }
        row["best_solutions"] = std::move(best);
        rankings.push_back(std::move(row));
      }
      entry["rankings"] = std::move(rankings);
    }
    entry["ranking_error"] = error_json(d.ranking_error);
    datasets.push_back(std::move(entry));
  }
  out["datasets"] = std::move(datasets);
  return out;
}

BestReport best_traces(const BestReportOptions& options, DiagnosticSink& sink) {
  BestReport report;
  report.bounds = options.bounds;
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
    std::vector<std::string> names;
    if (options.definitions.empty()) {
      for (const auto& [name, definition] : set->definitions) {
        names.push_back(name);
      }
    } else {
      std::set<std::string, std::less<>> wanted(options.definitions.begin(),
                                                options.definitions.end());
      for (const std::string& name : wanted) {
        if (set->find_definition(name) != nullptr) {
          names.push_back(name);
          seen.insert(name);
        }
      }
    }
    for (const std::string& name : names) {
      BestEntry best;
      best.definition = name;
      const Trace* trace = set->get_best_trace(name, {}, options.bounds);
      if (trace != nullptr) {
        best.found = true;
        best.solution = trace->solution.value_or("");
        if (const Solution* solution = set->find_solution(best.solution)) {
          best.author = solution->author;
        }
        best.workload = trace->workload.uuid;
        // get_best_trace only returns traces with performance data.
        const Performance& p = *trace->evaluation->performance;
        best.speedup_factor = p.speedup_factor;
        best.latency_ms = p.latency_ms;
        best.reference_latency_ms = p.reference_latency_ms;
      }
      entry.entries.push_back(std::move(best));
    }
    report.datasets.push_back(std::move(entry));
  }
  if (any_loaded) {
    for (const std::string& name : options.definitions) {
      if (!seen.contains(name)) {
        sink.report(
            make_diagnostic(codes::k_score_unknown_definition,
                            fmt::format("definition \"{}\" is in none of the datasets", name)));
        seen.insert(name); // once per name
      }
    }
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
      if (!e.found) {
        rows.push_back({e.definition, "no PASSED trace within the bounds"});
        continue;
      }
      rows.push_back({e.definition,
                      fmt::format("{} ({})", e.solution, e.author.value_or("unknown author")),
                      fmt::format("speedup {:.2f}x", e.speedup_factor),
                      fmt::format("latency {:.3f} ms", e.latency_ms),
                      fmt::format("reference {:.3f} ms", e.reference_latency_ms),
                      fmt::format("workload {}", e.workload)});
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
      if (e.found) {
        row["solution"] = e.solution;
        row["author"] = e.author ? Json(*e.author) : Json(nullptr);
        row["workload"] = e.workload;
        row["speedup_factor"] = e.speedup_factor;
        row["latency_ms"] = e.latency_ms;
        row["reference_latency_ms"] = e.reference_latency_ms;
      } else {
        for (const char* key : {"solution", "author", "workload", "speedup_factor", "latency_ms",
                                "reference_latency_ms"}) {
          row[key] = nullptr;
        }
      }
      definitions.push_back(std::move(row));
    }
    entry["definitions"] = std::move(definitions);
    datasets.push_back(std::move(entry));
  }
  out["datasets"] = std::move(datasets);
  return out;
}

} // namespace fib
