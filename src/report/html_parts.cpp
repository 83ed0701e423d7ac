// The parts every page of `fib report html` shares: escaping, the page frame with its style and
// script, and the fast_p chart as inline SVG.

#include "report/html_site_model.hpp"

#include <fib/util/sha256.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fib {
namespace {

constexpr const char* k_style = R"CSS(
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
nav{background:#1d2330;padding:10px 24px}nav a{color:#e8ecf3;margin-right:22px;text-decoration:none;font-weight:600}
main{max-width:1200px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:19px;margin:28px 0 8px}
table{border-collapse:collapse;background:#fff;width:100%;margin:8px 0 18px;font-size:14px}
th,td{border:1px solid #d9dee7;padding:5px 8px;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}
.wide{overflow-x:auto}table.matrix{width:auto}table.matrix td,table.matrix th{overflow-wrap:normal;white-space:nowrap}
th{background:#eef1f6;cursor:pointer;user-select:none}td.num{text-align:right;font-variant-numeric:tabular-nums}
.tag{display:inline-block;background:#e6ecf7;border-radius:4px;padding:0 6px;margin:1px 3px 1px 0;font-size:12px}
.ok{color:#17803d;font-weight:600}.warning{color:#a86500;font-weight:600}.error{color:#b42318;font-weight:600}
.none{color:#8a93a3}.yes{background:#dff3e6;text-align:center}.no{background:#fbe4e2;text-align:center}
.filters{display:flex;gap:10px;flex-wrap:wrap;margin:10px 0}.filters input,.filters select{padding:5px 8px;font-size:14px}
pre.code{background:#fff;border:1px solid #d9dee7;padding:8px 0;overflow:auto;font-size:13px}
pre.code ol{margin:0;padding-left:52px}pre.code li{white-space:pre;padding-right:12px}pre.code li::marker{color:#8a93a3}
svg.chart{background:#fff;border:1px solid #d9dee7;max-width:100%;height:auto}
.muted{color:#5b6474}
)CSS";

// Filters the rows of every table.filterable by the page's controls (text, op_type, tag, model),
// which a link can preset (index.html#q=gemm&op=gemm), and sorts any table by a click on a header
// (numbers by value, the rest as text).
constexpr const char* k_script = R"JS(
(function(){
  function cells(row){return row.querySelectorAll('td');}
  function apply(){
    var q=document.getElementById('q'),op=document.getElementById('op'),
        tag=document.getElementById('tag'),model=document.getElementById('model');
    var shown=0;
    document.querySelectorAll('table.filterable tbody tr').forEach(function(r){
      var ok=(!q||r.dataset.text.indexOf(q.value.toLowerCase())>=0)&&
             (!op||!op.value||r.dataset.op===op.value)&&
             (!tag||!tag.value||r.dataset.tags.split('\n').indexOf(tag.value)>=0)&&
             (!model||!model.value||r.dataset.models.split('\n').indexOf(model.value)>=0);
      r.style.display=ok?'':'none';if(ok)shown++;});
    var s=document.getElementById('shown');if(s)s.textContent=String(shown);
  }
  var given=new URLSearchParams(location.hash.slice(1));
  ['q','op','tag','model'].forEach(function(id){var e=document.getElementById(id);
    if(e){if(given.has(id))e.value=given.get(id);
      e.addEventListener('input',apply);e.addEventListener('change',apply);}});
  document.querySelectorAll('th').forEach(function(th){th.addEventListener('click',function(){
    var table=th.closest('table'),body=table.tBodies[0];if(!body)return;
    var i=Array.prototype.indexOf.call(th.parentNode.children,th),up=th.dataset.dir!=='up';
    th.dataset.dir=up?'up':'down';
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){
      var x=(cells(a)[i]||{}).textContent||'',y=(cells(b)[i]||{}).textContent||'';
      var nx=parseFloat(x),ny=parseFloat(y);
      var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return up?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});});});
  apply();
})();
)JS";

constexpr const char* k_palette[] = {"#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c",
                                     "#0891b2", "#be185d", "#4d7c0f", "#7c2d12", "#475569"};

// The opening tag of a chart of `width` × `height` and its title at `left`.
std::string svg_start(const std::string& title, double width, double height, double left) {
  return fmt::format(
      R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {0} {1}" )"
      R"(width="{0}" height="{1}" role="img" aria-label="{2}"><text x="{3}" y="20" )"
      R"(font-size="14" font-weight="600">{2}</text>)",
      width, height, html_escape(title), left);
}

} // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    case '\0':
      out += "&#xFFFD;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string html_page_name(std::string_view definition_name) {
  std::string safe;
  for (const char c : definition_name.substr(0, 100)) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '-' || c == '.';
    safe += plain ? c : '_';
  }
  if (safe.empty() || safe.front() == '.') {
    safe.insert(safe.begin(), '_');
  }
  return fmt::format("{}-{}.html", safe, to_hex(sha256(definition_name)).substr(0, 8));
}

std::string fastp_svg(const std::string& title, const std::vector<ChartSeries>& series) {
  constexpr double width = 720, height = 360, left = 56, right = 190, top = 34, bottom = 46;
  const double plot_w = width - left - right;
  const double plot_h = height - top - bottom;
  double x_max = 1.0;
  for (const ChartSeries& s : series) {
    for (const auto& [x, y] : s.points) {
      if (std::isfinite(x)) {
        x_max = std::max(x_max, x);
      }
    }
  }
  const auto px = [&](double x) { return left + plot_w * std::clamp(x / x_max, 0.0, 1.0); };
  const auto py = [&](double y) { return top + plot_h * (1.0 - std::clamp(y, 0.0, 1.0)); };
  std::string out = svg_start(title, width, height, left);
  for (int i = 0; i <= 4; ++i) { // y ticks: 0%, 25%, ... 100%
    const double y = py(i / 4.0);
    out += fmt::format(R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#e3e7ee"/>)", left,
                       y, left + plot_w, y);
    out += fmt::format(R"(<text x="{}" y="{:.1f}" font-size="11" text-anchor="end">{}%</text>)",
                       left - 6, y + 4, i * 25);
  }
  for (int i = 0; i <= 4; ++i) { // x ticks
    const double x = x_max * i / 4.0;
    out += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" text-anchor="middle">{:g}</text>)",
                       px(x), top + plot_h + 16, std::round(x * 100) / 100);
  }
  out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#1d2330"/>)", left, top,
                     top + plot_h);
  out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#1d2330"/>)", left,
                     top + plot_h, left + plot_w);
  out += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="12" text-anchor="middle">)"
                     R"(speedup threshold p (over the reference or baseline)</text>)",
                     left + plot_w / 2, height - 8);
  out += fmt::format(R"SVG(<text x="14" y="{:.1f}" font-size="12" text-anchor="middle" )SVG"
                     R"SVG(transform="rotate(-90 14 {:.1f})">fast_p: share of tasks</text>)SVG",
                     top + plot_h / 2, top + plot_h / 2);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* color = k_palette[i % std::size(k_palette)];
    const ChartSeries& s = series[i];
    std::string points;
    for (const auto& [x, y] : s.points) {
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    }
    out += fmt::format(R"(<g class="series" data-label="{}">)", html_escape(s.label));
    out += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>)", color,
                       points);
    for (const auto& [x, y] : s.points) {
      out += fmt::format(R"(<circle class="point" cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}"/>)",
                         px(x), py(y), color);
    }
    out += "</g>";
    const double ly = top + 8 + 18.0 * static_cast<double>(i);
    out += fmt::format(R"(<rect x="{}" y="{:.1f}" width="12" height="12" fill="{}"/>)",
                       left + plot_w + 14, ly - 10, color);
    std::string label = s.label.size() > 24 ? s.label.substr(0, 23) + "…" : s.label;
    out += fmt::format(R"(<text class="legend" x="{}" y="{:.1f}" font-size="12">{}</text>)",
                       left + plot_w + 32, ly, html_escape(label));
  }
  out += "</svg>";
  return out;
}

