// Recognising trees of the Aug 2025 schema: the signs counted below a root, the one
// dataset.old-schema message, and validate_dataset's use of it (level, place, exit counts).

#include "dataset_fixture.hpp"
#include "validate/dataset_cache.hpp"

#include <fib/util/directory_listings.hpp>
#include <fib/validate/old_schema.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using dataset_testing::Dataset;
using dataset_testing::definition_json;
using dataset_testing::DefSpec;
using testing::TempDir;

// An old definition: `type` where `op_type` belongs.
constexpr std::string_view k_old_definition =
    R"({"name": "g", "type": "gemm", "axes": {"M": {"type": "var"}}, "inputs": {},
        "outputs": {}, "reference": "def run():\n    pass\n"})";
constexpr std::string_view k_old_solution =
    R"({"name": "s", "definition": "g", "author": "a",
        "spec": {"language": "Python", "target_hardware": ["CPU"], "entry_point": "main.py::run"},
        "sources": []})";
constexpr std::string_view k_old_workload_lines =
    "{\"definition\": \"g\", \"solution\": \"\", \"workload\": {\"axes\": {\"M\": 2}, "
    "\"inputs\": {}}, \"evaluation\": {}}\n"
    "{\"definition\": \"g\", \"solution\": \"\", \"workload\": {\"axes\": {\"M\": 4}, "
    "\"inputs\": {}}, \"evaluation\": {}}\n";

void write_old_tree(const TempDir& dir, const std::string& prefix = "") {
  dir.write(prefix + "definitions/gemm/g.json", k_old_definition);
  dir.write(prefix + "solutions/gemm/g/s.json", k_old_solution);
  dir.write(prefix + "traces/workloads/gemm/g.workload.jsonl", k_old_workload_lines);
}

TEST(OldSchema, CountsEachSign) {
  const TempDir dir;
  write_old_tree(dir);
  dir.write("definitions/gemm/new.json", R"({"name": "new", "op_type": "gemm"})");
  dir.write("workloads/gemm/new.jsonl", "{\"definition\": \"new\", \"solution\": \"\"}\n");
  const OldSchemaSigns signs = find_old_schema_signs(dir.path());
  EXPECT_TRUE(signs.any());
  EXPECT_EQ(signs.definitions_with_type, 1u);
  EXPECT_EQ(signs.capitalised_languages, 1u);
  EXPECT_EQ(signs.old_workload_files, 1u);
  EXPECT_EQ(signs.solution_string_lines, 2u); // workloads/ files are the workload check's
  ASSERT_EQ(signs.examples.size(), 3u);
  EXPECT_EQ(signs.examples[0], dir.path() / "definitions/gemm/g.json");
  EXPECT_TRUE(signs.nested_roots.empty());
}

TEST(OldSchema, ACurrentTreeHasNoSign) {
  const TempDir dir;
  dir.write("definitions/op/d1.json", definition_json(DefSpec{}));
  dir.write("solutions/a/op/d1/s.json", R"({"spec": {"language": "python"}})");
  dir.write("traces/a/op/d1.jsonl", "{\"definition\": \"d1\", \"solution\": \"s\"}\n");
  const OldSchemaSigns signs = find_old_schema_signs(dir.path());
  EXPECT_FALSE(signs.any());
  EXPECT_FALSE(old_schema_message(signs, dir.path(), DefinitionsLoaded::none).has_value());
}

