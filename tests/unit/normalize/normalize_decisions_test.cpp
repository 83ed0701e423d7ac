// The decisions file: entries for one source file (and their precedence over a name's entry),
// unused entries warned with their pointer, and a drop_outputs that leaves fewer outputs than the
// reference returns values.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/normalize/normalize.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace fib {
namespace {

using testing::parse_or_die;
using testing::python;
using testing::TempDir;

Json two_output_dump() {
  return Json::parse(R"({
    "name": "split_h64", "op_type": "split", "description": "split",
    "axes": {"batch_size": {"type": "var"}, "hidden_size": {"type": "const", "value": 64}},
    "inputs": {"x": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "outputs": {"a": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
                "b": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "reference": "import torch\n\ndef run(x):\n    return x, x + 1\n"
  })");
}

Expected<NormalizeDecisions> decisions_from(std::string_view text, DiagnosticList& sink,
                                            const std::filesystem::path& file = "d.json") {
  const JsonDocument document = parse_or_die(text, file.string());
  return parse_normalize_decisions(document, sink);
}

TEST(NormalizeDecisions, AFilesEntryIsKeyedByTheResolvedPathAndRecordsItsPointerAndLine) {
  TempDir dir;
  const auto dump = dir.write("dumps/a.json", two_output_dump().dump());
  const std::string text =
      "{\n\"files\": {\n\"" + dump.string() + "\": {\"name\": \"split_h64_graph\"}\n}\n}\n";
  DiagnosticList sink;
  const auto decisions = decisions_from(text, sink);
  ASSERT_TRUE(decisions) << testing::describe(sink);
  ASSERT_EQ(decisions->files.size(), 1u);
  const auto& [path, entry] = *decisions->files.begin();
  EXPECT_EQ(path, resolved_source_path(dump));
  EXPECT_EQ(entry.pointer, pointer_append("/files", dump.string()));
  EXPECT_EQ(entry.line, 3);
  // Another spelling of the same file finds it.
  const auto roundabout = dump.parent_path() / ".." / "dumps" / "a.json";
  EXPECT_EQ(find_definition_decisions(*decisions, roundabout, "split_h64"), &entry);
  EXPECT_EQ(find_definition_decisions(*decisions, dir.path() / "b.json", "split_h64"), nullptr);
}

TEST(NormalizeDecisions, AFilesSectionThatIsNotAnObjectIsInvalid) {
  DiagnosticList sink;
  EXPECT_FALSE(decisions_from(R"({"files": []})", sink));
  ASSERT_FALSE(sink.items().empty());
  EXPECT_EQ(sink.items().front().code, codes::k_normalize_decisions_invalid);
  EXPECT_EQ(sink.items().front().pointer, "/files");
}

TEST(NormalizeDecisions, TheFileEntryWinsOverTheNameEntry) {
  TempDir dir;
  const auto dump = dir.write("dumps/a.json", two_output_dump().dump());
  NormalizeDecisions decisions;
  decisions.definitions["split_h64"].name = "by_name";
  decisions.definitions["split_h64"].pointer = "/definitions/split_h64";
  decisions.files[resolved_source_path(dump)].name = "by_file";
  decisions.files[resolved_source_path(dump)].pointer = "/files/x";
  NormalizeOptions options;
  options.decisions = &decisions;
  const JsonDocument from_file = parse_or_die(two_output_dump().dump(), dump.string());
  const auto normalized = normalize_definition(from_file, options, python());
  ASSERT_TRUE(normalized);
  EXPECT_EQ(normalized->document["name"], "by_file");
  EXPECT_EQ(normalized->decisions_entry, "/files/x");
  // A file of the same name elsewhere gets the name's entry.
  const JsonDocument other =
      parse_or_die(two_output_dump().dump(), (dir.path() / "b.json").string());
  const auto by_name = normalize_definition(other, options, python());
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->document["name"], "by_name");
  EXPECT_EQ(by_name->decisions_entry, "/definitions/split_h64");
}

TEST(NormalizeDecisions, AnEntryThatMatchesNoInputIsWarnedWithItsPointerAndLine) {
  TempDir dir;
  dir.write("dumps/a.json", two_output_dump().dump());
  const auto file = dir.write("decisions.json", "{\"definitions\": {\n"
                                                "  \"split_h64\": {\"name\": \"split_h64\"},\n"
                                                "  \"splt_h64\": {\"name\": \"x\"}\n}}\n");
  DiagnosticList sink;
  auto decisions = decisions_from(testing::read_file(file), sink, file);
  ASSERT_TRUE(decisions) << testing::describe(sink);
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "dumps"};
  options.rules.decisions = &*decisions;
  const NormalizeSummary summary = normalize_files(options, python(), [](const NormalizedFile&) {});
  ASSERT_EQ(summary.diagnostics.size(), 1u);
  const Diagnostic& d = summary.diagnostics.front();
  EXPECT_EQ(d.code, codes::k_normalize_decision_unused);
  EXPECT_EQ(d.severity, Severity::warning);
  EXPECT_EQ(d.pointer, "/definitions/splt_h64");
  EXPECT_EQ(d.file, file);
  EXPECT_EQ(d.line, 3);
}

TEST(NormalizeDecisions, ExcludedFilesAreNotRead) {
  TempDir dir;
  dir.write("dumps/a.json", two_output_dump().dump());
  dir.write("dumps/graph/a_twin.json", two_output_dump().dump());
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "dumps"};
  options.exclude = {"graph/*"};
  std::vector<std::filesystem::path> seen;
  normalize_files(options, python(), [&](const NormalizedFile& f) { seen.push_back(f.input); });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen.front().filename(), "a.json");
}

TEST(NormalizeDecisions, DroppingAnOutputTheReferenceReturnsIsAnError) {
  NormalizeDecisions decisions;
  decisions.definitions["split_h64"].drop_outputs = {"b"};
  decisions.definitions["split_h64"].pointer = "/definitions/split_h64";
  NormalizeOptions options;
  options.decisions = &decisions;
  const auto normalized =
      normalize_definition(parse_or_die(two_output_dump().dump()), options, python());
  ASSERT_TRUE(normalized);
  const auto it = std::find_if(normalized->findings.begin(), normalized->findings.end(),
                               [](const RuleFinding& f) {
                                 return f.diagnostic.code == codes::k_normalize_decision_outputs;
                               });
  ASSERT_NE(it, normalized->findings.end());
  EXPECT_EQ(it->diagnostic.severity, Severity::error);
  EXPECT_EQ(it->diagnostic.pointer, "/outputs");
  EXPECT_NE(it->diagnostic.message.find("leaves 1 output but the reference returns 2"),
            std::string::npos)
      << it->diagnostic.message;
  // Dropping nothing the reference needs is fine.
  decisions.definitions["split_h64"].drop_outputs = {"c"};
  const auto fine = normalize_definition(parse_or_die(two_output_dump().dump()), options, python());
  ASSERT_TRUE(fine);
  EXPECT_TRUE(std::none_of(fine->findings.begin(), fine->findings.end(), [](const auto& f) {
    return f.diagnostic.code == codes::k_normalize_decision_outputs;
  }));
}

} // namespace
} // namespace fib
