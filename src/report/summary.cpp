#include "fib/report/summary.hpp"

#include "report/report_text.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace fib {

using detail::error_json;
using detail::failures_text;
using detail::percent;
using detail::render_table;
using detail::statuses_json;

namespace {

// Counts by status of every trace, and per author and per solution (authors and solutions without
// traces are listed with zero).
void count_results(const TraceSet& set, DatasetSummary& entry) {
  std::map<std::string, ResultBreakdown> authors;
  std::map<std::pair<std::string, std::string>, ResultBreakdown> solutions;
  std::map<std::string, const Solution*, std::less<>> by_name;
  for (const Solution& solution : set.solutions) {
    by_name.emplace(solution.name, &solution);
    ResultBreakdown& author = authors[solution.author];
    author.name = solution.author;
    author.author = solution.author;
    ++author.solutions;
    ResultBreakdown& row = solutions[{solution.author, solution.name}];
    row = ResultBreakdown{solution.name, solution.author, solution.definition, 1, 0, {}};
  }
  for (const auto& [definition, traces] : set.traces) {
    for (const Trace& trace : traces) {
      if (!trace.evaluation) {
        continue;
      }
      const std::string status(to_string(trace.evaluation->status));
      ++entry.statuses[status];
      const auto solution = by_name.find(trace.solution.value_or(""));
      if (solution == by_name.end()) {
        continue; // a trace of a solution the dataset does not have: counted in the total only
      }
      for (ResultBreakdown* row : {&authors[solution->second->author],
                                   &solutions[{solution->second->author, solution->first}]}) {
        ++row->traces;
        ++row->statuses[status];
      }
    }
  }
  for (auto& [name, row] : authors) {
    entry.authors.push_back(std::move(row));
  }
  for (auto& [key, row] : solutions) {
    entry.solutions.push_back(std::move(row));
  }
}

bool has_author(const TraceSet& set, std::string_view author) {
  return std::any_of(set.solutions.begin(), set.solutions.end(),
                     [&](const Solution& s) { return s.author == author; });
}

// The basis the options ask for, in this dataset.
SpeedupBasis basis_for(const SummaryReportOptions& options, const TraceSet& set) {
  switch (options.against) {
  case SummaryBasis::baseline_author:
    return SpeedupBasis::baseline_author;
  case SummaryBasis::reference:
    return SpeedupBasis::reference;
  case SummaryBasis::automatic:
    break;
  }
  return has_author(set, options.baseline_author) ? SpeedupBasis::baseline_author
                                                  : SpeedupBasis::reference;
}

// The ranking error of the baseline basis, naming every definition without a baseline solution.
Diagnostic baseline_error(Diagnostic d, const DatasetSummary& entry,
                          const SummaryReportOptions& options) {
  const auto& missing = entry.definitions_without_baseline;
  if ((d.code == codes::k_score_no_baseline || d.code == codes::k_score_multiple_baselines) &&
      missing.size() > 1) {
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < 20; ++i) {
      names += fmt::format("{}{}", i == 0 ? "" : ", ", missing[i]);
    }
    if (missing.size() > 20) {
      names += fmt::format(" and {} more", missing.size() - 20);
    }
    d.message +=
        fmt::format(" ({} definitions in all lack exactly one: {})", missing.size(), names);
  }
  if (d.hint.empty()) {
    d.hint = fmt::format("every definition with solutions needs exactly one solution by the "
                         "baseline author \"{}\"; --baseline-author picks another one, "
                         "--against reference ranks against the reference instead",
                         options.baseline_author);
  }
  return d;
}

// The rankings of each device, each on a copy of the set that keeps only that device's traces.
std::vector<DeviceRanking> device_rankings(const TraceSet& set, SpeedupBasis basis,
                                           std::string_view baseline_author) {
  std::set<std::string> devices;
  for (const auto& [name, traces] : set.traces) {
    for (const Trace& trace : traces) {
      if (trace.evaluation) {
        devices.insert(trace.evaluation->environment.hardware);
      }
    }
  }
  std::vector<DeviceRanking> out;
  for (const std::string& device : devices) {
    TraceSet on_device;
    on_device.root = set.root;
    on_device.definitions = set.definitions;
    on_device.solutions = set.solutions;
    on_device.workloads = set.workloads;
    DeviceRanking ranking{device, 0, {}, std::nullopt};
    for (const auto& [name, traces] : set.traces) {
      std::vector<Trace>& kept = on_device.traces[name];
      for (const Trace& trace : traces) {
        if (trace.evaluation && trace.evaluation->environment.hardware == device) {
          kept.push_back(trace);
          ++ranking.traces;
        }
      }
    }
    auto rankings = on_device.rank_authors_by(basis, baseline_author);
    if (rankings) {
      ranking.rankings = std::move(*rankings);
    } else {
      ranking.ranking_error = std::move(rankings).error();
    }
    out.push_back(std::move(ranking));
  }
  return out;
}

} // namespace