TEST(OldSchema, TheMessageCountsAndSaysWhatToRename) {
  const TempDir dir;
  write_old_tree(dir, "dataset/");
  const OldSchemaSigns signs = find_old_schema_signs(dir.path());
  ASSERT_EQ(signs.nested_roots.size(), 1u);
  EXPECT_EQ(signs.nested_roots[0], dir.path() / "dataset");
  const auto message = old_schema_message(signs, dir.path(), DefinitionsLoaded::none);
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->code, codes::k_dataset_old_schema);
  EXPECT_EQ(message->level, CheckLevel::error);
  const std::string& text = message->message;
  for (const char* part :
       {"[fib] ", "holds files of the Aug 2025 schema",
        "1 definition has `type` instead of `op_type`",
        "1 solution writes `spec.language` capitalised",
        "1 workload file is traces/workloads/<op_type>/<name>.workload.jsonl",
        "2 workload lines are trace records with \"solution\": \"\"",
        "rename `type` to `op_type` in each definition", "write `spec.language` in lower case",
        "move each to workloads/<op_type>/<name>.jsonl",
        "keep of each workload line only `definition` and `workload`", "the dataset root is",
        "No definition of this tree loaded"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "missing: " << part << "\nin: " << text;
  }
  const auto beside = old_schema_message(signs, dir.path(), DefinitionsLoaded::some);
  ASSERT_TRUE(beside.has_value());
  EXPECT_EQ(beside->level, CheckLevel::warning);
  EXPECT_EQ(beside->message.find("No definition"), std::string::npos);
}

// validate_dataset: one message per tree, first in the dataset section, an error when nothing
// loaded (so the exit status is not "clean"); a root one level above the dataset says where the
// dataset is instead of "0 definitions" and nothing else.
// The files below the root are taken apart the same way however the root is spelt.
TEST(OldSchema, TheSameSignsWhateverTheRootsSpelling) {
  const TempDir dir;
  write_old_tree(dir, "dataset/");
  write_old_tree(dir);
  for (const std::filesystem::path& root :
       {dir.path(), dir.path() / "", dir.path() / ".", dir.path() / "dataset" / ".."}) {
    const OldSchemaSigns signs = find_old_schema_signs(root);
    EXPECT_EQ(signs.definitions_with_type, 2u) << root;
    EXPECT_EQ(signs.capitalised_languages, 2u) << root;
    EXPECT_EQ(signs.old_workload_files, 2u) << root;
    EXPECT_EQ(signs.solution_string_lines, 4u) << root;
    ASSERT_EQ(signs.nested_roots.size(), 1u) << root;
    EXPECT_EQ(signs.nested_roots[0].lexically_normal(), (dir.path() / "dataset").lexically_normal())
        << root;
  }
}

TEST(OldSchema, ValidateSaysSoOncePerTree) {
  Dataset ds;
  ds.file("dataset/definitions/gemm/g.json", k_old_definition);
  ds.file("dataset/definitions/gemm/h.json", k_old_definition);
  ds.file("dataset/traces/workloads/gemm/g.workload.jsonl", k_old_workload_lines);
  const DatasetReport above = ds.validate();
  EXPECT_TRUE(above.definitions.empty());
  ASSERT_TRUE(above.dataset.has_value());
  ASSERT_FALSE(above.dataset->messages.empty());
  std::size_t old_schema = 0;
  for (const CheckMessage& m : above.dataset->messages) {
    old_schema += m.code == codes::k_dataset_old_schema ? 1 : 0;
  }
  EXPECT_EQ(old_schema, 1u);
  const CheckMessage& first = above.dataset->messages.front();
  EXPECT_EQ(first.code, codes::k_dataset_old_schema);
  EXPECT_EQ(first.level, CheckLevel::error);
  EXPECT_NE(first.message.find("2 definitions have `type`"), std::string::npos) << first.message;
  EXPECT_NE(first.message.find("the dataset root is " + ds.path("dataset")), std::string::npos)
      << first.message;
  EXPECT_EQ(count_findings(above).errors, 1u);
}

TEST(OldSchema, BesideLoadedDefinitionsItIsAWarning) {
  Dataset ds;
  ds.definition(DefSpec{});
  ds.file("definitions/gemm/g.json", k_old_definition);
  const DatasetReport report = ds.validate();
  ASSERT_TRUE(report.dataset.has_value());
  ASSERT_FALSE(report.dataset->messages.empty());
  EXPECT_EQ(report.dataset->messages.front().code, codes::k_dataset_old_schema);
  EXPECT_EQ(report.dataset->messages.front().level, CheckLevel::warning);
}

