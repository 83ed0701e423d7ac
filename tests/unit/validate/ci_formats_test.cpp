// GitHub annotations, the step summary, SARIF and a dataset report's located findings.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/ci_formats.hpp>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace fib {
namespace {

Diagnostic finding(std::string_view code, std::string message, std::filesystem::path file,
                   std::string pointer = {}, int line = 0) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = std::move(file);
  d.pointer = std::move(pointer);
  d.line = line;
  return d;
}

CiPaths workspace_paths(const std::filesystem::path& workspace) {
  return CiPaths{"", workspace, workspace};
}

std::size_t count_lines_starting(const std::string& text, std::string_view start) {
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find('\n', pos);
    if (std::string_view(text).substr(pos).starts_with(start)) {
      ++n;
    }
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return n;
}

TEST(CiFormats, PathsAreRelativeToTheWorkspaceOrPrefixed) {
  const CiPaths plain = workspace_paths("/repo");
  EXPECT_EQ(ci_path("/repo/data/ds/definitions/a.json", plain), "data/ds/definitions/a.json");
  EXPECT_EQ(ci_path("/elsewhere/a.json", plain), "../elsewhere/a.json");
  EXPECT_EQ(ci_path("", plain), "");
  const CiPaths prefixed{"datasets/trace/", "/tmp/checkout", "/repo"};
  EXPECT_EQ(ci_path("/tmp/checkout/workloads/g/x.jsonl", prefixed),
            "datasets/trace/workloads/g/x.jsonl");
}

TEST(CiFormats, AnnotationsCarryFileLineTitleAndEscapedText) {
  std::vector<Diagnostic> findings = {
      finding(codes::k_blob_not_found, "w1: blob missing at a,b.safetensors\nsecond line",
              "/repo/ds/workloads/g/x,y.jsonl", "/workload/inputs/A/path", 3),
      finding(codes::k_description_missing, "missing description: 100%", "/repo/ds/d.json"),
  };
  findings.push_back(make_diagnostic(codes::k_cache_unavailable, "a note"));
  const std::string out = render_github_annotations(findings, workspace_paths("/repo"), 10);
  EXPECT_EQ(out, "::error file=ds/workloads/g/x%2Cy.jsonl,line=3,title=blob.not-found::"
                 "/workload/inputs/A/path: w1: blob missing at a,b.safetensors%0Asecond line\n"
                 "::warning file=ds/d.json,title=definition.description.missing::missing "
                 "description: 100%25\n")
      << "notes are not annotated";
}

TEST(CiFormats, AnnotationsAreCappedPerSeverityWithOneNotice) {
  std::vector<Diagnostic> findings;
  for (int i = 0; i < 5; ++i) {
    findings.push_back(finding(codes::k_blob_not_found, "e", "/repo/x.jsonl", "", i + 1));
    findings.push_back(finding(codes::k_description_missing, "w", "/repo/d.json"));
  }
  findings.push_back(finding(codes::k_blob_not_found, "late error", "/repo/x.jsonl", "", 9));
  const std::string out = render_github_annotations(findings, workspace_paths("/repo"), 2);
  EXPECT_EQ(count_lines_starting(out, "::error "), 2u);
  EXPECT_EQ(count_lines_starting(out, "::warning "), 2u);
  EXPECT_EQ(count_lines_starting(out, "::notice title=fib::4 errors and 3 warnings not annotated "
                                      "(--max-annotations 2"),
            1u)
      << out;
  const std::string all = render_github_annotations(findings, workspace_paths("/repo"), 0);
  EXPECT_EQ(count_lines_starting(all, "::error "), 6u);
  EXPECT_EQ(all.find("::notice"), std::string::npos);
}