SummaryReport summarize_datasets(const SummaryReportOptions& options, DiagnosticSink& sink) {
  SummaryReport report;
  report.baseline_author = options.baseline_author;
  report.against = options.against;
  report.grouping = options.grouping;
  for (const auto& root : options.datasets) {
    DatasetSummary entry;
    entry.dataset = root;
    auto set = load_trace_set(root, sink);
    if (!set) {
      entry.load_error = std::move(set).error();
      report.datasets.push_back(std::move(entry));
      continue;
    }
    // The counts TraceSet::summary computes before it ranks; they never depend on scoring.
    for (const auto& [name, traces] : set->traces) {
      entry.summary.total += traces.size();
      entry.summary.passed +=
          static_cast<std::size_t>(std::count_if(traces.begin(), traces.end(), [](const Trace& t) {
            return t.evaluation && t.evaluation->status == EvaluationStatus::passed;
          }));
    }
    entry.summary.failed = entry.summary.total - entry.summary.passed;
    count_results(*set, entry);
    entry.basis = basis_for(options, *set);
    if (entry.basis == SpeedupBasis::baseline_author) {
      entry.definitions_without_baseline =
          set->definitions_without_baseline(options.baseline_author);
    }
    if (entry.summary.total > 0) {
      auto rankings = set->rank_authors_by(entry.basis, options.baseline_author);
      if (rankings) {
        entry.summary.rankings = std::move(*rankings);
      } else {
        Diagnostic d = std::move(rankings).error();
        if (d.file.empty()) {
          d.file = root;
        }
        d = baseline_error(std::move(d), entry, options);
        entry.ranking_error = d;
        sink.report(std::move(d));
      }
    }
    if (options.grouping == SummaryGrouping::per_device && entry.summary.total > 0) {
      entry.devices = device_rankings(*set, entry.basis, options.baseline_author);
    }
    report.datasets.push_back(std::move(entry));
  }
  return report;
}

namespace {

std::size_t passed_of(const EvaluationCounts& statuses) {
  const auto it = statuses.find("PASSED");
  return it == statuses.end() ? 0 : it->second;
}

std::string render_breakdowns(const DatasetSummary& d) {
  std::string out;
  if (d.authors.empty()) {
    return out;
  }
  out += "  by author:\n";
  std::vector<std::vector<std::string>> rows{{"author", "solutions", "traces", "PASSED", "failed"}};
  for (const ResultBreakdown& a : d.authors) {
    rows.push_back({a.name, std::to_string(a.solutions), std::to_string(a.traces),
                    std::to_string(passed_of(a.statuses)), failures_text(a.statuses)});
  }
  out += render_table(rows, "    ");
  out += "  by solution:\n";
  rows = {{"solution", "author", "definition", "traces", "PASSED", "failed"}};
  for (const ResultBreakdown& s : d.solutions) {
    rows.push_back({s.name, s.author, s.definition, std::to_string(s.traces),
                    std::to_string(passed_of(s.statuses)), failures_text(s.statuses)});
  }
  out += render_table(rows, "    ");
  return out;
}

std::string basis_text(const SummaryReport& report, const DatasetSummary& d) {
  if (d.basis == SpeedupBasis::baseline_author) {
    return fmt::format("baseline author \"{}\"", report.baseline_author);
  }
  return "the reference";
}

// The table of a ranking, or "" when empty.
std::string rankings_table(const std::vector<AuthorScore>& rankings) {
  std::vector<std::vector<std::string>> rows{
      {"rank", "author", "avg_speedup", "win_rate", "success_rate", "definitions", "workloads"}};
  for (std::size_t i = 0; i < rankings.size(); ++i) {
    const SpeedupMetrics& m = rankings[i].metrics;
    rows.push_back({std::to_string(i + 1), rankings[i].author,
                    fmt::format("{:.2f}x", m.avg_speedup), percent(m.win_rate),
                    percent(m.success_rate), std::to_string(m.definitions),
                    std::to_string(m.workloads)});
  }
  return render_table(rows, "    ");
}

// The dataset's ranking, or why there is none.
std::string render_rankings(const SummaryReport& report, const DatasetSummary& d) {
  std::string out;
  const TraceSetSummary& s = d.summary;
  if (d.ranking_error) {
    out += fmt::format("  rankings: not available ({})\n", d.ranking_error->code);
    if (!d.definitions_without_baseline.empty()) {
      out += fmt::format("  definitions without exactly one solution by baseline author "
                         "\"{}\" ({}):\n",
                         report.baseline_author, d.definitions_without_baseline.size());
      for (const std::string& name : d.definitions_without_baseline) {
        out += fmt::format("    {}\n", name);
      }
    }
    return out;
  }
  if (s.total == 0) {
    return out + "  rankings: none (no traces)\n";
  }
  if (s.rankings.empty()) {
    return out + fmt::format("  rankings: none (no author has a score against {})\n",
                             basis_text(report, d));
  }
  if (d.basis == SpeedupBasis::reference) {
    out += fmt::format(
        "  rankings against the reference (the speedups the traces record{}):\n",
        report.against == SummaryBasis::automatic
            ? fmt::format("; no solution by baseline author \"{}\"", report.baseline_author)
            : std::string());
  } else {
    out += fmt::format("  rankings against baseline author \"{}\":\n", report.baseline_author);
  }
  return out + rankings_table(s.rankings);
}

// --by-device: each device's ranking, on that device's traces only.
std::string render_devices(const SummaryReport& report, const DatasetSummary& d) {
  std::string out;
  for (const DeviceRanking& device : d.devices) {
    out += fmt::format("  on {} ({} trace{}): ", device.hardware, device.traces,
                       device.traces == 1 ? "" : "s");
    if (device.ranking_error) {
      out += fmt::format("rankings not available ({})\n", device.ranking_error->code);
    } else if (device.rankings.empty()) {
      out += fmt::format("no author has a score against {}\n", basis_text(report, d));
    } else {
      out += fmt::format("rankings against {}:\n", basis_text(report, d)) +
             rankings_table(device.rankings);
    }
  }
  return out;
}

} // namespace

