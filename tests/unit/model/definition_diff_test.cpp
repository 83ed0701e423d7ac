// Comparing definitions by content: key order ignored except in inputs/outputs, tags as sets, and
// the differences people read (pointer, both sides, a line summary for long text).

#include <fib/model/definition_diff.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

Json definition(std::string_view text) {
  return Json::parse(text);
}

TEST(DefinitionDiff, KeyOrderAndTagOrderDoNotMatter) {
  const Json a = definition(R"({"name": "x", "tags": ["b", "a"], "axes": {"M": 1, "N": 2}})");
  const Json b = definition(R"({"axes": {"N": 2, "M": 1}, "tags": ["a", "b"], "name": "x"})");
  EXPECT_TRUE(same_definition_content(a, b));
  EXPECT_TRUE(diff_definitions(a, b).empty());
}

TEST(DefinitionDiff, InputOrderIsTheArgumentOrder) {
  const Json a =
      definition(R"({"inputs": {"x": {"dtype": "float32"}, "w": {"dtype": "float32"}}})");
  const Json b =
      definition(R"({"inputs": {"w": {"dtype": "float32"}, "x": {"dtype": "float32"}}})");
  EXPECT_FALSE(same_definition_content(a, b));
  const auto differences = diff_definitions(a, b);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].pointer, "/inputs");
  EXPECT_EQ(differences[0].staged, "order x, w");
  EXPECT_EQ(differences[0].incoming, "order w, x");
}

TEST(DefinitionDiff, ValuesKeysAndTagsDifferences) {
  const Json a = definition(R"({"axes": {"M": 1}, "tags": ["model:a"], "description": "d"})");
  const Json b = definition(R"({"axes": {"M": 2}, "tags": ["model:b"], "op_type": "gemm"})");
  const auto differences = diff_definitions(a, b);
  ASSERT_EQ(differences.size(), 4u);
  EXPECT_EQ(differences[0].pointer, "/axes/M");
  EXPECT_EQ(differences[0].staged, "1");
  EXPECT_EQ(differences[0].incoming, "2");
  EXPECT_EQ(differences[1].pointer, "/tags");
  EXPECT_EQ(differences[1].staged, "only model:a");
  EXPECT_EQ(differences[1].incoming, "only model:b");
  EXPECT_EQ(differences[2].pointer, "/description");
  EXPECT_EQ(differences[2].incoming, "(absent)");
  EXPECT_EQ(differences[3].pointer, "/op_type");
  EXPECT_EQ(differences[3].staged, "(absent)");
}

TEST(DefinitionDiff, LongTextIsSummarizedByLines) {
  Json a = definition(R"({"reference": "def run(x):\n    return x\n"})");
  Json b = definition(R"({"reference": "def run(x):\n    y = x\n    return y\n"})");
  const auto differences = diff_definitions(a, b);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].pointer, "/reference");
  EXPECT_EQ(differences[0].staged, "2 lines");
  EXPECT_EQ(differences[0].incoming, "3 lines");
  EXPECT_EQ(differences[0].detail, "1 line removed, 2 added");
}

TEST(DefinitionDiff, ComparisonsThatIgnoreParts) {
  const Json a = definition(R"({"name": "x", "reference": "a", "init": "i", "tags": ["t"]})");
  const Json code = definition(R"({"name": "x", "reference": "b", "tags": ["t"]})");
  const Json tags = definition(R"({"name": "x", "reference": "a", "init": "i", "tags": []})");
  EXPECT_FALSE(same_definition_content(a, code));
  EXPECT_TRUE(same_definition_content_except_python_text(a, code));
  EXPECT_FALSE(same_definition_content_except_tags(a, code));
  EXPECT_TRUE(same_definition_content_except_tags(a, tags));
  EXPECT_FALSE(same_definition_content_except_python_text(a, tags));
  EXPECT_EQ(tags_as_set(Json::parse(R"(["b", "a", "b"])")), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(tags_as_set(Json::parse(R"(["a", 1])")), std::nullopt);
  EXPECT_EQ(tags_as_set(Json::parse("null")), std::nullopt);
}

} // namespace
} // namespace fib