TEST(CiFormats, StepSummaryCountsCodesAndEscapesData) {
  std::vector<Diagnostic> findings = {
      finding(codes::k_blob_not_found, "a | b <script> `x`", "/repo/ds/x.jsonl", "", 2),
      finding(codes::k_blob_not_found, "again", "/repo/ds/x.jsonl", "", 3),
      finding(codes::k_description_missing, "missing", "/repo/ds/d.json"),
  };
  const std::string out = render_step_summary(findings, workspace_paths("/repo"), "fib validate");
  EXPECT_TRUE(out.starts_with("### fib validate\n\n2 errors, 1 warning, 0 notes.\n")) << out;
  EXPECT_NE(out.find("| 2 | error | `blob.not-found` |"), std::string::npos) << out;
  EXPECT_NE(out.find("| 1 | warning | `definition.description.missing` |"), std::string::npos);
  EXPECT_NE(out.find("| ds/x.jsonl:2 | error | `blob.not-found` | a \\| b \\<script\\> \\`x\\` |"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("<summary>3 findings</summary>"), std::string::npos);
  EXPECT_EQ(render_step_summary({}, workspace_paths("/repo"), "t"), "### t\n\nNo findings.\n\n");
  std::vector<Diagnostic> many(k_step_summary_findings + 5, findings[2]);
  const std::string capped = render_step_summary(many, workspace_paths("/repo"), "t");
  EXPECT_NE(
      capped.find(fmt::format("The first {} of {} findings", k_step_summary_findings, many.size())),
      std::string::npos);
  EXPECT_EQ(count_lines_starting(capped, "| ds/d.json |"), k_step_summary_findings);
}

TEST(CiFormats, SarifHasRulesResultsAndRelativeLocations) {
  std::vector<Diagnostic> findings = {
      finding(codes::k_description_missing, "missing", "/repo/ds/d e.json", "/axes/M", 6),
      finding(codes::k_blob_not_found, "gone", "/repo/ds/x.jsonl", "", 3),
      finding(codes::k_description_missing, "missing too", "/repo/ds/f.json"),
  };
  findings.push_back(make_diagnostic(codes::k_cache_unavailable, "no file"));
  const auto log = nlohmann::json::parse(render_sarif(findings, workspace_paths("/repo")));
  EXPECT_EQ(log["version"], "2.1.0");
  const auto& run = log["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["SRCROOT"]["uri"], "file:///repo/");
  const auto& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0]["id"], "blob.not-found") << "rules in code order";
  EXPECT_EQ(rules[0]["defaultConfiguration"]["level"], "error");
  EXPECT_EQ(rules[2]["id"], "definition.description.missing");
  const auto& results = run["results"];
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0]["ruleIndex"], 2);
  EXPECT_EQ(results[0]["level"], "warning");
  const auto& physical = results[0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(physical["artifactLocation"]["uri"], "ds/d%20e.json");
  EXPECT_EQ(physical["artifactLocation"]["uriBaseId"], "SRCROOT");
  EXPECT_EQ(physical["region"]["startLine"], 6);
  EXPECT_EQ(results[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], "/axes/M");
  EXPECT_FALSE(results[2]["locations"][0]["physicalLocation"].contains("region"));
  EXPECT_FALSE(results[3].contains("locations")) << "a finding about no file";
  EXPECT_EQ(results[3]["level"], "note");
  EXPECT_NE(results[0]["partialFingerprints"]["fib/v1"],
            results[2]["partialFingerprints"]["fib/v1"]);
}

TEST(CiFormats, ReportFindingsUseTheMessageLocationElseTheDefinitionFile) {
  DatasetReport report;
  DefinitionReport& gemm = report.definitions["gemm"];
  CheckResult workload;
  workload.add(codes::k_dataset_workload_valid_count, "1/2 valid");
  workload.add(codes::k_blob_not_found, "w2: blob missing at b").where =
      MessageLocation{"workloads/g/gemm.jsonl", "/workload/inputs/A/path", 2};
  gemm[Category::workload] = workload;
  CheckResult baseline;
  baseline.add(codes::k_dataset_baseline_none, "no baseline solution");
  gemm[Category::baseline] = baseline;
  report.definition_files["gemm"] = "/ds/definitions/g/gemm.json";
  report.dataset.emplace().add(codes::k_dataset_orphan, "x.jsonl: orphan").where.file = "x.jsonl";
  const auto found = report_findings_located(report, "/ds");
  ASSERT_EQ(found.size(), 3u) << "infos are not findings";
  EXPECT_EQ(found[0].file, "/ds/workloads/g/gemm.jsonl");
  EXPECT_EQ(found[0].line, 2);
  EXPECT_EQ(found[0].pointer, "/workload/inputs/A/path");
  EXPECT_EQ(found[0].message, "gemm workload: w2: blob missing at b");
  EXPECT_EQ(found[0].code, "blob.not-found");
  EXPECT_EQ(found[1].file, "/ds/definitions/g/gemm.json");
  EXPECT_EQ(found[1].message, "gemm baseline: no baseline solution");
  EXPECT_EQ(found[2].file, "/ds/x.jsonl");
  EXPECT_EQ(found[2].message, "dataset /ds: x.jsonl: orphan");
}

TEST(CiFormats, LinesComeFromPointersInTheFile) {
  testing::TempDir dir;
  const auto file = dir.write(
      "d.json", "{\n  \"name\": \"d\",\n  \"axes\": {\n    \"M\": {\"type\": \"var\"}\n  }\n}\n");
  std::vector<Diagnostic> found = {
      finding(codes::k_description_missing, "m", file, "/axes/M/description"),
      finding(codes::k_description_missing, "n", file, "/name"),
      finding(codes::k_description_missing, "kept", file, "/name", 9),
      finding(codes::k_description_missing, "missing file", dir.path() / "none.json", "/x"),
      finding(codes::k_blob_not_found, "lines", dir.path() / "w.jsonl", "/workload"),
  };
  resolve_pointer_lines(found);
  EXPECT_EQ(found[0].line, 4) << "a missing key has its parent's line";
  EXPECT_EQ(found[1].line, 2);
  EXPECT_EQ(found[2].line, 9) << "a known line is kept";
  EXPECT_EQ(found[3].line, 0);
  EXPECT_EQ(found[4].line, 0) << "JSON Lines findings know their lines";
}

} // namespace
} // namespace fib