std::string render_summary_text(const SummaryReport& report) {
  std::string out;
  for (const DatasetSummary& d : report.datasets) {
    out += fmt::format("dataset {}\n", d.dataset.string());
    if (d.load_error) {
      out += fmt::format("  not loaded: {}\n", d.load_error->code);
      continue;
    }
    const TraceSetSummary& s = d.summary;
    const std::string failures = failures_text(d.statuses);
    out += fmt::format("  traces: {} total, {} passed, {} failed{}\n", s.total, s.passed, s.failed,
                       failures.empty() ? "" : " (" + failures + ")");
    out += render_breakdowns(d);
    out += render_rankings(report, d);
    out += render_devices(report, d);
  }
  return out;
}

namespace {

Json rankings_json(const std::vector<AuthorScore>& rankings) {
  Json out = Json::array();
  for (std::size_t i = 0; i < rankings.size(); ++i) {
    const SpeedupMetrics& m = rankings[i].metrics;
    Json row = Json::object();
    row["rank"] = i + 1;
    row["author"] = rankings[i].author;
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
    out.push_back(std::move(row));
  }
  return out;
}

} // namespace

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
      for (const char* key : {"statuses", "authors", "solutions", "against", "rankings",
                              "definitions_without_baseline", "ranking_error"}) {
        entry[key] = nullptr;
      }
      datasets.push_back(std::move(entry));
      continue;
    }
    const TraceSetSummary& s = d.summary;
    entry["total"] = s.total;
    entry["passed"] = s.passed;
    entry["failed"] = s.failed;
    entry["statuses"] = statuses_json(d.statuses);
    Json authors = Json::array();
    for (const ResultBreakdown& a : d.authors) {
      authors.push_back(Json{{"author", a.name},
                             {"solutions", a.solutions},
                             {"traces", a.traces},
                             {"statuses", statuses_json(a.statuses)}});
    }
    entry["authors"] = std::move(authors);
    Json solutions = Json::array();
    for (const ResultBreakdown& r : d.solutions) {
      solutions.push_back(Json{{"solution", r.name},
                               {"author", r.author},
                               {"definition", r.definition},
                               {"traces", r.traces},
                               {"statuses", statuses_json(r.statuses)}});
    }
    entry["solutions"] = std::move(solutions);
    entry["against"] = d.basis == SpeedupBasis::reference ? "reference" : "baseline_author";
    entry["rankings"] = d.ranking_error ? Json(nullptr) : rankings_json(s.rankings);
    entry["definitions_without_baseline"] = d.definitions_without_baseline;
    entry["ranking_error"] = error_json(d.ranking_error);
    if (report.grouping == SummaryGrouping::per_device) {
      Json devices = Json::array();
      for (const DeviceRanking& device : d.devices) {
        devices.push_back(Json{
            {"hardware", device.hardware},
            {"traces", device.traces},
            {"rankings", device.ranking_error ? Json(nullptr) : rankings_json(device.rankings)},
            {"ranking_error", error_json(device.ranking_error)}});
      }
      entry["devices"] = std::move(devices);
    }
    datasets.push_back(std::move(entry));
  }
  out["datasets"] = std::move(datasets);
  return out;
}

} // namespace fib
