#pragma once
// What the pages of `fib report html` show (internal to the report layer): built from the loaded
// dataset by html_site.cpp, rendered by html_pages.cpp.

#include <fib/report/fastp.hpp>
#include <fib/report/html_site.hpp>
#include <fib/report/summary.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fib::detail {

struct SolutionRow {
  std::string name;
  std::string author;
  std::string language;
  EvaluationCounts statuses;
  // Per workload uuid with a PASSED trace within the bounds: its best recorded speedup.
  std::map<std::string, double> speedups;
};

struct DeviceBest {
  std::string hardware;
  std::string solution;
  std::string author;
  double speedup = 0.0;
};

// How one constraint fared on the definition's workloads (evaluated on their axes and scalars).
struct ConstraintRow {
  std::string expression;
  std::size_t held = 0;
  std::size_t violated = 0;
  std::size_t not_evaluable = 0;
  std::string first_problem; // the first violation's or non-evaluation's detail
};

struct WorkloadRow {
  std::string uuid;
  std::vector<std::pair<std::string, std::int64_t>> axes;
  std::vector<std::pair<std::string, std::string>> inputs; // name → random, scalar, safetensors
};

struct DefinitionPage {
  const Definition* definition = nullptr;
  std::string file;                // definitions/<html_page_name>
  std::vector<std::string> models; // the model:* tags, without the prefix
  std::vector<WorkloadRow> workloads;
  std::vector<SolutionRow> solutions;
  std::vector<ConstraintRow> constraints;
  std::vector<DeviceBest> best_per_device;
  std::size_t passing_solutions = 0; // solutions with a PASSED trace within the bounds
  std::optional<double> best_speedup;
  bool has_baseline = false;                                 // a solution by the baseline author
  std::string validation = "not checked";                    // ok, warning, error, not checked
  std::vector<std::pair<std::string, std::string>> findings; // level, "code: message"
  DatasetFastp curves;                                       // this definition's fast_p curves
};

struct SiteModel {
  std::string dataset;
  std::vector<DefinitionPage> pages; // by definition name
  std::vector<AuthorScore> rankings;
  std::string ranking_basis; // what the speedups are against, or why there is no ranking
  DatasetFastp overall;
  std::vector<double> thresholds;
};

// The page frame: doctype, a Content-Security-Policy that allows no network, the title, the
// shared style, the navigation (links relative to `depth` directories below OUT), `body`, and the
// search and sort script.
std::string html_page(const std::string& title, const std::string& body, int depth);

// Text cut to k_html_max_text characters (at a UTF-8 boundary) with a note, then escaped.
std::string html_text(std::string_view text);

// "1.23x", "—" for none.
std::string speedup_text(std::optional<double> speedup);

std::string render_index(const SiteModel& site);
std::string render_definition(const DefinitionPage& page);
std::string render_leaderboard(const SiteModel& site);
std::string render_coverage(const SiteModel& site);

// One author's coverage: the tasks attempted and solved correctly, of `total`.
struct CoverageBar {
  std::string label;
  std::size_t attempted = 0;
  std::size_t correct = 0;
  std::size_t total = 0;
};

// An inline SVG bar chart of coverage: per author a <rect class="bar attempted"> and a
// <rect class="bar correct"> as shares of all tasks, with labels, a 0–100% axis and a legend.
std::string coverage_svg(const std::string& title, const std::vector<CoverageBar>& bars);

// The series of a fast_p report: one per author, and "best of all" last.
std::vector<ChartSeries> fastp_series(const DatasetFastp& curves);

} // namespace fib::detail
