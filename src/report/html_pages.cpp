// The pages of `fib report html` (src/report/html_site_model.hpp): the index, a page per
// definition, the leaderboard and the coverage matrix. Every string from the dataset goes
// through html_escape or html_text.

#include "report/html_site_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace fib::detail {
namespace {

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  return fmt::format("{}", fmt::join(items, separator));
}

std::string tags_html(const std::vector<std::string>& tags) {
  std::string out;
  for (const std::string& tag : tags) {
    out += "<span class=\"tag\">" + html_text(tag) + "</span>";
  }
  return out;
}

std::string status_html(const std::string& status) {
  const char* css = status == "ok"        ? "ok"
                    : status == "warning" ? "warning"
                    : status == "error"   ? "error"
                                          : "none";
  return fmt::format("<span class=\"{}\">{}</span>", css, html_escape(status));
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string options_html(const std::set<std::string>& values) {
  std::string out = "<option value=\"\">all</option>";
  for (const std::string& v : values) {
    out += fmt::format("<option value=\"{0}\">{0}</option>", html_text(v));
  }
  return out;
}

std::string shape_text(const TensorSpec& spec) {
  return spec.shape ? fmt::format("[{}]", fmt::join(*spec.shape, ", ")) : std::string("scalar");
}

std::string tensor_rows(const OrderedMap<TensorSpec>& specs, const char* kind) {
  std::string out;
  for (const auto& [name, spec] : specs) {
    out +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", kind,
                    html_text(name), html_escape(shape_text(spec)),
                    html_escape(to_string(spec.dtype)), html_text(spec.description.value_or("")));
  }
  return out;
}

std::string statuses_text(const EvaluationCounts& statuses) {
  std::vector<std::string> parts;
  for (const auto& [status, count] : statuses) {
    parts.push_back(fmt::format("{} {}", count, status));
  }
  return parts.empty() ? std::string("no traces") : joined(parts, ", ");
}

std::string definition_head(const DefinitionPage& page) {
  const Definition& d = *page.definition;
  std::string out =
      fmt::format("<h1>{}</h1><p class=\"muted\">op_type <b>{}</b> · validation {}</p>",
                  html_text(d.name), html_text(d.op_type), status_html(page.validation));
  out += "<p>" + tags_html(d.tags) + "</p>";
  if (d.description) {
    out += "<p>" + html_text(*d.description) + "</p>";
  }
  if (!page.findings.empty()) {
    out += "<h2>Validation findings</h2><ul>";
    for (const auto& [level, text] : page.findings) {
      out += fmt::format("<li>{} {}</li>", status_html(level), html_text(text));
    }
    out += "</ul>";
  }
  out += "<h2>Axes</h2><table><thead><tr><th>axis</th><th>kind</th><th>value</th><th>spread on "
         "the workloads</th><th>description</th></tr></thead><tbody>";
  for (const auto& [name, axis] : d.axes) {
    std::string spread = "—";
    if (axis.kind == AxisKind::var_axis) {
      std::optional<std::int64_t> low;
      std::optional<std::int64_t> high;
      for (const WorkloadRow& w : page.workloads) {
        for (const auto& [axis_name, value] : w.axes) {
          if (axis_name == name) {
            low = std::min(low.value_or(value), value);
            high = std::max(high.value_or(value), value);
          }
        }
      }
      spread = low ? fmt::format("{} – {}", *low, *high) : std::string("no workloads");
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
        html_text(name), axis.kind == AxisKind::const_axis ? "const" : "var",
        axis.kind == AxisKind::const_axis ? fmt::format("{}", axis.value) : std::string("—"),
        spread, html_text(axis.description.value_or("")));
  }
  out += "</tbody></table>";
  out += "<h2>Inputs and outputs</h2><table><thead><tr><th></th><th>name</th><th>shape</th>"
         "<th>dtype</th><th>description</th></tr></thead><tbody>" +
         tensor_rows(d.inputs, "input") + tensor_rows(d.outputs, "output") + "</tbody></table>";
  return out;
}