namespace detail {

std::string html_text(std::string_view text) {
  if (text.size() <= k_html_max_text) {
    return html_escape(text);
  }
  std::size_t cut = k_html_max_text;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return html_escape(text.substr(0, cut)) +
         fmt::format(" <em class=\"muted\">[… {} more characters not shown]</em>",
                     text.size() - cut);
}

std::string speedup_text(std::optional<double> speedup) {
  return speedup ? fmt::format("{:.2f}x", *speedup) : std::string("—");
}

std::string html_page(const std::string& title, const std::string& body, int depth) {
  std::string up;
  for (int i = 0; i < depth; ++i) {
    up += "../";
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>{}</title><style>{}</style></head>\n<body><nav><a href=\"{}index.html\">Definitions"
      "</a><a href=\"{}leaderboard.html\">Leaderboard</a><a href=\"{}coverage.html\">Coverage</a>"
      "</nav>\n<main>\n{}\n</main>\n<script>{}</script></body></html>\n",
      html_escape(title), k_style, up, up, up, body, k_script);
}

std::string coverage_svg(const std::string& title, const std::vector<CoverageBar>& bars) {
  constexpr double width = 720, left = 170, right = 60, top = 50, row = 26;
  const double plot_w = width - left - right;
  const double height = top + row * static_cast<double>(bars.size()) + 40;
  std::string out = svg_start(title, width, height, left);
  out += fmt::format(R"(<rect x="{}" y="28" width="12" height="12" fill="#bfd3f6"/><text x="{}" )"
                     R"(y="38" font-size="12">attempted</text><rect x="{}" y="28" width="12" )"
                     R"(height="12" fill="#2563eb"/><text x="{}" y="38" font-size="12">solved )"
                     R"(correctly</text>)",
                     left, left + 16, left + 100, left + 116);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const CoverageBar& bar = bars[i];
    const double y = top + row * static_cast<double>(i);
    const auto share = [&](std::size_t n) {
      return bar.total == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(bar.total);
    };
    std::string label = bar.label.size() > 22 ? bar.label.substr(0, 21) + "…" : bar.label;
    out += fmt::format(R"(<text x="{}" y="{:.1f}" font-size="12" text-anchor="end">{}</text>)",
                       left - 8, y + 15, html_escape(label));
    out += fmt::format(R"(<rect class="bar attempted" x="{}" y="{:.1f}" width="{:.1f}" )"
                       R"(height="18" fill="#bfd3f6"/>)",
                       left, y + 2, plot_w * share(bar.attempted));
    out += fmt::format(R"(<rect class="bar correct" x="{}" y="{:.1f}" width="{:.1f}" )"
                       R"(height="18" fill="#2563eb"/>)",
                       left, y + 2, plot_w * share(bar.correct));
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11">{}/{}</text>)",
                       left + plot_w * share(bar.attempted) + 4, y + 15, bar.attempted, bar.total);
  }
  const double axis_y = top + row * static_cast<double>(bars.size()) + 4;
  out += fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#1d2330"/>)",
                     left, axis_y, left + plot_w);
  for (int i = 0; i <= 4; ++i) {
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle">{}%)"
                       R"(</text>)",
                       left + plot_w * i / 4.0, axis_y + 16, i * 25);
  }
  return out + "</svg>";
}

std::vector<ChartSeries> fastp_series(const DatasetFastp& curves) {
  std::vector<ChartSeries> out;
  for (const FastpCurve& curve : curves.curves) {
    ChartSeries s{curve.author.empty() ? std::string("best of all") : curve.author, {}};
    for (const FastpPoint& point : curve.points) {
      s.points.emplace_back(point.p, point.fast_p);
    }
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace detail
} // namespace fib
