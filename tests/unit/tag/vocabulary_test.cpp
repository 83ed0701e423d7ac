// The tag vocabulary as the community writes it: FlashInfer's templates and the flashinfer-bench
// dataset, unknown values as warnings, and the single-valued namespaces (status:, stage:) in
// check_tag, edit_tag_list, edit_tag_files, inventory_tags and validate's lint.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/definition.hpp>
#include <fib/tag/tags.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using Tags = std::vector<std::string>;

std::string tag_code(std::string_view tag) {
  const auto problem = check_tag(tag);
  return problem ? problem->code : std::string();
}

const std::string k_malformed(codes::k_tag_malformed);
const std::string k_unknown(codes::k_tag_unknown_namespace);
const std::string k_unknown_value(codes::k_tag_unknown_value);
const std::string k_conflict(codes::k_tag_conflict);

TEST(TagCheck, QuantizationTakesFibDtypesAndSchemes) {
  EXPECT_EQ(tag_code("quantization:float8_e4m3fn"), "");
  EXPECT_EQ(tag_code("quantization:bfloat16"), "");
  EXPECT_EQ(tag_code("quantization:float4_e2m1"), "");
  EXPECT_EQ(tag_code("quantization:bool"), "");
  // The schemes FlashInfer's templates and the dataset write.
  for (const char* scheme :
       {"fp4", "fp8", "nvfp4", "mxfp4", "mxfp8", "mxint4", "float4_e2m1fn_mxfp4"}) {
    EXPECT_EQ(tag_code(std::string("quantization:") + scheme), "") << scheme;
    EXPECT_EQ(tag_code(std::string("quantize:") + scheme), "") << scheme;
    EXPECT_EQ(tag_code(std::string("quant:") + scheme), "") << scheme;
  }
  // Well formed but not a value fib knows: a warning, not an error.
  EXPECT_EQ(tag_code("quantization:Float32"), k_unknown_value);
  EXPECT_EQ(tag_code("quantization:uint8"), k_unknown_value);
  EXPECT_EQ(tag_code("quantization:int3"), k_unknown_value);
}

TEST(TagCheck, StatusAndStageHaveAVocabulary) {
  for (const char* value :
       {"verified", "unverified", "draft", "deprecated", "experimental", "reference", "wip"}) {
    EXPECT_EQ(tag_code(std::string("status:") + value), "") << value;
  }
  for (const char* value : {"prefill", "decode", "mtp", "indexer", "comm", "pod"}) {
    EXPECT_EQ(tag_code(std::string("stage:") + value), "") << value;
  }
  EXPECT_EQ(tag_code("status:Verified"), k_unknown_value);
  EXPECT_EQ(tag_code("status:done"), k_unknown_value);
  EXPECT_EQ(tag_code("stage:train"), k_unknown_value);
}

TEST(TagCheck, UnknownValueIsAWarningNamingTheVocabulary) {
  const auto problem = check_tag("stage:train");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, k_unknown_value);
  EXPECT_EQ(problem->severity, Severity::warning);
  EXPECT_NE(problem->message.find("'stage:train'"), std::string::npos) << problem->message;
  EXPECT_NE(problem->message.find("indexer"), std::string::npos) << problem->message;
  EXPECT_TRUE(problem->pointer.empty());
}

TEST(TagCheck, DescriptiveNamespacesTakeAnyValue) {
  for (const char* tag :
       {"arch:sm90a", "backend:cute-dsl", "gpu:sm100", "kv-cache:paged", "layout:folded_scale",
        "layout:k-last", "moe:sm90", "moe:routing", "sparse:topk", "sparse:block"}) {
    EXPECT_EQ(tag_code(tag), "") << tag;
  }
  EXPECT_EQ(tag_code("sparse:"), k_malformed);
}