std::string constraints_html(const DefinitionPage& page) {
  if (page.constraints.empty()) {
    return "<h2>Constraints</h2><p class=\"muted\">none</p>";
  }
  std::string out = "<h2>Constraints</h2><table><thead><tr><th>constraint</th><th>held</th>"
                    "<th>violated</th><th>not evaluable</th><th>first problem</th></tr></thead>"
                    "<tbody>";
  for (const ConstraintRow& c : page.constraints) {
    out += fmt::format("<tr><td><code>{}</code></td><td class=\"num\">{}</td><td "
                       "class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                       html_text(c.expression), c.held, c.violated, c.not_evaluable,
                       html_text(c.first_problem));
  }
  return out + "</tbody></table>";
}

std::string reference_html(const Definition& d) {
  std::string out = "<h2>Reference</h2><pre class=\"code\"><ol>";
  const std::string text = d.reference.substr(0, k_html_max_text);
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end;
    out += "<li>" + html_escape(text.substr(start, end - start)) + "</li>";
    start = end + 1;
  }
  out += "</ol></pre>";
  if (d.reference.size() > k_html_max_text) {
    out += fmt::format("<p class=\"muted\">[… {} more characters not shown]</p>",
                       d.reference.size() - k_html_max_text);
  }
  return out;
}

std::string workloads_html(const DefinitionPage& page) {
  std::string out = fmt::format("<h2>Workloads ({})</h2>", page.workloads.size());
  if (page.workloads.empty()) {
    return out + "<p class=\"muted\">no workloads</p>";
  }
  out += "<table><thead><tr><th>uuid</th><th>axes</th><th>inputs</th></tr></thead><tbody>";
  for (const WorkloadRow& w : page.workloads) {
    std::vector<std::string> axes;
    for (const auto& [name, value] : w.axes) {
      axes.push_back(fmt::format("{}={}", html_text(name), value));
    }
    std::vector<std::string> inputs;
    for (const auto& [name, kind] : w.inputs) {
      inputs.push_back(fmt::format("{}: {}", html_text(name), html_escape(kind)));
    }
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", html_text(w.uuid),
                       joined(axes, ", "), joined(inputs, ", "));
  }
  return out + "</tbody></table>";
}

// Solutions × workloads: the best recorded speedup of each (PASSED within the bounds), for the
// first k_matrix_workloads workloads.
constexpr std::size_t k_matrix_workloads = 64;

