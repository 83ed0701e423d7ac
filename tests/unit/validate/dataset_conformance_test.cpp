// fib validate --dataset on the corpus dataset (testing::corpus_dir()/dataset) against the report
// the old tool wrote on it (anchor-reports/dataset.json in the corpus). Skipped when the corpus
// is absent.

#include "test_support.hpp"

#include <fib/validate/dataset.hpp>
#include <fib/validate/report.hpp>

#include <gtest/gtest.h>

#include <set>

namespace fib {
namespace {

// fib's own messages on this dataset (all info level, so no status changes): the only differences
// allowed besides de-duplicated blob messages (docs/compatibility.md).
const std::set<std::pair<std::string, std::string>> k_allowed_extras = {
    {"trtllm_fp4_block_scale_moe_topk8_e64_h4096_i1536",
     "[fib] axis 'top_k' is used by no input or output shape"},
    // The blobs these constraints read are absent from the corpus (as in a clone without blobs).
    {"gqa_paged_prefill_causal_h32_kv4_d128_ps1",
     "[fib] constraint 'num_kv_indices == kv_indptr[-1].item()' not evaluated on 31 of 33 "
     "workloads: needs the data of tensor 'kv_indptr'"},
    {"gqa_paged_prefill_causal_h32_kv4_d128_ps1",
     "[fib] constraint 'total_q == qo_indptr[-1].item()' not evaluated on 31 of 33 workloads: "
     "needs the data of tensor 'qo_indptr'"},
    {"gqa_ragged_prefill_causal_h32_kv4_d128",
     "[fib] constraint 'total_kv == kv_indptr[-1].item()' not evaluated on 15 of 15 workloads: "
     "needs the data of tensor 'kv_indptr'"},
    {"gqa_ragged_prefill_causal_h32_kv4_d128",
     "[fib] constraint 'total_q == qo_indptr[-1].item()' not evaluated on 15 of 15 workloads: "
     "needs the data of tensor 'qo_indptr'"},
};

TEST(DatasetConformance, MatchesTheOldToolOnTheCorpusDataset) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty()) {
    GTEST_SKIP() << "../shared/corpus is absent";
  }
  auto anchor_text = read_text_file(corpus / "anchor-reports" / "dataset.json");
  ASSERT_TRUE(anchor_text.has_value());
  auto anchor = parse_report_json(*anchor_text, "dataset.json");
  ASSERT_TRUE(anchor.has_value()) << anchor.error().message;

  ValidateDatasetOptions options;
  options.root = corpus / "dataset";
  options.gpu = GpuChecks::disabled;
  DiagnosticList environment;
  const DatasetReport report = validate_dataset(options, testing::python(), environment);
  EXPECT_FALSE(environment.has_errors());

  EXPECT_EQ(report.config.checks, anchor->config.checks);
  EXPECT_EQ(report.config.disable_gpu, anchor->config.disable_gpu);
  ASSERT_EQ(report.definitions.size(), anchor->definitions.size());
  for (const auto& [name, old] : anchor->definitions) {
    SCOPED_TRACE(name);
    const auto it = report.definitions.find(name);
    ASSERT_NE(it, report.definitions.end());
    const DefinitionReport& mine = it->second;
    EXPECT_EQ(to_string(mine.status), to_string(old.status));
    for (const Category category : k_category_order) {
      SCOPED_TRACE(std::string(to_string(category)));
      ASSERT_EQ(mine[category].has_value(), old[category].has_value());
      if (!old[category]) {
        continue;
      }
      EXPECT_EQ(to_string(mine[category]->status), to_string(old[category]->status));
      std::set<std::pair<std::string, std::string>> old_messages;
      std::set<std::pair<std::string, std::string>> my_messages;
      for (const CheckMessage& m : old[category]->messages) {
        old_messages.emplace(to_string(m.level), m.message);
      }
      for (const CheckMessage& m : mine[category]->messages) {
        my_messages.emplace(to_string(m.level), m.message);
      }
      for (const auto& message : old_messages) {
        EXPECT_TRUE(my_messages.contains(message))
            << "the old tool's message is missing: " << message.first << ": " << message.second;
      }
      for (const auto& message : my_messages) {
        if (!old_messages.contains(message)) {
          EXPECT_TRUE(k_allowed_extras.contains({name, message.second}))
              << "unexpected extra message: " << message.first << ": " << message.second;
        }
      }
    }
  }
  // Nothing outside the definitions' reports: no fib_dataset section, so the JSON keeps the old
  // layout exactly.
  EXPECT_TRUE(!report.dataset.has_value() || report.dataset->messages.empty());
  EXPECT_EQ(render_report_json(report).find("fib_dataset"), std::string::npos);
}

TEST(DatasetConformance, TextReportMatchesTheOldLayoutLineForLine) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty()) {
    GTEST_SKIP() << "../shared/corpus is absent";
  }
  auto anchor_text = read_text_file(corpus / "anchor-reports" / "dataset.txt");
  ASSERT_TRUE(anchor_text.has_value());
  ValidateDatasetOptions options;
  options.root = corpus / "dataset";
  options.gpu = GpuChecks::disabled;
  DiagnosticList environment;
  DatasetReport report = validate_dataset(options, testing::python(), environment);
  report.config.dataset = "corpus/dataset"; // the anchor was made from the corpus folder
  const std::string mine = render_report_text(report);
  // Every line fib prints is a line of the old report, except its one extra message; the old
  // report has more lines only because it repeats missing-blob messages.
  std::set<std::string> old_lines;
  for (std::size_t start = 0; start < anchor_text->size();) {
    const auto end = anchor_text->find('\n', start);
    old_lines.insert(anchor_text->substr(start, end - start));
    start = end == std::string::npos ? anchor_text->size() : end + 1;
  }
  for (std::size_t start = 0; start < mine.size();) {
    const auto end = mine.find('\n', start);
    const std::string line = mine.substr(start, end - start);
    if (line.find("[fib]") == std::string::npos) {
      EXPECT_TRUE(old_lines.contains(line)) << "not in the old report: '" << line << "'";
    }
    start = end == std::string::npos ? mine.size() : end + 1;
  }
  // Exactly one trailing newline, as the old report file (the anchor) has.
  EXPECT_TRUE(anchor_text->ends_with("skipped)\n"));
  EXPECT_TRUE(mine.ends_with("skipped)\n"));
}

} // namespace
} // namespace fib
