#pragma once
// `fib report html`: a self-contained static site of a dataset (docs/report.md, "The HTML
// site"): an index of every definition, a page per definition, a leaderboard with fast_p curves
// drawn as inline SVG, and a coverage matrix of model tags. No network, no external scripts,
// fonts or styles: the pages open from file://, with one small inline script for search and
// sorting. Every string from the dataset is HTML-escaped.

#include <fib/base/diagnostic.hpp>
#include <fib/model/trace_set.hpp>
#include <fib/validate/report.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

struct HtmlSiteOptions {
  std::filesystem::path dataset;
  // The site's directory: it must not exist, be empty, or hold a site fib wrote before (its
  // k_html_site_marker file lists the files it wrote; only those are replaced or removed).
  std::filesystem::path out;
  // The validator's findings per definition (from `fib validate --format json`, or a run of the
  // validator); nullopt: the pages say "not checked".
  std::optional<DatasetReport> validation;
  std::string baseline_author = std::string(k_default_baseline_author);
  ErrorBounds bounds;
};

// The file in OUT that marks a fib site: "fib html site" on its first line, then one relative
// path per line of the files the site holds.
inline constexpr const char* k_html_site_marker = ".fib-site";

// The most characters of one string from the dataset a page shows (a description, a reference,
// a name); longer ones are cut with a note, so that a hostile dataset gives a bounded site.
inline constexpr std::size_t k_html_max_text = 200'000;

struct HtmlSiteResult {
  std::vector<std::filesystem::path> files; // relative to OUT, in the order written
  std::size_t definitions = 0;
  bool written = false; // false when nothing was written (an error in the sink says why)
};

// Loads the dataset (load_trace_set: its diagnostics go to `sink`), builds the pages and writes
// them into `options.out`, each file atomically, the marker last. Errors: the dataset does not
// load (its error), `report.exists` when OUT holds files fib did not write (nothing is written),
// `io.write` when a page cannot be written. Never throws.
HtmlSiteResult write_html_site(const HtmlSiteOptions& options, DiagnosticSink& sink);

// The text with &, <, >, " and ' as character references: safe in element content and in quoted
// attribute values.
std::string html_escape(std::string_view text);

// The file name of a definition's page: its name with every character outside [A-Za-z0-9_.-]
// replaced by '_', cut to 100 characters, then "-" and the first 8 hex digits of the SHA-256 of
// the name, and ".html". Distinct names give distinct files; none starts with '.'.
std::string html_page_name(std::string_view definition_name);

// One line of a chart: its label and its points (x, y).
struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;
};

// An inline SVG line chart of fast_p curves (x: the speedup threshold p, y: fast_p from 0 to 1)
// with axes, ticks, axis labels, the title and a legend: one <polyline class="series"> per
// series, one <circle> per point. Labels are escaped.
std::string fastp_svg(const std::string& title, const std::vector<ChartSeries>& series);

} // namespace fib