std::string speedup_matrix(const DefinitionPage& page) {
  if (page.solutions.empty() || page.workloads.empty()) {
    return "";
  }
  const std::size_t shown = std::min(page.workloads.size(), k_matrix_workloads);
  std::string out = "<h2>Speedup per workload</h2>";
  if (shown < page.workloads.size()) {
    out += fmt::format("<p class=\"muted\">the first {} of {} workloads</p>", shown,
                       page.workloads.size());
  }
  out += "<div class=\"wide\"><table id=\"speedups\" class=\"matrix\"><thead><tr><th>solution</th>";
  for (std::size_t i = 0; i < shown; ++i) {
    out += fmt::format("<th title=\"{0}\">{1}</th>", html_text(page.workloads[i].uuid),
                       html_text(page.workloads[i].uuid.substr(0, 8)));
  }
  out += "</tr></thead><tbody>";
  for (const SolutionRow& s : page.solutions) {
    out += "<tr><td>" + html_text(s.name) + "</td>";
    for (std::size_t i = 0; i < shown; ++i) {
      const auto found = s.speedups.find(page.workloads[i].uuid);
      out += fmt::format(
          "<td class=\"num\">{}</td>",
          speedup_text(found == s.speedups.end() ? std::nullopt : std::optional(found->second)));
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string solutions_html(const DefinitionPage& page) {
  std::string out = fmt::format("<h2>Solutions ({})</h2>", page.solutions.size());
  if (!page.solutions.empty()) {
    out += "<table><thead><tr><th>solution</th><th>author</th><th>language</th><th>traces</th>"
           "<th>workloads passed</th><th>min speedup</th><th>median</th><th>max</th></tr></thead>"
           "<tbody>";
    for (const SolutionRow& s : page.solutions) {
      std::vector<double> sorted;
      for (const auto& [uuid, speedup] : s.speedups) {
        sorted.push_back(speedup);
      }
      std::sort(sorted.begin(), sorted.end());
      const auto at = [&](std::size_t i) {
        return sorted.empty() ? std::optional<double>() : std::optional<double>(sorted[i]);
      };
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}"
                         "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                         "class=\"num\">{}</td></tr>",
                         html_text(s.name), html_text(s.author), html_text(s.language),
                         html_escape(statuses_text(s.statuses)), sorted.size(), speedup_text(at(0)),
                         speedup_text(at(sorted.size() / 2)),
                         speedup_text(sorted.empty() ? std::nullopt : at(sorted.size() - 1)));
    }
    out += "</tbody></table>";
  }
  out += speedup_matrix(page);
  out += "<h2>Best per device</h2>";
  if (page.best_per_device.empty()) {
    out += "<p class=\"muted\">no PASSED trace within the error bounds</p>";
  } else {
    out += "<table><thead><tr><th>device</th><th>solution</th><th>author</th><th>speedup</th>"
           "</tr></thead><tbody>";
    for (const DeviceBest& b : page.best_per_device) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                         html_text(b.hardware), html_text(b.solution), html_text(b.author),
                         speedup_text(b.speedup));
    }
    out += "</tbody></table>";
  }
  if (page.curves.tasks > 0) {
    out += "<h2>fast_p</h2>" +
           fastp_svg("fast_p of " + page.definition->name, fastp_series(page.curves));
  }
  return out;
}

} // namespace

std::string render_index(const SiteModel& site) {
  std::set<std::string> op_types;
  std::set<std::string> tags;
  std::set<std::string> models;
  for (const DefinitionPage& p : site.pages) {
    op_types.insert(p.definition->op_type);
    tags.insert(p.definition->tags.begin(), p.definition->tags.end());
    models.insert(p.models.begin(), p.models.end());
  }
  std::string body = fmt::format(
      "<h1>{}</h1><p class=\"muted\"><span id=\"shown\">{}</span> of {} definitions shown</p>",
      html_text(site.dataset), site.pages.size(), site.pages.size());
  body += fmt::format(
      "<div class=\"filters\"><input id=\"q\" type=\"search\" placeholder=\"search names and "
      "descriptions\"><label>op_type <select id=\"op\">{}</select></label><label>tag <select "
      "id=\"tag\">{}</select></label><label>model <select id=\"model\">{}</select></label></div>",
      options_html(op_types), options_html(tags), options_html(models));
  body += "<table id=\"definitions\" class=\"filterable\"><thead><tr><th>definition</th>"
          "<th>op_type</th><th>tags</th><th>workloads</th><th>solutions</th><th>passing</th>"
          "<th>best speedup</th><th>validation</th></tr></thead><tbody>";
  for (const DefinitionPage& p : site.pages) {
    const Definition& d = *p.definition;
    const std::string text = lower(d.name + " " + d.description.value_or("").substr(0, 2000));
    body += fmt::format(
        "<tr data-op=\"{}\" data-tags=\"{}\" data-models=\"{}\" data-text=\"{}\"><td><a "
        "href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        html_text(d.op_type), html_text(joined(d.tags, "\n")), html_text(joined(p.models, "\n")),
        html_text(text), html_escape(p.file), html_text(d.name), html_text(d.op_type),
        tags_html(d.tags), p.workloads.size(), p.solutions.size(), p.passing_solutions,
        speedup_text(p.best_speedup), status_html(p.validation));
  }
  body += "</tbody></table>";
  return html_page(site.dataset + ": definitions", body, 0);
}

