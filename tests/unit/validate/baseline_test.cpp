// The baseline file: its keys, its text, reading it back, and matching runs against it.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/baseline.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using codes::k_description_missing;

Diagnostic finding(std::string_view code, std::filesystem::path file, std::string pointer,
                   std::string message, Severity severity = Severity::warning) {
  Diagnostic d;
  d.code = std::string(code);
  d.file = std::move(file);
  d.pointer = std::move(pointer);
  d.message = std::move(message);
  d.severity = severity;
  return d;
}

std::vector<BaselineFinding> views(const std::vector<Diagnostic>& found) {
  std::vector<BaselineFinding> out;
  for (const Diagnostic& d : found) {
    out.push_back({d.code, d.file, d.pointer, d.message, d.severity});
  }
  return out;
}

const BaselineScope k_everything = [](const BaselineKey&) { return true; };

TEST(Baseline, KeysAreRelativeToTheBaselineAndFreeOfItsAbsolutePath) {
  const BaselineKey a =
      baseline_key({k_description_missing, "/repo/ds/definitions/g.json", "/description",
                    "file /repo/ds/definitions/g.json has no description", Severity::warning},
                   "/repo/fib-baseline.json");
  const BaselineKey b =
      baseline_key({k_description_missing, "/ci/work/ds/definitions/g.json", "/description",
                    "file /ci/work/ds/definitions/g.json has no description", Severity::warning},
                   "/ci/work/fib-baseline.json");
  EXPECT_EQ(a.file, "ds/definitions/g.json");
  EXPECT_EQ(a.fingerprint.size(), 16u);
  EXPECT_EQ(a, b) << "a checkout elsewhere gives the same key";
  const BaselineKey other = baseline_key({k_description_missing, "/repo/ds/definitions/g.json",
                                          "/description", "another text", Severity::warning},
                                         "/repo/fib-baseline.json");
  EXPECT_NE(a.fingerprint, other.fingerprint);
}

TEST(Baseline, WrittenFilesReadBackAndRenderTheSameBytes) {
  testing::TempDir dir;
  const auto file = dir.path() / "fib-baseline.json";
  const std::vector<Diagnostic> found = {
      finding(k_description_missing, dir.path() / "b.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(codes::k_tag_format, dir.path() / "a.json", "/tags/0", "bad tag", Severity::note),
      finding(codes::k_io_read, dir.path() / "c.json", "", "unreadable", Severity::error),
  };
  const Baseline made = make_baseline(views(found), file, nullptr, k_everything);
  ASSERT_EQ(made.entries.size(), 2u) << "notes and environment errors are never baselined";
  EXPECT_EQ(made.entries[0].key.file, "a.json") << "sorted by key";
  EXPECT_EQ(made.entries[0].count, 2u) << "identical findings share one entry";
  const std::string text = render_baseline(made);
  dir.write("fib-baseline.json", text);
  const auto read = read_baseline(file);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(render_baseline(*read), text);
  EXPECT_EQ(read->entries[1].key.file, "b.json");
  EXPECT_EQ(text.back(), '\n');
}

TEST(Baseline, MatchingSuppressesUpToTheCountAndReportsWhatIsFixed) {
  testing::TempDir dir;
  const auto file = dir.path() / "fib-baseline.json";
  std::vector<Diagnostic> before = {
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(codes::k_axis_unused, dir.path() / "b.json", "/axes/N", "axis N unused"),
  };
  const Baseline baseline = make_baseline(views(before), file, nullptr, k_everything);

  std::vector<Diagnostic> now = {
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "new.json", "/description", "missing"),
  };
  const BaselineMatch match = apply_baseline(baseline, now, k_everything);
  EXPECT_EQ(match.suppressed, 2u);
  ASSERT_EQ(now.size(), 2u) << "a third identical finding and a new file's are reported";
  EXPECT_EQ(now[1].file, dir.path() / "new.json");
  ASSERT_EQ(match.fixed.size(), 1u);
  EXPECT_EQ(match.fixed[0].key.code, codes::k_axis_unused);

  const Diagnostic note = fixed_entry_note(baseline, match.fixed[0]);
  EXPECT_EQ(note.code, codes::k_baseline_fixed);
  EXPECT_EQ(note.file, file);
  EXPECT_EQ(note.pointer, "/entries/0") << "the axis entry sorts first (code order)";
  EXPECT_NE(note.message.find("b.json /axes/N"), std::string::npos) << note.message;

  std::vector<Diagnostic> again = before;
  const BaselineScope only_a = [](const BaselineKey& key) { return key.file == "a.json"; };
  EXPECT_TRUE(apply_baseline(baseline, again, only_a).fixed.empty())
      << "entries outside the run's scope are never called fixed";
}