TEST(TagEdit, AddReplacesTheValueOfASingleValuedNamespace) {
  EXPECT_EQ(
      edit_tag_list({"status:verified", "fused", "tp:2"}, TagAction::add, {"status:unverified"}),
      (Tags{"fused", "status:unverified", "tp:2"}));
  EXPECT_EQ(edit_tag_list({"stage:decode", "status:wip", "status:draft"}, TagAction::add,
                          {"stage:prefill", "status:verified"}),
            (Tags{"stage:prefill", "status:verified"}));
  // Several-valued namespaces keep what they had.
  EXPECT_EQ(edit_tag_list({"tp:2", "model:a"}, TagAction::add, {"tp:4", "model:b"}),
            (Tags{"model:a", "model:b", "tp:2", "tp:4"}));
  EXPECT_TRUE(replaces_namespace_values("status:x"));
  EXPECT_TRUE(replaces_namespace_values("stage:x"));
  EXPECT_FALSE(replaces_namespace_values("tp:2"));
  EXPECT_FALSE(replaces_namespace_values("fused"));
}

TEST(TagConflicts, TwoValuesOfASingleValuedNamespacePointAtTheLaterTag) {
  const auto conflicts =
      single_valued_conflicts({"status:verified", "tp:2", "tp:4", "stage:decode",
                               "status:unverified", "stage:decode", "stage:prefill"});
  ASSERT_EQ(conflicts.size(), 2u);
  EXPECT_EQ(conflicts[0].code, k_conflict);
  EXPECT_EQ(conflicts[0].severity, Severity::warning);
  EXPECT_EQ(conflicts[0].pointer, "/tags/4");
  EXPECT_NE(conflicts[0].message.find("'status:unverified' contradicts 'status:verified' "
                                      "(/tags/0)"),
            std::string::npos)
      << conflicts[0].message;
  EXPECT_EQ(conflicts[1].pointer, "/tags/6");
  EXPECT_NE(conflicts[1].message.find("(/tags/3)"), std::string::npos) << conflicts[1].message;
  EXPECT_TRUE(single_valued_conflicts({"status:verified", "status:verified", "tp:1"}).empty());
}

TEST(TagConflicts, OperandsGivingTwoValuesAreAnError) {
  const auto problems = check_tag_operands({"status:verified", "fused", "status:unverified"});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].code, k_conflict);
  EXPECT_EQ(problems[0].severity, Severity::error);
  EXPECT_NE(problems[0].message.find("'status:verified' and 'status:unverified'"),
            std::string::npos)
      << problems[0].message;
  const auto mixed = check_tag_operands({"tp:02", "stage:train", "owner:x"});
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(mixed[0].code, k_malformed);
  EXPECT_EQ(mixed[1].code, k_unknown_value);
  EXPECT_EQ(mixed[2].code, k_unknown);
  EXPECT_TRUE(check_tag_operands({"status:verified", "status:verified"}).empty());
}

TEST(TagConflicts, ValidateLintsThemAtTheTagsPointer) {
  const std::string text = R"({"name": "n", "op_type": "op",
  "tags": ["status:verified", "stage:decode", "status:unverified"],
  "axes": {}, "inputs": {}, "outputs": {}, "reference": "def run():\n    pass\n"})";
  DiagnosticList parse_sink;
  auto document = parse_json(text, "n.json", parse_sink);
  ASSERT_TRUE(document.has_value());
  DiagnosticList schema;
  const Definition definition = parse_definition(*document, schema);
  DiagnosticList lint;
  lint_definition(definition, *document, lint);
  std::vector<Diagnostic> conflicts;
  for (const auto& d : lint.items()) {
    if (d.code == k_conflict) {
      conflicts.push_back(d);
    }
  }
  ASSERT_EQ(conflicts.size(), 1u) << testing::describe(lint);
  EXPECT_EQ(conflicts[0].pointer, "/tags/2");
  EXPECT_EQ(conflicts[0].file, std::filesystem::path("n.json"));
  EXPECT_EQ(conflicts[0].line, 2);
}

TEST(TagFiles, AddOfASingleValuedTagSaysWhatItReplaced) {
  const TempDir dir;
  const auto file =
      dir.write("d.json", R"({"name": "n", "op_type": "op", "tags": ["status:verified", "tp:2"]})");
  TagEditOptions options;
  options.tags = {"status:unverified", "fused"};
  std::vector<TaggedFile> results;
  edit_tag_files({{file, {}, {}}}, options, [&](const TaggedFile& f) { results.push_back(f); });
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TagFileStatus::changed);
  EXPECT_EQ(results[0].added, (Tags{"fused", "status:unverified"}));
  EXPECT_EQ(results[0].removed, (Tags{"status:verified"}));
  ASSERT_EQ(results[0].replaced.size(), 1u);
  EXPECT_EQ(results[0].replaced[0].old_tag, "status:verified");
  EXPECT_EQ(results[0].replaced[0].new_tag, "status:unverified");
  EXPECT_NE(read_file(file).find("\"status:unverified\""), std::string::npos);
  EXPECT_EQ(read_file(file).find("\"status:verified\""), std::string::npos);
}