std::string render_definition(const DefinitionPage& page) {
  const std::string body = definition_head(page) + constraints_html(page) +
                           reference_html(*page.definition) + workloads_html(page) +
                           solutions_html(page);
  return html_page(page.definition->name, body, 1);
}

std::string render_leaderboard(const SiteModel& site) {
  std::string body =
      "<h1>Leaderboard</h1><p class=\"muted\">" + html_escape(site.ranking_basis) + "</p>";
  if (!site.rankings.empty()) {
    body += "<table id=\"rankings\"><thead><tr><th>rank</th><th>author</th><th>avg speedup</th>"
            "<th>win rate</th><th>success rate</th><th>definitions</th><th>workloads</th></tr>"
            "</thead><tbody>";
    std::size_t rank = 0;
    for (const AuthorScore& score : site.rankings) {
      const SpeedupMetrics& m = score.metrics;
      body += fmt::format("<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td "
                          "class=\"num\">{:.1f}%</td><td class=\"num\">{:.1f}%</td><td "
                          "class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                          ++rank, html_text(score.author), speedup_text(m.avg_speedup),
                          100.0 * m.win_rate, 100.0 * m.success_rate, m.definitions, m.workloads);
    }
    body += "</tbody></table>";
  }
  body += fmt::format("<h2>Coverage per author</h2><table id=\"author-coverage\"><thead><tr><th>"
                      "author</th><th>tasks attempted</th><th>solved correctly</th><th>of all "
                      "tasks</th></tr></thead><tbody>");
  for (const FastpCurve& c : site.overall.curves) {
    if (c.author.empty()) {
      continue;
    }
    body += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                        "class=\"num\">{}</td></tr>",
                        html_text(c.author), c.attempted, c.correct, site.overall.tasks);
  }
  body += "</tbody></table>";
  std::vector<CoverageBar> bars;
  for (const FastpCurve& c : site.overall.curves) {
    if (!c.author.empty()) {
      bars.push_back(CoverageBar{c.author, c.attempted, c.correct, site.overall.tasks});
    }
  }
  body += coverage_svg("Coverage per author: tasks attempted and solved, of all tasks", bars);
  body += "<h2>fast_p over the whole dataset</h2>";
  body += fastp_svg("fast_p, all definitions", fastp_series(site.overall));
  body += "<p class=\"muted\">fast_p(p): the share of all tasks (workloads of definitions) an "
          "author solves correctly with a recorded speedup over the reference above p; tasks "
          "not attempted count as not fast.</p>";
  return html_page("Leaderboard", body, 0);
}

std::string render_coverage(const SiteModel& site) {
  std::map<std::string, std::vector<const DefinitionPage*>> by_model;
  for (const DefinitionPage& p : site.pages) {
    if (p.models.empty()) {
      by_model["(no model tag)"].push_back(&p);
    }
    for (const std::string& model : p.models) {
      by_model[model].push_back(&p);
    }
  }
  std::string body = "<h1>Coverage</h1><p class=\"muted\">Per model tag, each definition tagged "
                     "with it: whether it has workloads, a baseline solution and a solution "
                     "that passes.</p>";
  body += "<table id=\"coverage\"><thead><tr><th>model</th><th>definition</th><th>workloads</th>"
          "<th>baseline</th><th>passing solution</th></tr></thead><tbody>";
  const auto cell = [](bool yes) {
    return yes ? std::string("<td class=\"yes\">yes</td>")
               : std::string("<td class=\"no\">no</td>");
  };
  for (const auto& [model, pages] : by_model) {
    for (const DefinitionPage* p : pages) {
      body += fmt::format("<tr><td>{}</td><td><a href=\"{}\">{}</a></td>{}{}{}</tr>\n",
                          html_text(model), html_escape(p->file), html_text(p->definition->name),
                          cell(!p->workloads.empty()), cell(p->has_baseline),
                          cell(p->passing_solutions > 0));
    }
  }
  body += "</tbody></table>";
  return html_page("Coverage", body, 0);
}

} // namespace fib::detail