TEST(Baseline, RewritingKeepsTheEntriesOutsideTheScope) {
  testing::TempDir dir;
  const auto file = dir.path() / "fib-baseline.json";
  const std::vector<Diagnostic> first = {
      finding(k_description_missing, dir.path() / "a.json", "/description", "missing"),
      finding(k_description_missing, dir.path() / "b.json", "/description", "missing"),
  };
  const Baseline previous = make_baseline(views(first), file, nullptr, k_everything);
  const std::vector<Diagnostic> only_b_fixed = {};
  const BaselineScope b_checked = [](const BaselineKey& key) { return key.file == "b.json"; };
  const Baseline rewritten = make_baseline(views(only_b_fixed), file, &previous, b_checked);
  ASSERT_EQ(rewritten.entries.size(), 1u);
  EXPECT_EQ(rewritten.entries[0].key.file, "a.json");
}

TEST(Baseline, ScopesFollowWhatTheRunChecked) {
  DatasetReport report;
  report.definition_files.emplace("g", "/repo/ds/definitions/gemm/g.json");
  const auto whole = dataset_baseline_scope(report, "/repo/b.json", DatasetCoverage::whole);
  EXPECT_TRUE(whole({"c", "ds/definitions/gemm/g.json", "", "f"}));
  EXPECT_TRUE(whole({"c", "", "", "f"}));
  EXPECT_TRUE(whole({"c", "ds/definitions/gone/gone.json", "", "f"}))
      << "a whole run judges the entries of definitions that are gone too";
  const auto part =
      dataset_baseline_scope(report, "/repo/b.json", DatasetCoverage::some_definitions);
  EXPECT_TRUE(part({"c", "ds/definitions/gemm/g.json", "", "f"}));
  EXPECT_FALSE(part({"c", "", "", "f"})) << "dataset-level findings need the whole dataset";
  const auto categories =
      dataset_baseline_scope(report, "/repo/b.json", DatasetCoverage::some_categories);
  EXPECT_FALSE(categories({"c", "ds/definitions/gemm/g.json", "", "f"}));

  const auto files =
      files_baseline_scope({"/repo/ds/definitions/", "/repo/x.json"}, "/repo/b.json");
  EXPECT_TRUE(files({"c", "ds/definitions/gemm/g.json", "", "f"}));
  EXPECT_TRUE(files({"c", "x.json", "", "f"}));
  EXPECT_FALSE(files({"c", "ds/definitionsX/g.json", "", "f"}));
  EXPECT_FALSE(files({"c", "y.json", "", "f"}));
}