// The real trees of the corpus.
TEST(OldSchema, CorpusTrees) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty()) {
    GTEST_SKIP() << "no ../shared/corpus";
  }
  const OldSchemaSigns legacy = find_old_schema_signs(corpus / "legacy-2025-08");
  EXPECT_EQ(legacy.definitions_with_type, 1u);
  EXPECT_EQ(legacy.old_workload_files, 1u);
  EXPECT_GT(legacy.solution_string_lines, 0u);
  ASSERT_EQ(legacy.nested_roots.size(), 1u);
  EXPECT_EQ(legacy.nested_roots[0], corpus / "legacy-2025-08" / "dataset");
  const OldSchemaSigns xslingcn =
      find_old_schema_signs(corpus / "variants" / "xslingcn__flashinfer-trace");
  EXPECT_EQ(xslingcn.definitions_with_type, 1u);
  EXPECT_EQ(xslingcn.capitalised_languages, 1u);
  EXPECT_EQ(xslingcn.old_workload_files, 1u);
  EXPECT_FALSE(find_old_schema_signs(corpus / "dataset").any());
}

// With the result cache, the corpus trees (files old enough for the digest memo) give the same
// signs cold and warm, and the warm look reads the signs from the cache.
TEST(OldSchema, SameSignsColdAndWarmFromTheCache) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty()) {
    GTEST_SKIP() << "no ../shared/corpus";
  }
  const auto same = [](const OldSchemaSigns& a, const OldSchemaSigns& b) {
    return a.definitions_with_type == b.definitions_with_type &&
           a.capitalised_languages == b.capitalised_languages &&
           a.old_workload_files == b.old_workload_files &&
           a.solution_string_lines == b.solution_string_lines && a.examples == b.examples &&
           a.nested_roots == b.nested_roots;
  };
  testing::TempDir directory;
  for (const auto& tree :
       {corpus / "legacy-2025-08", corpus / "variants" / "xslingcn__flashinfer-trace",
        corpus / "dataset"}) {
    SCOPED_TRACE(tree.string());
    const OldSchemaSigns uncached = find_old_schema_signs(tree);
    DiagnosticList notes;
    {
      ResultCache cold = ResultCache::open(ResultCacheOptions{directory.path()}, notes);
      EXPECT_TRUE(same(find_old_schema_signs(tree, &cold), uncached));
      cold.commit(notes);
    }
    ResultCache warm = ResultCache::open(ResultCacheOptions{directory.path()}, notes);
    EXPECT_TRUE(same(find_old_schema_signs(tree, &warm), uncached));
    EXPECT_FALSE(warm.used_packs().empty()) << "the warm look found the signs in the cache";
    EXPECT_TRUE(notes.items().empty());
  }
}

// The look takes an answer given for a file (its path and role) instead of reading it, and
// ignores one given for another role.
TEST(OldSchema, TheLookTakesAnswersGivenForAFile) {
  const TempDir dir;
  dir.write("definitions/gemm/new.json", definition_json(DefSpec{}));
  dir.write("definitions/gemm/old.json", k_old_definition);
  dir.write("solutions/gemm/g/s.json", k_old_solution);
  const std::string fresh = (dir.path() / "definitions/gemm/new.json").native();
  const std::string old = (dir.path() / "definitions/gemm/old.json").native();
  const std::string solution = (dir.path() / "solutions/gemm/g/s.json").native();
  dataset_checks::SignedFiles given;
  given[fresh] = {dataset_checks::OldSchemaRole::definition, true}; // not what its bytes say
  given[old] = {dataset_checks::OldSchemaRole::definition, false};
  given[solution] = {dataset_checks::OldSchemaRole::definition, false}; // the wrong role
  dataset_checks::RememberedDigests digests;
  DirectoryListings listings;
  const OldSchemaSigns signs = dataset_checks::look_at_old_schema(
      dir.path(), dataset_checks::list_old_schema_candidates(dir.path(), listings), nullptr,
      digests, &given);
  EXPECT_EQ(signs.definitions_with_type, 1u);
  ASSERT_FALSE(signs.examples.empty());
  EXPECT_EQ(signs.examples[0].native(), fresh);
  EXPECT_EQ(signs.capitalised_languages, 1u) << "the solution's own bytes were read";
  // Without answers, the bytes decide.
  DirectoryListings again;
  const OldSchemaSigns read =
      dataset_checks::find_old_schema_signs(dir.path(), nullptr, digests, again);
  ASSERT_FALSE(read.examples.empty());
  EXPECT_EQ(read.examples[0].native(), old);
}