TEST(TagInventory, UnknownValuesAndConflictsAreWarnedAtTheirTag) {
  const TempDir dir;
  const auto a = dir.write(
      "a.json", R"({"tags": ["status:verified", "stage:train", "owner:x", "status:unverified"]})");
  DiagnosticList sink;
  const auto inventory = inventory_tags({{a, {}, {}}}, sink);
  EXPECT_EQ(inventory.files, 1u);
  ASSERT_EQ(sink.items().size(), 2u) << testing::describe(sink);
  EXPECT_EQ(sink.items()[0].code, k_unknown_value);
  EXPECT_EQ(sink.items()[0].severity, Severity::warning);
  EXPECT_EQ(sink.items()[0].pointer, "/tags/1");
  EXPECT_EQ(sink.items()[1].code, k_conflict);
  EXPECT_EQ(sink.items()[1].severity, Severity::warning);
  EXPECT_EQ(sink.items()[1].pointer, "/tags/3");
  EXPECT_EQ(sink.items()[1].file, a);
}

// The tags FlashInfer's trace templates write (every string literal of the form "ns:value" or a
// bare word inside a `tags=[...]` list) and the tags of the real dataset are all accepted without
// a finding: no error, no unknown value, no unknown namespace.
std::vector<std::string> template_tags(const std::filesystem::path& templates) {
  std::vector<std::string> tags;
  const std::regex list(R"(tags=\[([^\]]*)\])");
  const std::regex literal(R"re("([^"\s]+)")re");
  for (const auto& entry : std::filesystem::directory_iterator(templates)) {
    if (entry.path().extension() != ".py") {
      continue;
    }
    const std::string text = read_file(entry.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), list);
         it != std::sregex_iterator(); ++it) {
      const std::string body = (*it)[1];
      for (auto lit = std::sregex_iterator(body.begin(), body.end(), literal);
           lit != std::sregex_iterator(); ++lit) {
        tags.push_back((*lit)[1]);
      }
    }
  }
  return tags;
}

TEST(TagCorpus, TheCommunitysTagsAreAccepted) {
  const std::filesystem::path corpus = testing::corpus_dir();
  if (corpus.empty() || !std::filesystem::exists(corpus / "flashinfer-src") ||
      !std::filesystem::exists(corpus / "dataset" / "definitions")) {
    GTEST_SKIP() << "no ../shared/corpus with flashinfer-src and dataset";
  }
  std::vector<std::string> tags =
      template_tags(corpus / "flashinfer-src" / "flashinfer" / "trace" / "templates");
  const std::size_t from_templates = tags.size();
  EXPECT_GT(from_templates, 100u);
  std::vector<SelectedFile> files;
  for (const auto& op : std::filesystem::directory_iterator(corpus / "dataset" / "definitions")) {
    for (const auto& file : std::filesystem::directory_iterator(op.path())) {
      files.push_back({file.path(), {}, {}});
      DiagnosticList ignored;
      auto document = parse_json(read_file(file.path()), file.path(), ignored);
      ASSERT_TRUE(document.has_value()) << file.path();
      auto read = read_tags(document->root);
      ASSERT_TRUE(read.has_value()) << file.path();
      tags.insert(tags.end(), read->begin(), read->end());
    }
  }
  EXPECT_GT(tags.size(), from_templates);
  for (const std::string& tag : tags) {
    if (tag.find('{') != std::string::npos) {
      continue; // "fi_api:{fi_api}", the template the dumper formats
    }
    const auto problem = check_tag(tag);
    EXPECT_FALSE(problem.has_value()) << tag << ": " << problem->message;
  }
  // `fib tag list` on the real dataset: nothing to warn about.
  DiagnosticList sink;
  const auto inventory = inventory_tags(files, sink);
  EXPECT_EQ(inventory.files, files.size());
  EXPECT_TRUE(sink.items().empty()) << testing::describe(sink);
}

} // namespace
} // namespace fib
