// `fib report html` (report/html_site.hpp): escaping, page names, the fast_p SVG, the site of a
// small dataset written by the test (a hostile one among them), and the rules of its directory.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/report/html_site.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::describe;
using testing::read_file;
using testing::TempDir;

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// A definition whose name, description, tag and reference come from the caller (JSON-escaped
// here), one workload, and a solution of `author` with one PASSED trace.
void write_dataset(const TempDir& dir, const std::string& name, const std::string& description,
                   const std::string& author, const std::string& tag = "model:llama") {
  const auto q = [](const std::string& s) { return Json(s).dump(); };
  dir.write(fmt::format("ds/definitions/op/{}.json", "d"),
            fmt::format(R"({{"name": {}, "op_type": "op", "description": {}, "tags": [{}],
 "axes": {{"M": {{"type": "var"}}}}, "constraints": ["M > 0"],
 "inputs": {{"A": {{"shape": ["M"], "dtype": "float32"}}}},
 "outputs": {{"B": {{"shape": ["M"], "dtype": "float32"}}}},
 "reference": "def run(A):\n    return A  # </script><script>alert(2)</script>\n"}})",
                        q(name), q(description), q(tag)));
  dir.write("ds/workloads/op/d.jsonl",
            fmt::format(R"({{"definition": {}, "workload": {{"axes": {{"M": 4}}, "inputs": {{"A": )"
                        R"({{"type": "random"}}}}, "uuid": "w1"}}, "solution": null, )"
                        R"("evaluation": null}})"
                        "\n",
                        q(name)));
  dir.write("ds/solutions/a/op/d/s.json",
            fmt::format(R"({{"name": "s", "definition": {}, "author": {},
 "spec": {{"language": "python", "target_hardware": ["cpu"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A):\n    return A\n"}}]}})",
                        q(name), q(author)));
  dir.write(
      "ds/traces/a/op/d.jsonl",
      fmt::format(R"({{"definition": {}, "workload": {{"axes": {{"M": 4}}, "inputs": {{"A": )"
                  R"({{"type": "random"}}}}, "uuid": "w1"}}, "solution": "s", "evaluation": )"
                  R"({{"status": "PASSED", "environment": {{"hardware": {}}}, "timestamp": )"
                  R"("t", "correctness": {{"max_relative_error": 0, "max_absolute_error": 0}})"
                  R"(, "performance": {{"latency_ms": 1, "reference_latency_ms": 3, )"
                  R"("speedup_factor": 3}}}}}})"
                  "\n",
                  q(name), q("<b>cpu</b>")));
}

TEST(HtmlEscape, EveryMarkupCharacterBecomesAReference) {
  EXPECT_EQ(html_escape(R"(<script>alert("x")</script> & 'y')"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
  EXPECT_EQ(html_escape(std::string_view("a\0b", 3)), "a&#xFFFD;b");
}

TEST(HtmlPageName, SafeDistinctAndNeverHidden) {
  const std::string up = html_page_name("../../x");
  EXPECT_EQ(up.find('/'), std::string::npos) << up;
  EXPECT_TRUE(up.starts_with("_.._.._x-")) << up; // never ".." alone, never hidden
  EXPECT_TRUE(html_page_name(".hidden").starts_with("_.hidden-"));
  EXPECT_NE(html_page_name("a/b"), html_page_name("a_b"));
  EXPECT_EQ(html_page_name("gemm"), html_page_name("gemm"));
  EXPECT_LE(html_page_name(std::string(5000, 'x')).size(), 100u + 15u);
}

TEST(FastpSvg, OneSeriesPerCurveOnePointPerThresholdAndEscapedLabels) {
  const std::vector<ChartSeries> series = {
      {"alice", {{0, 1.0}, {1, 0.5}, {2, 0.0}}},
      {"<img src=x onerror=alert(1)>", {{0, 0.5}, {1, 0.25}, {2, 0.0}}}};
  const std::string svg = fastp_svg("fast_p & more", series);
  EXPECT_TRUE(svg.starts_with("<svg class=\"chart\""));
  EXPECT_EQ(count_of(svg, "<g class=\"series\""), 2u);
  EXPECT_EQ(count_of(svg, "<circle class=\"point\""), 6u);
  EXPECT_EQ(count_of(svg, "class=\"legend\""), 2u);
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_NE(svg.find("fast_p &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("speedup threshold p"), std::string::npos);
}

TEST(HtmlSite, AHostileDatasetGivesEscapedPagesWithOnlyFibsScript) {
  TempDir dir;
  const std::string name = "<script>alert(1)</script>";
  write_dataset(dir, name, "see <a href=\"javascript:alert(3)\">this</a>", "<img src=x onerror=1>",
                "model:<i>m</i>");
  HtmlSiteOptions options;
  options.dataset = dir.path() / "ds";
  options.out = dir.path() / "site";
  DiagnosticList sink;
  const HtmlSiteResult result = write_html_site(options, sink);
  ASSERT_TRUE(result.written) << describe(sink);
  EXPECT_EQ(result.definitions, 1u);
  const std::string page = "definitions/" + html_page_name(name);
  const std::set<std::string> expected = {"index.html", "leaderboard.html", "coverage.html", page,
                                          ".fib-site"};
  EXPECT_EQ(std::set<std::string>(result.files.begin(), result.files.end()), expected);
  for (const std::string& file : {std::string("index.html"), std::string("leaderboard.html"),
                                  std::string("coverage.html"), page}) {
    const std::string html = read_file(options.out / file);
    EXPECT_EQ(count_of(html, "<script"), 1u) << file; // fib's own, at the end
    EXPECT_EQ(html.find("<img"), std::string::npos) << file;
    EXPECT_EQ(html.find("href=\"javascript:"), std::string::npos) << file;
    EXPECT_EQ(html.find("<i>m</i>"), std::string::npos) << file;
    EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos) << file;
  }
  // The leaderboard: one author, with its coverage bars and its fast_p curve beside the best.
  const std::string board = read_file(options.out / "leaderboard.html");
  EXPECT_EQ(count_of(board, "<rect class=\"bar attempted\""), 1u);
  EXPECT_EQ(count_of(board, "<rect class=\"bar correct\""), 1u);
  EXPECT_EQ(count_of(board, "<g class=\"series\""), 2u);
  EXPECT_NE(board.find("&lt;img src=x onerror=1&gt;"), std::string::npos);
  const std::string index = read_file(options.out / "index.html");
  EXPECT_NE(index.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(index.find("href=\"" + page + "\""), std::string::npos);
  const std::string definition = read_file(options.out / page);
  EXPECT_NE(definition.find("&lt;/script&gt;&lt;script&gt;alert(2)"), std::string::npos);
  EXPECT_NE(definition.find("&lt;b&gt;cpu&lt;/b&gt;"), std::string::npos); // the device
  EXPECT_NE(definition.find("3.00x"), std::string::npos);
  // The solution × workload matrix: one row, one column (workload w1).
  const std::size_t matrix = definition.find("<table id=\"speedups\" class=\"matrix\">");
  ASSERT_NE(matrix, std::string::npos);
  EXPECT_NE(definition.find("<th title=\"w1\">w1</th></tr></thead><tbody><tr><td>s</td><td "
                            "class=\"num\">3.00x</td></tr>",
                            matrix),
            std::string::npos);
  // The constraint held on the one workload.
  EXPECT_NE(definition.find("<code>M &gt; 0</code></td><td class=\"num\">1</td>"),
            std::string::npos);
  EXPECT_NE(definition.find("not checked"), std::string::npos); // no validation report given
}

TEST(HtmlSite, HugeStringsAreCutSoThePagesStayBounded) {
  TempDir dir;
  write_dataset(dir, "big", std::string(3'000'000, 'x'), "alice");
  HtmlSiteOptions options;
  options.dataset = dir.path() / "ds";
  options.out = dir.path() / "site";
  DiagnosticList sink;
  ASSERT_TRUE(write_html_site(options, sink).written) << describe(sink);
  const std::string page = read_file(options.out / "definitions" / html_page_name("big"));
  EXPECT_LT(page.size(), 2 * k_html_max_text + 50'000);
  EXPECT_NE(page.find("more characters not shown"), std::string::npos);
  EXPECT_LT(read_file(options.out / "index.html").size(), 50'000u);
}

TEST(HtmlSite, OutMustBeEmptyOrAFibSiteAndStalePagesGo) {
  TempDir dir;
  write_dataset(dir, "first", "d", "alice");
  HtmlSiteOptions options;
  options.dataset = dir.path() / "ds";
  options.out = dir.path() / "site";

  // A directory with a file fib did not write: nothing is written, the file stays.
  dir.write("site/notes.txt", "mine");
  DiagnosticList refused;
  EXPECT_FALSE(write_html_site(options, refused).written);
  ASSERT_EQ(refused.items().size(), 1u) << describe(refused);
  EXPECT_EQ(refused.items().front().code, codes::k_report_exists);
  EXPECT_NE(refused.items().front().message.find("notes.txt"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(options.out / "index.html"));
  EXPECT_EQ(read_file(options.out / "notes.txt"), "mine");
  std::filesystem::remove(options.out / "notes.txt");

  DiagnosticList sink;
  ASSERT_TRUE(write_html_site(options, sink).written) << describe(sink);
  const auto first_page = options.out / "definitions" / html_page_name("first");
  EXPECT_TRUE(std::filesystem::exists(first_page));

  // The definition renamed: the site is rewritten over itself, the old page removed.
  std::filesystem::remove_all(dir.path() / "ds");
  write_dataset(dir, "second", "d", "alice");
  DiagnosticList again;
  ASSERT_TRUE(write_html_site(options, again).written) << describe(again);
  EXPECT_FALSE(std::filesystem::exists(first_page));
  EXPECT_TRUE(std::filesystem::exists(options.out / "definitions" / html_page_name("second")));
  const std::string marker = read_file(options.out / k_html_site_marker);
  EXPECT_TRUE(marker.starts_with("fib html site\n"));
  EXPECT_EQ(marker.find("first"), std::string::npos);

  // OUT a file: refused.
  HtmlSiteOptions onto_file = options;
  onto_file.out = dir.write("a-file", "x");
  DiagnosticList file_refused;
  EXPECT_FALSE(write_html_site(onto_file, file_refused).written);
  ASSERT_FALSE(file_refused.items().empty());
  EXPECT_EQ(file_refused.items().front().code, codes::k_report_exists);
}

TEST(HtmlSite, AValidationReportGivesEachDefinitionItsStatusAndFindings) {
  TempDir dir;
  write_dataset(dir, "checked", "d", "alice");
  HtmlSiteOptions options;
  options.dataset = dir.path() / "ds";
  options.out = dir.path() / "site";
  DatasetReport report;
  DefinitionReport definition;
  CheckResult result;
  result.add(CheckLevel::warning, "definition.description.missing", "missing description: axes.M");
  result.update_status();
  definition[Category::definition] = result;
  definition.update_status();
  report.definitions["checked"] = definition;
  options.validation = report;
  DiagnosticList sink;
  ASSERT_TRUE(write_html_site(options, sink).written) << describe(sink);
  const std::string page = read_file(options.out / "definitions" / html_page_name("checked"));
  EXPECT_NE(page.find("validation <span class=\"warning\">warning</span>"), std::string::npos);
  EXPECT_NE(page.find("definition.description.missing: missing description: axes.M"),
            std::string::npos);
  EXPECT_NE(read_file(options.out / "index.html").find("<span class=\"warning\">warning</span>"),
            std::string::npos);
}

} // namespace
} // namespace fib
