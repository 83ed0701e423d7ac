#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>

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

// Written back as Python's json module writes them (nlohmann alone writes null, which turned a
// constraint's Infinity into null in a normalized file), and read back to the same text; the
// rest of the layout is nlohmann's dump(2) as for any other document.
TEST(JsonIo, NonFiniteNumbersKeepTheirPythonSpellingInTheCanonicalText) {
  DiagnosticList sink;
  auto doc = parse(R"({"a": [Infinity, -Infinity, NaN, 1.5, 2, "x\u00e9", {}, []],
                      "b": {"c": NaN, "d": null, "e": [true]}, "f": {}})",
                   sink);
  ASSERT_TRUE(doc.has_value());
  const std::string text = canonical_json_text(doc->root);
  EXPECT_EQ(text, "{\n"
                  "  \"a\": [\n"
                  "    Infinity,\n"
                  "    -Infinity,\n"
                  "    NaN,\n"
                  "    1.5,\n"
                  "    2,\n"
                  "    \"x\xc3\xa9\",\n"
                  "    {},\n"
                  "    []\n"
                  "  ],\n"
                  "  \"b\": {\n"
                  "    \"c\": NaN,\n"
                  "    \"d\": null,\n"
                  "    \"e\": [\n"
                  "      true\n"
                  "    ]\n"
                  "  },\n"
                  "  \"f\": {}\n"
                  "}\n");
  DiagnosticList again;
  auto reread = parse(text, again);
  ASSERT_TRUE(reread.has_value());
  EXPECT_EQ(canonical_json_text(reread->root), text);
  EXPECT_EQ(reread->root["a"][1].get<double>(), -INFINITY);
  // Without such numbers the writer is nlohmann's own.
  doc->root["a"] = 1;
  doc->root["b"]["c"] = 0.25;
  EXPECT_EQ(canonical_json_text(doc->root),
            doc->root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
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

// The status a read takes of the file it opened is the one stat() gives for the same file (the
// digest memo keys on either), and a read that fails has none.
TEST(JsonIo, ReadWithStatusGivesTheStatOfTheFileReadAndNoneOnErrors) {
  TempDir dir;
  const auto file = dir.write("def.json", std::string(1234, 'x'));
  const TextFile read = read_text_file_with_status(file);
  ASSERT_TRUE(read.text.has_value());
  EXPECT_EQ(read.text->size(), 1234u);
  ASSERT_TRUE(read.status.has_value());
  const std::optional<FileStatus> stat = file_status(file);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(read.status->device, stat->device);
  EXPECT_EQ(read.status->inode, stat->inode);
  EXPECT_EQ(read.status->mode, stat->mode);
  EXPECT_EQ(read.status->size, 1234);
  EXPECT_EQ(read.status->modified_ns, stat->modified_ns);
  EXPECT_EQ(read.status->changed_ns, stat->changed_ns);
  EXPECT_GT(read.status->changed_ns, 0);

  const TextFile missing = read_text_file_with_status(dir.path() / "nope.json");
  ASSERT_FALSE(missing.text.has_value());
  EXPECT_EQ(missing.text.error().code, codes::k_io_not_found);
  EXPECT_FALSE(missing.status.has_value());
  EXPECT_FALSE(file_status(dir.path() / "nope.json").has_value());

  const TextFile directory = read_text_file_with_status(dir.path());
  ASSERT_FALSE(directory.text.has_value());
  EXPECT_EQ(directory.text.error().code, codes::k_io_read);
  EXPECT_FALSE(directory.status.has_value());

  const TextFile too_large = read_text_file_with_status(file, 10);
  ASSERT_FALSE(too_large.text.has_value());
  EXPECT_EQ(too_large.text.error().code, codes::k_io_too_large);
  EXPECT_FALSE(too_large.status.has_value());
}

TEST(JsonIo, PointerAppendEscapesTildeAndSlash) {
  EXPECT_EQ(pointer_append("/inputs", "a/b~c"), "/inputs/a~1b~0c");
  EXPECT_EQ(pointer_append("", std::size_t{3}), "/3");
  EXPECT_EQ(pointer_append("/a", "/~x~/"), "/a/~1~0x~0~1");
  EXPECT_EQ(pointer_append("/a", ""), "/a/");
}

// The splitter and the string reader skip plain bytes by blocks: every line break and every
// special byte of a string is tried at every offset of a block.
TEST(JsonIo, SplitsLongLinesAtEveryBreakAndOffset) {
  const std::vector<std::string> breaks = {"\n",       "\r",           "\r\n",        "\x0b",
                                           "\x0c",     "\x1c",         "\x1d",        "\x1e",
                                           "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9"};
  for (const std::string& brk : breaks) {
    for (std::size_t offset = 0; offset < 40; ++offset) {
      const std::string first(offset + 1, 'a');
      const std::string second = "\t" + std::string(33, 'b') + "\xc3\xa9\t ";
      const std::string text = first + brk + second + brk + brk + "c";
      const auto lines = split_jsonl_lines(text);
      ASSERT_EQ(lines.size(), 3u) << offset;
      EXPECT_EQ(lines[0].line, 1);
      EXPECT_EQ(lines[0].text, first);
      EXPECT_EQ(lines[1].line, 2);
      EXPECT_EQ(lines[1].text, std::string(33, 'b') + "\xc3\xa9");
      EXPECT_EQ(lines[2].line, 4);
      EXPECT_EQ(lines[2].text, "c");
    }
  }
  // Bytes that only start a break (\xc2, \xe2) are no break on their own.
  const std::string text =
      std::string(20, 'x') + "\xc2\xa0" + std::string(20, 'y') + "\xe2\x80\x8b";
  const auto lines = split_jsonl_lines(text);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, text);
}

