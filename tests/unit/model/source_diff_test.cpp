// definition_display_text and definition_unified_diff: `reference` and `init` shown as decoded
// Python lines, each marked with its field; everything else byte for byte.

#include <fib/model/source_diff.hpp>

#include <gtest/gtest.h>

#include <string>

namespace fib {
namespace {

TEST(SourceDiff, ReferenceAndInitAreDecodedLineByLine) {
  const std::string text = "{\n"
                           "  \"name\": \"n\",\n"
                           "  \"reference\": \"import torch\\n\\ndef run(x):\\n    return x\\n\",\n"
                           "  \"init\": \"def init():\\n\\treturn 1\"\n"
                           "}\n";
  EXPECT_EQ(definition_display_text(text),
            "{\n"
            "  \"name\": \"n\",\n"
            "  \"reference\": (decoded Python: the lines marked \"reference|\")\n"
            "  reference| import torch\n"
            "  reference| \n"
            "  reference| def run(x):\n"
            "  reference|     return x\n"
            "  \"init\": (decoded Python: the lines marked \"init|\")\n"
            "  init| def init():\n"
            "  init| \treturn 1\n"
            "}\n");
}

TEST(SourceDiff, OtherLinesAndCompactDocumentsAreKept) {
  const std::string compact = R"({"name": "n", "reference": "def run():\n    pass\n"})";
  EXPECT_EQ(definition_display_text(compact), compact);
  // Nested members with other values, and a string value followed by more JSON, stay as they are.
  const std::string nested = "{\n  \"inputs\": {\"reference\": {\"dtype\": \"int32\"}},\n"
                             "  \"reference\": \"a\", \"x\": 1\n}";
  EXPECT_EQ(definition_display_text(nested), nested);
  EXPECT_EQ(definition_display_text(""), "");
}

TEST(SourceDiff, ControlCharactersAreEscaped) {
  const std::string text = "  \"reference\": \"x = 1\\u001b[2J\\r\\n\"\n";
  EXPECT_EQ(definition_display_text(text),
            "  \"reference\": (decoded Python: the lines marked \"reference|\")\n"
            "  reference| x = 1\\x1b[2J\\x0d\n");
}

TEST(SourceDiff, AChangeInsideTheReferenceShowsAsItsPythonLine) {
  const std::string before =
      "{\n  \"name\": \"n\",\n"
      "  \"reference\": \"def run(x):\\n    y = x * 2\\n    return y\\n\"\n}\n";
  const std::string after =
      "{\n  \"name\": \"n\",\n"
      "  \"reference\": \"def run(x):\\n    y = x * 3\\n    return y\\n\"\n}\n";
  EXPECT_EQ(definition_unified_diff(before, after, "a/n.json", "b/n.json"),
            "--- a/n.json\n"
            "+++ b/n.json\n"
            "@@ -2,6 +2,6 @@\n"
            "   \"name\": \"n\",\n"
            "   \"reference\": (decoded Python: the lines marked \"reference|\")\n"
            "   reference| def run(x):\n"
            "-  reference|     y = x * 2\n"
            "+  reference|     y = x * 3\n"
            "   reference|     return y\n"
            " }\n");
  EXPECT_EQ(definition_unified_diff(before, before, "a", "b"), "");
}

} // namespace
} // namespace fib