TEST(Baseline, DatasetReportsSayWhatWasSuppressedAndFixed) {
  testing::TempDir dir;
  const auto file = dir.path() / "fib-baseline.json";
  DatasetReport report;
  DefinitionReport definition;
  CheckResult checked;
  checked.add(k_description_missing, "missing description");
  definition[Category::definition] = checked;
  definition.update_status();
  report.definitions.emplace("g", definition);
  report.definition_files.emplace("g", dir.path() / "definitions/gemm/g.json");
  const auto scope = dataset_baseline_scope(report, file, DatasetCoverage::whole);
  Baseline baseline = make_baseline(report_findings(report), file, nullptr, scope);
  ASSERT_EQ(baseline.entries.size(), 1u);
  EXPECT_EQ(baseline.entries[0].key.file, "definitions/gemm/g.json");
  EXPECT_EQ(baseline.entries[0].key.pointer, "");
  // Kept sorted by key, as read_baseline and make_baseline keep them: dataset.* sorts first.
  baseline.entries.insert(baseline.entries.begin(),
                          {{std::string(codes::k_dataset_orphan), "", "", "0123456789abcdef"},
                           1,
                           "[fib] orphan",
                           Severity::warning,
                           0});

  const BaselineMatch match = apply_baseline(baseline, report, scope);
  EXPECT_EQ(match.suppressed, 1u);
  EXPECT_EQ(report.definitions["g"].status, CheckStatus::ok);
  EXPECT_TRUE(report.definitions["g"][Category::definition]->messages.empty());
  ASSERT_TRUE(report.dataset);
  ASSERT_EQ(report.dataset->messages.size(), 2u);
  EXPECT_EQ(report.dataset->messages[0].code, codes::k_baseline_suppressed);
  EXPECT_NE(report.dataset->messages[0].message.find("1 finding suppressed"), std::string::npos);
  EXPECT_EQ(report.dataset->messages[1].code, codes::k_baseline_fixed);
  EXPECT_EQ(report.dataset->status, CheckStatus::ok) << "both are infos";
}

TEST(Baseline, FileNamesThatAreNotUtf8KeepTheirKeysThroughTheFile) {
  testing::TempDir dir;
  const auto file = dir.path() / "fib-baseline.json";
  const std::filesystem::path odd = dir.path() / "bad\xffname 100%.json";
  const std::vector<Diagnostic> found = {finding(k_description_missing, odd, "", "missing")};
  const Baseline made = make_baseline(views(found), file, nullptr, k_everything);
  ASSERT_EQ(made.entries.size(), 1u);
  EXPECT_EQ(made.entries[0].key.file, "bad%FFname 100%25.json");
  dir.write("fib-baseline.json", render_baseline(made));
  const auto read = read_baseline(file);
  ASSERT_TRUE(read) << read.error().message;
  std::vector<Diagnostic> again = found;
  EXPECT_EQ(apply_baseline(*read, again, k_everything).suppressed, 1u);
  EXPECT_TRUE(again.empty());
}

TEST(Baseline, ABaselineAtTheRootCutsNoSlashesOutOfMessages) {
  const auto key = [](std::string_view message) {
    return baseline_key({k_description_missing, "", "", message, Severity::warning},
                        "/fib-baseline.json");
  };
  EXPECT_NE(key("a/b").fingerprint, key("ab").fingerprint);
}

TEST(Baseline, DamagedFilesAreBaselineInvalidWithThePointer) {
  testing::TempDir dir;
  const auto check = [&](std::string_view text, std::string_view code, std::string_view pointer) {
    const auto file = dir.write("b.json", text);
    const auto read = read_baseline(file);
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().code, code) << text;
    EXPECT_EQ(read.error().pointer, pointer) << text;
  };
  check("[]", codes::k_baseline_invalid, "");
  check(R"({"entries": []})", codes::k_baseline_invalid, "/fib_baseline");
  check(R"({"fib_baseline": 2, "entries": []})", codes::k_baseline_invalid, "/fib_baseline");
  check(R"({"fib_baseline": 1})", codes::k_baseline_invalid, "/entries");
  check(R"({"fib_baseline": 1, "entries": [{"code": 1}]})", codes::k_baseline_invalid,
        "/entries/0/code");
  check(R"({"fib_baseline": 1, "entries": [{"code": "c", "file": "", "pointer": "",
        "fingerprint": "f", "count": 0}]})",
        codes::k_baseline_invalid, "/entries/0/count");
  const std::string entry = R"({"code": "c", "file": "", "pointer": "", "fingerprint": "f",
        "count": 1})";
  check(R"({"fib_baseline": 1, "entries": [)" + entry + "," + entry + "]}",
        codes::k_baseline_invalid, "/entries/1");
  check("{", codes::k_baseline_invalid, "");
  const auto directory = read_baseline(dir.path());
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code, codes::k_baseline_invalid);
  EXPECT_EQ(read_baseline(dir.path() / "missing.json").error().code, codes::k_io_not_found);
}

} // namespace
} // namespace fib
