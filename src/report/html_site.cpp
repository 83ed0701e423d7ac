// `fib report html` (include/fib/report/html_site.hpp): what the pages show, from the loaded
// dataset, and the writing of the site into its directory.

#include "report/html_site_model.hpp"

#include <fib/base/codes.hpp>
#include <fib/constraint/constraint.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <system_error>

namespace fib {
namespace {

using detail::ConstraintRow;
using detail::DefinitionPage;
using detail::DeviceBest;
using detail::SiteModel;
using detail::SolutionRow;
using detail::WorkloadRow;

constexpr const char* k_marker_first_line = "fib html site";
constexpr std::size_t k_max_scanned_entries = 200'000;
constexpr std::size_t k_max_findings_shown = 50;

// A temporary of an atomic write that a killed run left: `.fib-` and six letters or digits.
bool is_write_temporary(const std::string& name) {
  return name.size() == 11 && name.starts_with(".fib-") &&
         std::all_of(name.begin() + 5, name.end(), [](unsigned char c) { return std::isalnum(c); });
}

// The files a previous fib site in `out` holds (its marker's list), or the error that forbids
// writing there: OUT is not a directory, or holds files that no marker lists.
Expected<std::set<std::string>> previous_site(const std::filesystem::path& out) {
  std::set<std::string> listed;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(out, ec))) {
    return listed;
  }
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(out, ec))) {
    return unexpected(make_diagnostic(
        codes::k_report_exists,
        fmt::format("{} exists and is not a directory: the site needs an empty directory or a "
                    "site fib wrote before",
                    out.string())));
  }
  const std::filesystem::path marker = out / k_html_site_marker;
  bool has_marker = false;
  if (std::ifstream in(marker); in) {
    std::string line;
    has_marker = std::getline(in, line) && line == k_marker_first_line;
    while (has_marker && std::getline(in, line)) {
      if (!line.empty()) {
        listed.insert(line);
      }
    }
  }
  std::size_t scanned = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(out, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (++scanned > k_max_scanned_entries) {
      break;
    }
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      continue;
    }
    const std::string relative = it->path().lexically_relative(out).generic_string();
    if (relative == k_html_site_marker || is_write_temporary(it->path().filename().string()) ||
        listed.contains(relative)) {
      continue;
    }
    return unexpected(make_diagnostic(
        codes::k_report_exists,
        fmt::format("{} holds files fib did not write ({}{}): the site is written only into an "
                    "empty directory or over a site fib wrote before",
                    out.string(), relative, has_marker ? ", not in its .fib-site list" : "")));
  }
  if (ec) {
    return unexpected(make_diagnostic(
        codes::k_io_read, fmt::format("cannot list {}: {}", out.string(), ec.message())));
  }
  return listed;
}

std::vector<WorkloadRow> workload_rows(const TraceSet& set, const std::string& name) {
  std::vector<WorkloadRow> out;
  const auto found = set.workloads.find(name);
  if (found == set.workloads.end()) {
    return out;
  }
  for (const Trace& line : found->second) {
    WorkloadRow row{line.workload.uuid, {}, {}};
    for (const auto& [axis, value] : line.workload.axes) {
      row.axes.emplace_back(axis, value);
    }
    for (const auto& [input, spec] : line.workload.inputs) {
      row.inputs.emplace_back(input, std::string(input_type_name(spec)));
    }
    out.push_back(std::move(row));
  }
  return out;
}

