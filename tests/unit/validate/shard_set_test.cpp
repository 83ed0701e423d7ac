// Shard records in reports, and validate-merge's judgement of a set of shard reports.

#include <fib/base/codes.hpp>
#include <fib/validate/dataset.hpp>
#include <fib/validate/report.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace fib {
namespace {

DatasetReport shard_report(std::size_t k, std::size_t n) {
  DatasetReport report;
  report.config.dataset = "ds";
  report.config.checks = {"layout", "definition"};
  report.config.disable_gpu = true;
  report.shard = ShardRecord{k, n, 12, "0123456789abcdef", FIB_VERSION};
  return report;
}

std::vector<std::filesystem::path> names(std::size_t count) {
  std::vector<std::filesystem::path> files;
  for (std::size_t i = 1; i <= count; ++i) {
    files.emplace_back(fmt::format("s{}.json", i));
  }
  return files;
}

TEST(ShardSet, ACompleteSetInAnyOrderIsSound) {
  const std::vector<DatasetReport> reports = {shard_report(3, 3), shard_report(1, 3),
                                              shard_report(2, 3)};
  EXPECT_TRUE(check_shard_set(reports, names(3), PartialMerge::refused).empty());
}

TEST(ShardSet, MissingDuplicateAndForeignShardsAreNamed) {
  DatasetReport other_dataset = shard_report(2, 4);
  other_dataset.shard->dataset_fingerprint = "ffffffffffffffff";
  DatasetReport other_version = shard_report(2, 4);
  other_version.shard->fib_version = "0.0.1";
  DatasetReport other_checks = shard_report(2, 4);
  other_checks.config.checks = {"layout"};
  DatasetReport unrecorded = shard_report(2, 4);
  unrecorded.shard.reset();
  const std::vector<DatasetReport> reports = {
      shard_report(1, 4), shard_report(1, 4), shard_report(2, 3), other_dataset,
      other_version,      other_checks,       unrecorded};
  const auto problems = check_shard_set(reports, names(7), PartialMerge::refused);
  ASSERT_EQ(problems.size(), 7u);
  EXPECT_EQ(problems[0].code, codes::k_shard_duplicate);
  EXPECT_EQ(problems[0].file, "s2.json");
  EXPECT_EQ(problems[0].message, "s1.json and s2.json are both shard 1/4");
  EXPECT_EQ(problems[1].code, codes::k_shard_foreign);
  EXPECT_EQ(problems[1].message,
            "s3.json is not a shard of the same run: it is shard 2/3, and s1.json is of 4 shards");
  EXPECT_NE(problems[2].message.find("another dataset"), std::string::npos);
  EXPECT_NE(problems[3].message.find("written by fib 0.0.1"), std::string::npos);
  EXPECT_NE(problems[4].message.find("checks [layout]"), std::string::npos);
  EXPECT_EQ(problems[5].code, codes::k_shard_foreign);
  EXPECT_NE(problems[5].message.find("s7.json records no shard"), std::string::npos);
  EXPECT_EQ(problems[6].code, codes::k_shard_missing);
  EXPECT_EQ(problems[6].message, "shards 2, 3, 4 of 4 are missing");
  for (const Diagnostic& d : problems) {
    EXPECT_EQ(d.severity, Severity::error);
    EXPECT_NE(d.hint.find("--allow-partial"), std::string::npos);
  }
}

TEST(ShardSet, AllowedPartialSetsAreWarnings) {
  const std::vector<DatasetReport> reports = {shard_report(2, 2)};
  const auto problems = check_shard_set(reports, names(1), PartialMerge::allowed);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].code, codes::k_shard_missing);
  EXPECT_EQ(problems[0].severity, Severity::warning);
  EXPECT_EQ(problems[0].message, "shard 1 of 2 is missing");
}

TEST(ShardSet, AHostileShardCountCostsNothing) {
  const std::vector<DatasetReport> reports = {shard_report(5, 1'000'000'000'000)};
  const auto problems = check_shard_set(reports, names(1), PartialMerge::refused);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message.rfind("shards 1, 2, 3,", 0), 0u) << problems[0].message;
  EXPECT_NE(problems[0].message.find("and 999999999979 more of 1000000000000 are missing"),
            std::string::npos)
      << problems[0].message;
}

TEST(ShardSet, RecordsRoundTripThroughTheReportJson) {
  const DatasetReport original = shard_report(2, 5);
  const std::string json = render_report_json(original);
  EXPECT_NE(json.find("\"fib_shard\": {\n    \"index\": 2,\n    \"count\": 5,"), std::string::npos)
      << json;
  const auto read = parse_report_json(json, "r.json");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->shard);
  EXPECT_EQ(read->shard->index, 2u);
  EXPECT_EQ(read->shard->count, 5u);
  EXPECT_EQ(read->shard->dataset_definitions, 12u);
  EXPECT_EQ(read->shard->dataset_fingerprint, "0123456789abcdef");
  EXPECT_EQ(render_report_json(*read), json);

  DatasetReport whole = original;
  whole.shard.reset();
  EXPECT_EQ(render_report_json(whole).find("fib_shard"), std::string::npos);
}

TEST(ShardSet, DamagedRecordsAreReportInvalidWithThePointer) {
  const std::string base = render_report_json(shard_report(1, 1));
  const auto damaged = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return parse_report_json(text, "r.json");
  };
  const auto zero = damaged("\"index\": 1", "\"index\": 0");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, codes::k_report_invalid);
  EXPECT_EQ(zero.error().pointer, "/fib_shard/index");
  const auto beyond = damaged("\"index\": 1", "\"index\": 2");
  ASSERT_FALSE(beyond);
  EXPECT_EQ(beyond.error().pointer, "/fib_shard/index");
  const auto text_count = damaged("\"count\": 1", "\"count\": \"1\"");
  ASSERT_FALSE(text_count);
  EXPECT_EQ(text_count.error().pointer, "/fib_shard/count");
}

} // namespace
} // namespace fib