TEST(JsonIo, DecodesLongStringsWithEscapesAtEveryOffset) {
  for (std::size_t offset = 0; offset < 40; ++offset) {
    DiagnosticList sink;
    const std::string plain(offset, 'a');
    const std::string text = "[\"" + plain + "\\n" + std::string(20, 'b') + "\\\"\xc3\xa9\\u00e9" +
                             plain + "\\ud83d\\ude00\", \"" + plain + "\"]";
    auto doc = parse(text, sink);
    ASSERT_TRUE(doc.has_value()) << offset;
    EXPECT_EQ(doc->root[0], plain + "\n" + std::string(20, 'b') + "\"\xc3\xa9\xc3\xa9" + plain +
                                "\xf0\x9f\x98\x80");
    EXPECT_EQ(doc->root[1], plain);
  }
}

TEST(JsonIo, ReportsTheColumnOfABadByteDeepInALongString) {
  for (std::size_t offset = 0; offset < 40; ++offset) {
    DiagnosticList sink;
    const std::string before(offset, 'a');
    auto control = parse("\"" + before + "\\n" + before + "\x01\"", sink);
    ASSERT_FALSE(control.has_value());
    EXPECT_EQ(control.error().code, codes::k_json_parse);
    EXPECT_NE(control.error().message.find(
                  fmt::format("control character in a string at line 1 column {}", 2 * offset + 4)),
              std::string::npos)
        << control.error().message;
    auto utf8 = parse("\"" + before + "\xc3(\"", sink);
    ASSERT_FALSE(utf8.has_value());
    EXPECT_NE(utf8.error().message.find(
                  fmt::format("invalid UTF-8 in a string at line 1 column {}", offset + 2)),
              std::string::npos)
        << utf8.error().message;
    auto unterminated = parse("\"" + before + "\\t" + before, sink);
    ASSERT_FALSE(unterminated.has_value());
    EXPECT_NE(unterminated.error().message.find(
                  fmt::format("unterminated string at line 1 column {}", 2 * offset + 4)),
              std::string::npos)
        << unterminated.error().message;
  }
}

// Objects past 32 members find repeated keys through an index, smaller ones by a scan: both keep
// the first key's place and the last value.
TEST(JsonIo, DuplicateKeysOfBigObjectsKeepTheFirstPlaceAndTheLastValue) {
  std::string text = "{";
  for (int i = 0; i < 40; ++i) {
    text += fmt::format("\"k{}\": {}, ", i, i);
  }
  text += R"("k3": "three", "k35": "thirty-five", "k0": [0]})";
  DiagnosticList sink;
  auto doc = parse(text, sink);
  ASSERT_TRUE(doc.has_value());
  ASSERT_EQ(doc->root.size(), 40u);
  auto it = doc->root.begin();
  EXPECT_EQ(it.key(), "k0");
  EXPECT_EQ(*it, Json::array({0}));
  EXPECT_EQ(doc->root["k3"], "three");
  EXPECT_EQ(doc->root["k35"], "thirty-five");
  EXPECT_EQ(std::next(doc->root.begin(), 35).key(), "k35");
  EXPECT_EQ(sink.items().size(), 3u);
  for (const Diagnostic& d : sink.items()) {
    EXPECT_EQ(d.code, codes::k_json_duplicate_key);
  }
  EXPECT_EQ(sink.items()[1].pointer, "/k35");
}

TEST(JsonIo, ParseJsonMembersKeepsOnlyTheNamedMembersOfAnObjectRoot) {
  const std::vector<std::string_view> kept = {"a", "c"};
  auto doc = parse_json_members(
      R"({"a": 1, "b": {"x": [1, "s\n", {"y": null}], "a": 2}, "c": "t", "a": [3]})", "doc.json",
      kept);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->root, Json::parse(R"({"a": [3], "c": "t"})"));
  EXPECT_TRUE(doc->lines.empty());

  // Another root is kept whole.
  auto array = parse_json_members(R"([1, {"b": 2}])", "doc.json", kept);
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->root, Json::parse(R"([1, {"b": 2}])"));
}

TEST(JsonIo, ParseJsonMembersFailsAsParseJsonDoesInDroppedMembers) {
  const std::vector<std::string_view> kept = {"a"};
  const std::vector<std::string> bad = {R"({"b": {"x": [1, 2,]}, "a": 1})",
                                        "{\"b\": \"tab\there\", \"a\": 1}",
                                        R"({"b": "\ud800", "a": 1})",
                                        R"({"b": 01, "a": 1})",
                                        R"({"b": {"x" 1}, "a": 1})",
                                        R"({"a": 1, "b": [tru]})",
                                        R"({"a": 1, "b": "open)",
                                        std::string(R"({"b": )") + std::string(300, '[') +
                                            std::string(300, ']') + "}"};
  for (const std::string& text : bad) {
    DiagnosticList sink;
    auto whole = parse_json(text, "doc.json", sink, 1, LineIndex::skipped);
    auto members = parse_json_members(text, "doc.json", kept);
    ASSERT_FALSE(whole.has_value()) << text;
    ASSERT_FALSE(members.has_value()) << text;
    EXPECT_EQ(members.error().code, whole.error().code) << text;
    EXPECT_EQ(members.error().message, whole.error().message) << text;
  }
}

TEST(JsonIo, ReadTextFileRefusesAFifoWithoutWaitingForAWriter) {
  TempDir dir;
  const auto fifo = dir.path() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = read_text_file(fifo);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, codes::k_io_read);
  EXPECT_EQ(read.error().message, "cannot read: not a regular file (a FIFO, socket or device)");
}

} // namespace
} // namespace fib