// What a job's bytes answer is the look's answer for the same bytes.
TEST(OldSchema, BytesAnswerAsTheLookDoes) {
  using dataset_checks::OldSchemaRole;
  using dataset_checks::shows_old_schema;
  EXPECT_TRUE(shows_old_schema(std::string(k_old_definition), "d.json", OldSchemaRole::definition));
  EXPECT_FALSE(shows_old_schema(definition_json(DefSpec{}), "d.json", OldSchemaRole::definition));
  EXPECT_TRUE(shows_old_schema(std::string(k_old_solution), "s.json", OldSchemaRole::solution));
  EXPECT_FALSE(shows_old_schema(std::string(k_old_definition), "d.json", OldSchemaRole::solution));
  EXPECT_FALSE(shows_old_schema("{\"type\": ", "d.json", OldSchemaRole::definition))
      << "what does not parse shows nothing";
  std::string huge(k_old_definition.substr(0, k_old_definition.size() - 1));
  huge.append(std::size_t{4} << 20, ' ').push_back('}');
  EXPECT_FALSE(shows_old_schema(huge, "d.json", OldSchemaRole::definition))
      << "the look does not read a file over its limit";
}

// Validating every definition with nothing cached, the look after the chunks (in worker
// processes too) gives the message the look beside the scan gives (a filter naming every
// definition keeps it there).
TEST(OldSchema, TheChunksAnswersGiveTheSameMessage) {
  Dataset ds;
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) {
    DefSpec spec;
    spec.name = fmt::format("d{}", i);
    ds.definition(spec);
    names.push_back(spec.name);
  }
  for (const std::string name : {"g", "h", "k"}) {
    const std::size_t at = k_old_definition.find("\"g\"");
    ds.file(fmt::format("definitions/gemm/{}.json", name),
            fmt::format("{}\"{}\"{}", k_old_definition.substr(0, at), name,
                        k_old_definition.substr(at + 3)));
    names.push_back(name);
  }
  ds.file("solutions/a/gemm/g/s.json", k_old_solution);
  const auto old_schema_message_of = [](const DatasetReport& report) {
    EXPECT_TRUE(report.dataset.has_value());
    if (report.dataset && !report.dataset->messages.empty() &&
        report.dataset->messages.front().code == codes::k_dataset_old_schema) {
      return report.dataset->messages.front().message;
    }
    return std::string("(none)");
  };
  ValidateDatasetOptions every = ds.options();
  every.definitions = names;
  const std::string beside_scan = old_schema_message_of(ds.validate(every));
  EXPECT_NE(beside_scan.find("3 definitions have `type`"), std::string::npos) << beside_scan;
  EXPECT_NE(beside_scan.find("1 solution writes `spec.language` capitalised"), std::string::npos)
      << beside_scan;
  for (const std::size_t processes : {1u, 2u}) {
    SCOPED_TRACE(processes);
    ValidateDatasetOptions all = ds.options();
    all.processes = processes;
    const DatasetReport report = ds.validate(all);
    EXPECT_TRUE(report.definitions.contains("g")) << "the old definitions were validated";
    EXPECT_EQ(old_schema_message_of(report), beside_scan);
  }
}

} // namespace
} // namespace fib
