#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace fib {
namespace {

using testing::TempDir;

Expected<JsonDocument> parse(std::string_view text, DiagnosticList& sink) {
  return parse_json(text, "doc.json", sink);
}

TEST(JsonIo, AcceptsNanAndInfinityTokens) {
  DiagnosticList sink;
  auto doc = parse(R"({"a": NaN, "b": Infinity, "c": -Infinity})", sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_TRUE(std::isnan(doc->root["a"].get<double>()));
  EXPECT_EQ(doc->root["b"].get<double>(), INFINITY);
  EXPECT_EQ(doc->root["c"].get<double>(), -INFINITY);
  EXPECT_TRUE(sink.items().empty());
}

TEST(JsonIo, DuplicateKeyLastWinsWithWarningAtKeyPointer) {
  DiagnosticList sink;
  auto doc = parse("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}", sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->root["a"], 3);
  // Position of the first key, as in a Python dict.
  EXPECT_EQ(doc->root.begin().key(), "a");
  ASSERT_EQ(sink.items().size(), 1u);
  EXPECT_EQ(sink.items()[0].code, codes::k_json_duplicate_key);
  EXPECT_EQ(sink.items()[0].pointer, "/a");
  EXPECT_EQ(sink.items()[0].line, 3);
  EXPECT_EQ(sink.items()[0].severity, Severity::warning);
}

TEST(JsonIo, RepeatedDuplicateKeysAreCountedPastTheFirstHundred) {
  std::string text = "{";
  for (int i = 0; i < 1000; ++i) {
    text += i == 0 ? "\"a\": 1" : ", \"a\": 1";
  }
  text += "}";
  DiagnosticList sink;
  ASSERT_TRUE(parse(text, sink).has_value());
  ASSERT_EQ(sink.items().size(), k_max_reported_duplicate_keys + 1);
  EXPECT_EQ(sink.items().front().pointer, "/a");
  const Diagnostic& summary = sink.items().back();
  EXPECT_EQ(summary.code, codes::k_json_duplicate_key);
  EXPECT_EQ(summary.severity, Severity::warning);
  EXPECT_NE(summary.message.find("and 899 more duplicate keys"), std::string::npos)
      << summary.message;
}

TEST(JsonIo, LongKeysDeepDownStopGrowingThePointer) {
  // Ten levels of 1,000-byte keys: every pointer past the cap is cut, never recorded, and an
  // error deep inside points at its deepest ancestor within the cap.
  const std::string key(1000, 'k');
  std::string text;
  for (int i = 0; i < 10; ++i) {
    text += "{\"";
    text += key;
    text += "\": ";
  }
  text += "[1,]";
  for (int i = 0; i < 10; ++i) {
    text += "}";
  }
  DiagnosticList sink;
  auto doc = parse(text, sink);
  ASSERT_FALSE(doc.has_value());
  EXPECT_EQ(doc.error().code, codes::k_json_parse);
  std::string expected_pointer;
  for (int i = 0; i < 4; ++i) {
    expected_pointer += '/';
    expected_pointer += key;
  }
  EXPECT_EQ(doc.error().pointer, expected_pointer);
  auto good = parse(text.replace(text.find("[1,]"), 4, "[1]"), sink);
  ASSERT_TRUE(good.has_value());
  for (const auto& [pointer, record] : good->lines) {
    EXPECT_LE(pointer.size(), k_max_recorded_pointer);
  }
  EXPECT_EQ(good->lines.size(), 5u); // the root and four levels within the cap
}

TEST(JsonIo, OnlyTheFirstContainersOfAnArrayAreRecorded) {
  std::string text = "[";
  for (std::size_t i = 0; i < 3 * k_max_recorded_array_items; ++i) {
    text += i == 0 ? "{}" : ",{}";
  }
  text += "]";
  DiagnosticList sink;
  auto doc = parse(text, sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->root.size(), 3 * k_max_recorded_array_items);
  EXPECT_EQ(doc->lines.size(), k_max_recorded_array_items + 1);
  EXPECT_TRUE(doc->lines.contains("/0"));
  EXPECT_FALSE(doc->lines.contains(fmt::format("/{}", k_max_recorded_array_items)));
  // A later item's line is its array's.
  EXPECT_EQ(doc->line_of(fmt::format("/{}", 2 * k_max_recorded_array_items)), 1);
}

TEST(JsonIo, PreservesKeyOrder) {
  DiagnosticList sink;
  auto doc = parse(R"({"z": 1, "a": 2, "m": 3})", sink);
  ASSERT_TRUE(doc.has_value());
  std::string order;
  for (const auto& [key, value] : doc->root.items()) {
    order += key;
  }
  EXPECT_EQ(order, "zam");
}

TEST(JsonIo, RejectsTrailingCommaWithLineAndPointer) {
  DiagnosticList sink;
  auto doc = parse("{\"a\": {\n  \"b\": 1,\n}}", sink);
  ASSERT_FALSE(doc.has_value());
  EXPECT_EQ(doc.error().code, codes::k_json_parse);
  EXPECT_EQ(doc.error().pointer, "/a");
  EXPECT_EQ(doc.error().line, 3);
}

TEST(JsonIo, RejectsTrailingCharacters) {
  DiagnosticList sink;
  auto doc = parse(R"({"a": 1} x)", sink);
  ASSERT_FALSE(doc.has_value());
  EXPECT_EQ(doc.error().code, codes::k_json_parse);
  EXPECT_NE(doc.error().message.find("trailing characters"), std::string::npos);
}

TEST(JsonIo, RejectsDeepNestingWithoutCrashing) {
  DiagnosticList sink;
  const std::string text(100000, '[');
  auto doc = parse(text, sink);
  ASSERT_FALSE(doc.has_value());
  EXPECT_EQ(doc.error().code, codes::k_json_too_deep);
}

TEST(JsonIo, RefusesMoreContainersThanTheLimitAndAcceptsTheLimit) {
  // "[{},{},...]": one array holding k_max_json_containers - 1 empty objects is the limit.
  const auto text_with = [](std::size_t objects) {
    std::string text = "[";
    text.reserve(objects * 3 + 2);
    for (std::size_t i = 0; i < objects; ++i) {
      text += i == 0 ? "{}" : ",{}";
    }
    text += "]";
    return text;
  };
  DiagnosticList sink;
  auto at_limit = parse(text_with(k_max_json_containers - 1), sink);
  ASSERT_TRUE(at_limit.has_value()) << at_limit.error().message;
  EXPECT_EQ(at_limit->root.size(), k_max_json_containers - 1);
  auto over = parse(text_with(k_max_json_containers), sink);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, codes::k_json_too_large);
  EXPECT_NE(over.error().message.find("more than 4194304 objects and arrays"), std::string::npos)
      << over.error().message;
  EXPECT_EQ(over.error().line, 1);
}

TEST(JsonIo, DecodesUnicodeEscapesAndRejectsLoneSurrogates) {
  DiagnosticList sink;
  auto doc = parse(R"({"a": "\u00e9\ud83d\ude00"})", sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->root["a"], "\xc3\xa9\xf0\x9f\x98\x80");
  auto bad = parse(R"({"a": "\ud83d"})", sink);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, codes::k_json_parse);
}