// Each constraint on every workload: its axes (with the definition's const ones), its scalar
// inputs, and the shapes of the tensor inputs the axes give.
std::vector<ConstraintRow> constraint_rows(const Definition& definition, const TraceSet& set) {
  std::vector<ConstraintRow> out;
  const auto found = set.workloads.find(definition.name);
  for (const std::string& expression : definition.constraints) {
    ConstraintRow row{expression, 0, 0, 0, ""};
    const CompiledConstraint compiled(expression);
    if (found != set.workloads.end()) {
      for (const Trace& line : found->second) {
        ConstraintEnvironment env;
        for (const auto& [axis, value] : definition.const_axes()) {
          env.axes[axis] = value;
        }
        for (const auto& [axis, value] : line.workload.axes) {
          env.axes[axis] = value;
        }
        for (const auto& [input, spec] : line.workload.inputs) {
          if (const auto* scalar = std::get_if<ScalarInput>(&spec)) {
            ScalarFact& fact = env.scalars[input];
            std::visit([&fact](auto v) { fact = v; }, scalar->value);
          }
        }
        for (const auto& [input, tensor] : definition.inputs) {
          if (!tensor.shape) {
            continue;
          }
          TensorFacts facts;
          bool known = true;
          for (const std::string& dim : *tensor.shape) {
            const auto axis = env.axes.find(dim);
            known = known && axis != env.axes.end();
            facts.shape.push_back(known ? axis->second : 0);
          }
          if (known) {
            env.tensors[input] = std::move(facts);
          }
        }
        const ConstraintResult result = compiled.evaluate(env);
        row.held += result.outcome == ConstraintOutcome::satisfied ? 1 : 0;
        row.violated += result.outcome == ConstraintOutcome::violated ? 1 : 0;
        row.not_evaluable += result.outcome == ConstraintOutcome::not_evaluable ? 1 : 0;
        if (row.first_problem.empty() && result.outcome != ConstraintOutcome::satisfied) {
          row.first_problem = result.detail;
        }
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

void add_solutions(DefinitionPage& page, const TraceSet& set, const HtmlSiteOptions& options) {
  const std::string& name = page.definition->name;
  const auto traces = set.traces.find(name);
  const std::vector<const Trace*> passed = set.filter_traces(name, options.bounds);
  std::map<std::string, DeviceBest> best;
  for (const Solution* solution : set.solutions_of(name)) {
    SolutionRow row{
        solution->name, solution->author, std::string(to_string(solution->spec.language)), {}, {}};
    page.has_baseline = page.has_baseline || solution->author == options.baseline_author;
    if (traces != set.traces.end()) {
      for (const Trace& trace : traces->second) {
        if (trace.evaluation && trace.solution == solution->name) {
          ++row.statuses[std::string(to_string(trace.evaluation->status))];
        }
      }
    }
    std::map<std::string, double> per_workload;
    for (const Trace* trace : passed) {
      if (trace->solution != solution->name || !trace->evaluation->performance) {
        continue;
      }
      const double speedup = trace->evaluation->performance->speedup_factor;
      const auto [it, added] = per_workload.emplace(trace->workload.uuid, speedup);
      it->second = added ? speedup : std::max(it->second, speedup);
      page.best_speedup = std::max(page.best_speedup.value_or(speedup), speedup);
      const std::string& hardware = trace->evaluation->environment.hardware;
      const auto [b, fresh] =
          best.emplace(hardware, DeviceBest{hardware, solution->name, solution->author, speedup});
      if (!fresh && speedup > b->second.speedup) {
        b->second = DeviceBest{hardware, solution->name, solution->author, speedup};
      }
    }
    row.speedups = std::move(per_workload);
    page.passing_solutions += row.speedups.empty() ? 0 : 1;
    page.solutions.push_back(std::move(row));
  }
  for (auto& [hardware, entry] : best) {
    page.best_per_device.push_back(std::move(entry));
  }
}

void add_validation(DefinitionPage& page, const HtmlSiteOptions& options) {
  if (!options.validation) {
    return;
  }
  const auto found = options.validation->definitions.find(page.definition->name);
  if (found == options.validation->definitions.end()) {
    page.validation = "not in the report";
    return;
  }
  page.validation = std::string(to_string(found->second.status));
  for (const auto& category : found->second.categories) {
    if (!category) {
      continue;
    }
    for (const CheckMessage& message : category->messages) {
      if (message.level != CheckLevel::info && page.findings.size() < k_max_findings_shown) {
        page.findings.emplace_back(std::string(to_string(message.level)),
                                   fmt::format("{}: {}", message.code, message.message));
      }
    }
  }
}

SiteModel build_model(const TraceSet& set, const HtmlSiteOptions& options) {
  SiteModel site;
  site.dataset = options.dataset.filename().empty()
                     ? options.dataset.parent_path().filename().string()
                     : options.dataset.filename().string();
  site.thresholds = default_fastp_thresholds();
  std::vector<std::string> names;
  bool any_baseline = false;
  for (const auto& [name, definition] : set.definitions) {
    names.push_back(name);
    DefinitionPage page;
    page.definition = &definition;
    page.file = "definitions/" + html_page_name(name);
    for (const std::string& tag : definition.tags) {
      if (tag.starts_with("model:")) {
        page.models.push_back(tag.substr(6));
      }
    }
    page.workloads = workload_rows(set, name);
    page.constraints = constraint_rows(definition, set);
    add_solutions(page, set, options);
    add_validation(page, options);
    page.curves = fastp_of(set, {name}, options.bounds, site.thresholds);
    any_baseline = any_baseline || page.has_baseline;
    site.pages.push_back(std::move(page));
  }
  site.overall = fastp_of(set, names, options.bounds, site.thresholds);
  const SpeedupBasis basis = any_baseline ? SpeedupBasis::baseline_author : SpeedupBasis::reference;
  auto ranked = set.rank_authors_by(basis, options.baseline_author);
  if (ranked) {
    site.rankings = std::move(*ranked);
    site.ranking_basis =
        basis == SpeedupBasis::baseline_author
            ? fmt::format("Ranked against the solutions of the baseline author \"{}\", as `fib "
                          "report summary` ranks.",
                          options.baseline_author)
            : std::string("Ranked against the reference (no solution of the baseline author "
                          "exists): the speedups the traces record, as `fib report summary` "
                          "ranks.");
    if (site.rankings.empty()) {
      site.ranking_basis += " No author has a score yet.";
    }
  } else {
    site.ranking_basis =
        fmt::format("No ranking: {} ({})", ranked.error().message, ranked.error().code);
  }
  return site;
}

} // namespace

HtmlSiteResult write_html_site(const HtmlSiteOptions& options, DiagnosticSink& sink) {
  HtmlSiteResult result;
  auto previous = previous_site(options.out);
  if (!previous) {
    sink.report(previous.error());
    return result;
  }
  CountingSink counted(sink);
  auto set = load_trace_set(options.dataset, counted);
  if (!set) {
    if (counted.counts().errors == 0) {
      sink.report(set.error());
    }
    return result;
  }
  const SiteModel site = build_model(*set, options);
  std::error_code ec;
  std::filesystem::create_directories(options.out, ec);
  if (ec) {
    sink.report(
        make_diagnostic(codes::k_io_write,
                        fmt::format("cannot create {}: {}", options.out.string(), ec.message())));
    return result;
  }
  std::vector<std::pair<std::string, std::string>> files = {
      {"index.html", detail::render_index(site)},
      {"leaderboard.html", detail::render_leaderboard(site)},
      {"coverage.html", detail::render_coverage(site)}};
  for (const DefinitionPage& page : site.pages) {
    files.emplace_back(page.file, detail::render_definition(page));
  }
  std::string marker = std::string(k_marker_first_line) + "\n";
  for (const auto& [relative, content] : files) {
    auto written = write_file_atomically_below(options.out, relative, content, Overwrite::allowed,
                                               CreateMissing::yes);
    if (!written) {
      sink.report(written.error());
      return result;
    }
    result.files.emplace_back(relative);
    marker += relative + "\n";
  }
  // Pages of the previous site that this one does not have (definitions removed since).
  std::set<std::string> current;
  for (const auto& [relative, content] : files) {
    current.insert(relative);
  }
  for (const std::string& stale : *previous) {
    const std::filesystem::path relative(stale);
    if (!current.contains(stale) && relative.is_relative() &&
        stale.find("..") == std::string::npos) {
      std::error_code ignored;
      std::filesystem::remove(options.out / relative, ignored);
    }
  }
  auto written = write_file_atomically_below(options.out, k_html_site_marker, marker,
                                             Overwrite::allowed, CreateMissing::yes);
  if (!written) {
    sink.report(written.error());
    return result;
  }
  result.files.emplace_back(k_html_site_marker);
  result.definitions = site.pages.size();
  result.written = true;
  return result;
}

} // namespace fib