TEST(JsonIo, RejectsInvalidUtf8) {
  DiagnosticList sink;
  auto doc = parse("{\"a\": \"\xff\"}", sink);
  ASSERT_FALSE(doc.has_value());
  EXPECT_EQ(doc.error().code, codes::k_json_parse);
}

TEST(JsonIo, IntegersStayIntegersAndFloatsStayFloats) {
  DiagnosticList sink;
  auto doc = parse(R"({"i": 4, "f": 4.0, "e": 1e3, "big": 18446744073709551615})", sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_TRUE(doc->root["i"].is_number_integer());
  EXPECT_TRUE(doc->root["f"].is_number_float());
  EXPECT_TRUE(doc->root["e"].is_number_float());
  EXPECT_TRUE(doc->root["big"].is_number_unsigned());
}

TEST(JsonIo, LineOfMissingKeyFallsBackToParent) {
  DiagnosticList sink;
  auto doc = parse("{\n\"a\": {\n\"b\": 1\n}\n}", sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->line_of("/a/b"), 3);
  EXPECT_EQ(doc->line_of("/a/missing"), 2);
  EXPECT_EQ(doc->line_of(""), 1);
}

TEST(JsonIo, SplitsJsonlLikePythonSplitlines) {
  const std::string text = "a\r\nb\rc\x0b"
                           "d\n\n  \ne\xe2\x80\xa8"
                           "f\xc2\x85g";
  const auto lines = split_jsonl_lines(text);
  std::vector<std::pair<int, std::string>> got;
  for (const auto& line : lines) {
    got.emplace_back(line.line, std::string(line.text));
  }
  const std::vector<std::pair<int, std::string>> expected = {{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"},
                                                             {7, "e"}, {8, "f"}, {9, "g"}};
  EXPECT_EQ(got, expected);
}

TEST(JsonIo, ReadTextFileReportsMissingDirectoryAndTooLarge) {
  TempDir dir;
  auto missing = read_text_file(dir.path() / "nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, codes::k_io_not_found);

  auto directory = read_text_file(dir.path());
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().code, codes::k_io_read);

  const auto file = dir.write("big.json", std::string(100, ' '));
  auto too_large = read_text_file(file, 10);
  ASSERT_FALSE(too_large.has_value());
  EXPECT_EQ(too_large.error().code, codes::k_io_too_large);

  auto ok = read_text_file(file);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->size(), 100u);
}

TEST(JsonIo, PointerAppendEscapesTildeAndSlash) {
  EXPECT_EQ(pointer_append("/inputs", "a/b~c"), "/inputs/a~1b~0c");
  EXPECT_EQ(pointer_append("", std::size_t{3}), "/3");
}

} // namespace
} // namespace fib
