#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/tag/tags.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;

// The code check_tag gives `tag`, or "" when it accepts it silently.
std::string tag_code(std::string_view tag) {
  const auto problem = check_tag(tag);
  return problem ? problem->code : std::string();
}

const std::string k_malformed(codes::k_tag_malformed);
const std::string k_unknown(codes::k_tag_unknown_namespace);

TEST(TagCheck, BareFlagsAreAllowed) {
  EXPECT_EQ(tag_code("fused"), "");
  EXPECT_EQ(tag_code("mla"), "");
}

TEST(TagCheck, EmptyWhitespaceControlAndInvalidUtf8AreMalformed) {
  EXPECT_EQ(tag_code(""), k_malformed);
  EXPECT_EQ(tag_code("model: llama"), k_malformed);
  EXPECT_EQ(tag_code("fused "), k_malformed);
  EXPECT_EQ(tag_code("a\tb"), k_malformed);
  EXPECT_EQ(tag_code("a\nb"), k_malformed);
  EXPECT_EQ(tag_code(std::string_view("a\0b", 3)), k_malformed);
  EXPECT_EQ(tag_code("x\x7f"), k_malformed);
  EXPECT_EQ(tag_code("model:\xff"), k_malformed);
  EXPECT_EQ(tag_code("flag\xc3"), k_malformed);     // truncated sequence
  EXPECT_EQ(tag_code("\xed\xa0\x80"), k_malformed); // a surrogate
  EXPECT_EQ(tag_code("caf\xc3\xa9"), "");           // valid UTF-8 flag
}

TEST(TagCheck, EmptyNamespaceOrValueIsMalformed) {
  EXPECT_EQ(tag_code(":x"), k_malformed);
  EXPECT_EQ(tag_code("model:"), k_malformed);
  EXPECT_EQ(tag_code("foo:"), k_malformed);
  EXPECT_EQ(tag_code(":"), k_malformed);
}

TEST(TagCheck, ParallelismTakesPositiveIntegers) {
  for (const char* space : {"tp", "ep"}) {
    const std::string ns(space);
    EXPECT_EQ(tag_code(ns + ":1"), "");
    EXPECT_EQ(tag_code(ns + ":8"), "");
    EXPECT_EQ(tag_code(ns + ":16"), "");
    EXPECT_EQ(tag_code(ns + ":0"), k_malformed);
    EXPECT_EQ(tag_code(ns + ":02"), k_malformed);
    EXPECT_EQ(tag_code(ns + ":+2"), k_malformed);
    EXPECT_EQ(tag_code(ns + ":-2"), k_malformed);
    EXPECT_EQ(tag_code(ns + ":2.0"), k_malformed);
    EXPECT_EQ(tag_code(ns + ":two"), k_malformed);
  }
}

TEST(TagCheck, ModelIsALowerCaseSlug) {
  EXPECT_EQ(tag_code("model:llama-3.1-8b"), "");
  EXPECT_EQ(tag_code("model:qwen3_moe"), "");
  EXPECT_EQ(tag_code("model:deepseek-v3"), "");
  EXPECT_EQ(tag_code("model:Llama-3"), k_malformed);
  EXPECT_EQ(tag_code("model:llama--3"), k_malformed);
  EXPECT_EQ(tag_code("model:-llama"), k_malformed);
  EXPECT_EQ(tag_code("model:llama-"), k_malformed);
  EXPECT_EQ(tag_code("model:llama/3"), k_malformed);
  EXPECT_EQ(tag_code("model:a:b"), k_malformed);
}

TEST(TagCheck, FiApiIsADottedPythonName) {
  EXPECT_EQ(tag_code("fi_api:flashinfer.norm.rmsnorm"), "");
  EXPECT_EQ(tag_code("fi_api:flashinfer.BatchPrefillWithPagedKVCacheWrapper._run"), "");
  EXPECT_EQ(tag_code("fi_api:rmsnorm"), "");
  EXPECT_EQ(tag_code("fi_api:flashinfer..norm"), k_malformed);
  EXPECT_EQ(tag_code("fi_api:.norm"), k_malformed);
  EXPECT_EQ(tag_code("fi_api:norm."), k_malformed);
  EXPECT_EQ(tag_code("fi_api:3d.norm"), k_malformed);
  EXPECT_EQ(tag_code("fi_api:flashinfer.norm-x"), k_malformed);
}

TEST(TagCheck, BackendTakesAnyValue) {
  EXPECT_EQ(tag_code("backend:cutlass"), "");
  EXPECT_EQ(tag_code("backend:trtllm-gen"), "");
  EXPECT_EQ(tag_code("backend:"), k_malformed);
}

TEST(TagCheck, UnknownNamespaceIsAWarning) {
  const auto problem = check_tag("owner:alice");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->code, k_unknown);
  EXPECT_EQ(problem->severity, Severity::warning);
  EXPECT_NE(problem->message.find("'owner'"), std::string::npos) << problem->message;
}

TEST(TagCheck, WildcardsAreNotTags) {
  EXPECT_EQ(tag_code("model:*"), k_malformed);
  EXPECT_EQ(tag_code("owner:*"), k_malformed);
}

TEST(TagCheck, MalformedIsAnErrorNamingTheTag) {
  const auto problem = check_tag("tp:02");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->severity, Severity::error);
  EXPECT_NE(problem->message.find("'tp:02'"), std::string::npos) << problem->message;
  EXPECT_TRUE(problem->pointer.empty());
}

TEST(TagCheck, NamespaceTableIsSortedAndFindable) {
  const auto spaces = tag_namespaces();
  ASSERT_EQ(spaces.size(), 16u);
  for (std::size_t i = 1; i < spaces.size(); ++i) {
    EXPECT_LT(spaces[i - 1].name, spaces[i].name);
  }
  ASSERT_NE(find_tag_namespace("model"), nullptr);
  EXPECT_EQ(find_tag_namespace("owner"), nullptr);
  EXPECT_EQ(tag_namespace_of("model:a:b"), "model");
  EXPECT_EQ(tag_namespace_of("fused"), "");
}

TEST(TagCheck, EveryNamespaceIsInTheDocsTable) {
  const std::string doc = read_file(std::filesystem::path(FIB_SOURCE_DIR) / "docs" / "tag.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& space : tag_namespaces()) {
    EXPECT_NE(doc.find("| `" + std::string(space.name) + "` |"), std::string::npos)
        << "docs/tag.md has no table row for the namespace " << space.name;
  }
}

// --- Editing ---

using Tags = std::vector<std::string>;

TEST(TagEdit, AddSortsAndDeduplicates) {
  EXPECT_EQ(edit_tag_list({"tp:2", "fused", "tp:2"}, TagAction::add, {"model:a", "fused"}),
            (Tags{"fused", "model:a", "tp:2"}));
}

TEST(TagEdit, AddTwiceIsAddOnce) {
  const Tags once = edit_tag_list({"fused"}, TagAction::add, {"tp:2"});
  EXPECT_EQ(edit_tag_list(once, TagAction::add, {"tp:2"}), once);
  EXPECT_EQ(edit_tag_list({}, TagAction::add, {"tp:2", "tp:2"}), (Tags{"tp:2"}));
}

TEST(TagEdit, ByteOrder) {
  EXPECT_EQ(edit_tag_list({"b", "B", "a"}, TagAction::add, {}), (Tags{"B", "a", "b"}));
}

TEST(TagEdit, RemoveExactAndAbsent) {
  EXPECT_EQ(edit_tag_list({"model:a", "tp:2"}, TagAction::remove, {"model:a"}), (Tags{"tp:2"}));
  EXPECT_EQ(edit_tag_list({"model:a", "tp:2"}, TagAction::remove, {"model:b"}),
            (Tags{"model:a", "tp:2"}));
  EXPECT_EQ(edit_tag_list({"model:a"}, TagAction::remove, {"model"}), (Tags{"model:a"}));
}

TEST(TagEdit, RemoveNamespaceWildcard) {
  EXPECT_EQ(edit_tag_list({"model:a", "model:b", "modelx:c", "tp:2", "model"}, TagAction::remove,
                          {"model:*"}),
            (Tags{"model", "modelx:c", "tp:2"}));
  EXPECT_TRUE(is_namespace_wildcard("model:*"));
  EXPECT_FALSE(is_namespace_wildcard(":*"));
  EXPECT_FALSE(is_namespace_wildcard("*"));
  EXPECT_FALSE(is_namespace_wildcard("model:a*"));
  // A bare `*` is an exact tag, not "everything".
  EXPECT_EQ(edit_tag_list({"a", "*"}, TagAction::remove, {"*"}), (Tags{"a"}));
}

TEST(TagEdit, ReadTags) {
  const auto doc = testing::parse_or_die(R"({"name": "x", "tags": ["b", "a"]})");
  const auto tags = read_tags(doc.root);
  ASSERT_TRUE(tags.has_value());
  EXPECT_EQ(*tags, (Tags{"b", "a"}));
  const auto none = read_tags(testing::parse_or_die(R"({"name": "x"})").root);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(TagEdit, NonDefinitionDocuments) {
  const auto array = read_tags(testing::parse_or_die("[1, 2]").root);
  ASSERT_FALSE(array.has_value());
  EXPECT_EQ(array.error().code, codes::k_tag_not_definition);
  EXPECT_EQ(array.error().pointer, "");

  const auto string_tags = read_tags(testing::parse_or_die(R"({"tags": "fused"})").root);
  ASSERT_FALSE(string_tags.has_value());
  EXPECT_EQ(string_tags.error().code, codes::k_schema_type);
  EXPECT_EQ(string_tags.error().pointer, "/tags");

  const auto null_tags = read_tags(testing::parse_or_die(R"({"tags": null})").root);
  ASSERT_FALSE(null_tags.has_value());
  EXPECT_EQ(null_tags.error().pointer, "/tags");

  const auto number_tag = read_tags(testing::parse_or_die(R"({"tags": ["a", 3]})").root);
  ASSERT_FALSE(number_tag.has_value());
  EXPECT_EQ(number_tag.error().code, codes::k_schema_type);
  EXPECT_EQ(number_tag.error().pointer, "/tags/1");
}

TEST(TagEdit, TagsInsertedAfterOpType) {
  const auto doc = testing::parse_or_die(
      R"({"name": "x", "op_type": "rmsnorm", "axes": {}, "description": "d"})");
  const Json out = with_tags(doc.root, {"fused"});
  std::vector<std::string> keys;
  for (const auto& [key, value] : out.items()) {
    keys.push_back(key);
  }
  EXPECT_EQ(keys, (Tags{"name", "op_type", "tags", "axes", "description"}));
  EXPECT_EQ(out["tags"], Json::array({"fused"}));
}

TEST(TagEdit, TagsReplacedInPlaceOrAppended) {
  const auto doc = testing::parse_or_die(R"({"tags": ["a"], "name": "x"})");
  const Json out = with_tags(doc.root, {"b"});
  EXPECT_EQ(out.begin().key(), "tags");
  EXPECT_EQ(out["tags"], Json::array({"b"}));
  const Json appended = with_tags(testing::parse_or_die(R"({"name": "x"})").root, {});
  EXPECT_EQ((--appended.end()).key(), "tags");
}

TEST(TagEdit, ModelClashButNotParallelism) {
  const auto clashes = tag_clashes({"model:a"}, {"model:a", "model:b", "tp:2"});
  ASSERT_EQ(clashes.size(), 1u);
  EXPECT_EQ(clashes[0].code, codes::k_tag_clash);
  EXPECT_EQ(clashes[0].pointer, "/tags");
  EXPECT_NE(clashes[0].message.find("model:a"), std::string::npos);
  EXPECT_NE(clashes[0].message.find("model:b"), std::string::npos);
  EXPECT_TRUE(tag_clashes({"tp:2"}, {"tp:2", "tp:4"}).empty());
  EXPECT_TRUE(tag_clashes({"model:a"}, {"model:a", "tp:4"}).empty());
}

// --- Times ---

TagTime utc(int y, unsigned m, unsigned d, int hh = 0, int mm = 0, int ss = 0) {
  return std::chrono::sys_days(std::chrono::year(y) / std::chrono::month(m) / std::chrono::day(d)) +
         std::chrono::hours(hh) + std::chrono::minutes(mm) + std::chrono::seconds(ss);
}

TEST(TagTime, EpochSeconds) {
  const auto whole = parse_tag_time("1764511500");
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->time_since_epoch(), std::chrono::seconds(1764511500));
  const auto fraction = parse_tag_time("1764511500.25");
  ASSERT_TRUE(fraction.has_value());
  EXPECT_EQ(fraction->time_since_epoch(),
            std::chrono::seconds(1764511500) + std::chrono::milliseconds(250));
  const auto zero = parse_tag_time("0");
  ASSERT_TRUE(zero.has_value());
  EXPECT_EQ(zero->time_since_epoch().count(), 0);
}

TEST(TagTime, IsoDateIsMidnightUtc) {
  const auto date = parse_tag_time("2026-11-30");
  ASSERT_TRUE(date.has_value());
  EXPECT_EQ(*date, utc(2026, 11, 30));
}

TEST(TagTime, IsoDateTimeWithoutOffsetIsUtc) {
  const auto time = parse_tag_time("2026-11-30T14:05:00");
  ASSERT_TRUE(time.has_value());
  EXPECT_EQ(*time, utc(2026, 11, 30, 14, 5));
  const auto z = parse_tag_time("2026-11-30T14:05:00Z");
  ASSERT_TRUE(z.has_value());
  EXPECT_EQ(*z, *time);
}

TEST(TagTime, IsoOffsetsAndFractions) {
  const auto east = parse_tag_time("2026-11-30T14:05:00+02:00");
  ASSERT_TRUE(east.has_value());
  EXPECT_EQ(*east, utc(2026, 11, 30, 12, 5));
  const auto west = parse_tag_time("2026-11-30T23:30:00-01:30");
  ASSERT_TRUE(west.has_value());
  EXPECT_EQ(*west, utc(2026, 12, 1, 1, 0));
  const auto fraction = parse_tag_time("2026-11-30T14:05:00.5Z");
  ASSERT_TRUE(fraction.has_value());
  EXPECT_EQ(*fraction, utc(2026, 11, 30, 14, 5) + std::chrono::milliseconds(500));
}

TEST(TagTime, BadInputIsAUsageErrorNamingTheValue) {
  for (const char* bad :
       {"", "yesterday", "2026-11-31", "2026-13-01", "2026-11-30T25:00:00", "2026-11-30T14:05",
        "2026-11-30 14:05:00", "2026-11-30T14:05:00+2", "2026-11-30T14:05:00Zx", "-5", "1.", "1e9",
        "2026-11-30Z", "99999999999"}) {
    const auto time = parse_tag_time(bad);
    ASSERT_FALSE(time.has_value()) << bad;
    EXPECT_EQ(time.error().code, codes::k_usage) << bad;
    EXPECT_NE(time.error().message.find(std::string("'") + bad + "'"), std::string::npos)
        << time.error().message;
  }
}

// --- Manifest ---

std::string manifest_text(std::string_view dataset, std::string_view path,
                          std::string_view extra = "") {
  return std::string(R"({"fib_stage_manifest": 1, "dataset": ")") + std::string(dataset) +
         R"(", "entries": [{"path": ")" + std::string(path) +
         R"(", "name": "n", "op_type": "op", "action": "added", "source": "in/n.json")" +
         std::string(extra) + "}]}";
}

TEST(TagManifest, ParsesTheAgreedFormat) {
  DiagnosticList sink;
  const auto doc = testing::parse_or_die(manifest_text("/data/ds", "definitions/op/n.json"));
  const auto manifest = parse_tag_manifest(doc, sink);
  ASSERT_TRUE(manifest.has_value()) << testing::describe(sink);
  EXPECT_EQ(manifest->dataset, "/data/ds");
  ASSERT_EQ(manifest->entries.size(), 1u);
  EXPECT_EQ(manifest->entries[0].path, "definitions/op/n.json");
  EXPECT_EQ(manifest->entries[0].action, "added");
  EXPECT_TRUE(sink.items().empty());
}

// (code, pointer) pairs that parse_tag_manifest reports for `text`; asserts that it failed.
std::vector<std::pair<std::string, std::string>> manifest_problems(std::string_view text) {
  DiagnosticList sink;
  const auto manifest = parse_tag_manifest(testing::parse_or_die(text), sink);
  EXPECT_FALSE(manifest.has_value());
  return testing::code_pointers(sink);
}

using Problems = std::vector<std::pair<std::string, std::string>>;
const std::string k_invalid(codes::k_tag_manifest_invalid);

TEST(TagManifest, HostileEntryPaths) {
  EXPECT_EQ(manifest_problems(manifest_text("/d", "../x")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "definitions/../../x.json")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "/etc/passwd")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "definitions/op/x.txt")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "definitions/op/sub/x.json")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "workloads/op/x.json")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "definitions//x.json")),
            (Problems{{k_invalid, "/entries/0/path"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "definitions/./x.json")),
            (Problems{{k_invalid, "/entries/0/path"}}));
}

TEST(TagManifest, VersionKeysAndTypes) {
  EXPECT_EQ(manifest_problems("[]"), (Problems{{k_invalid, ""}}));
  EXPECT_EQ(manifest_problems(R"({"fib_stage_manifest": 2, "dataset": "/d", "entries": []})"),
            (Problems{{k_invalid, "/fib_stage_manifest"}}));
  EXPECT_EQ(manifest_problems(R"({"fib_stage_manifest": "1", "dataset": "/d", "entries": []})"),
            (Problems{{k_invalid, "/fib_stage_manifest"}}));
  EXPECT_EQ(manifest_problems(R"({"dataset": "/d", "entries": []})"), (Problems{{k_invalid, ""}}));
  EXPECT_EQ(manifest_problems(R"({"fib_stage_manifest": 1, "dataset": "rel", "entries": []})"),
            (Problems{{k_invalid, "/dataset"}}));
  EXPECT_EQ(manifest_problems(R"({"fib_stage_manifest": 1, "dataset": 3, "entries": []})"),
            (Problems{{k_invalid, "/dataset"}}));
  EXPECT_EQ(manifest_problems(R"({"fib_stage_manifest": 1, "dataset": "/d", "entries": {}})"),
            (Problems{{k_invalid, "/entries"}}));
  EXPECT_EQ(manifest_problems(R"({"fib_stage_manifest": 1, "dataset": "/d", "entries": [1]})"),
            (Problems{{k_invalid, "/entries/0"}}));
  EXPECT_EQ(
      manifest_problems(
          R"({"fib_stage_manifest": 1, "dataset": "/d", "entries": [{"path": "definitions/a/b.json"}]})"),
      (Problems{{k_invalid, "/entries/0"},
                {k_invalid, "/entries/0"},
                {k_invalid, "/entries/0"},
                {k_invalid, "/entries/0"}}));
  EXPECT_EQ(manifest_problems(manifest_text("/d", "definitions/op/n.json", R"(, "action": "x")")),
            (Problems{{k_invalid, "/entries/0/action"}}));
}

// --- Selection ---

const std::string k_definition = R"({"name": "n", "op_type": "op", "tags": ["fused"]})";

// A dataset with definitions rmsnorm/{a,b}.json and gemm/c.json, and files the scan must skip.
struct Dataset {
  TempDir dir;
  Dataset() {
    dir.write("definitions/rmsnorm/rms_a.json", k_definition);
    dir.write("definitions/rmsnorm/rms_b.json", k_definition);
    dir.write("definitions/gemm/gemm_c.json", k_definition);
    dir.write("definitions/gemm/notes.txt", "x");
    dir.write("definitions/top.json", k_definition);
    dir.write("definitions/gemm/deeper/d.json", k_definition);
    dir.write("workloads/gemm/gemm_c.jsonl", "{}");
  }
  const std::filesystem::path& root() const { return dir.path(); }
};

std::vector<std::string> relative_paths(const TagSelection& selection) {
  std::vector<std::string> out;
  for (const auto& file : selection.files) {
    out.push_back(file.relative.generic_string());
  }
  return out;
}

TEST(TagSelect, DatasetScansDepthTwoSorted) {
  const Dataset data;
  TagSelectionOptions options;
  options.dataset = data.root();
  const auto selection = select_tag_files(options);
  EXPECT_TRUE(selection.problems.empty());
  EXPECT_EQ(relative_paths(selection),
            (Tags{"definitions/gemm/gemm_c.json", "definitions/rmsnorm/rms_a.json",
                  "definitions/rmsnorm/rms_b.json"}));
  EXPECT_EQ(selection.files[0].path, data.root() / "definitions/gemm/gemm_c.json");
}

TEST(TagSelect, SymlinkedDirectoriesAreNotFollowed) {
  const Dataset data;
  TempDir outside;
  outside.write("x.json", k_definition);
  std::filesystem::create_directory_symlink(outside.path(), data.root() / "definitions/linked");
  TagSelectionOptions options;
  options.dataset = data.root();
  EXPECT_EQ(select_tag_files(options).files.size(), 3u);
}

TEST(TagSelect, FiltersByOpTypeAndName) {
  const Dataset data;
  TagSelectionOptions options;
  options.dataset = data.root();
  options.op_types = {"rmsnorm"};
  EXPECT_EQ(relative_paths(select_tag_files(options)),
            (Tags{"definitions/rmsnorm/rms_a.json", "definitions/rmsnorm/rms_b.json"}));
  options.name_globs = {"*_b"};
  EXPECT_EQ(relative_paths(select_tag_files(options)), (Tags{"definitions/rmsnorm/rms_b.json"}));
  options.op_types = {"gemm", "rmsnorm"};
  options.name_globs = {"gemm_?", "rms_a"};
  EXPECT_EQ(relative_paths(select_tag_files(options)),
            (Tags{"definitions/gemm/gemm_c.json", "definitions/rmsnorm/rms_a.json"}));
}

TEST(TagSelect, FiltersBySince) {
  const Dataset data;
  const auto set_time = [&](const char* relative, TagTime when) {
    const auto file_time = std::chrono::file_clock::from_sys(when);
    std::filesystem::last_write_time(data.root() / relative, file_time);
  };
  set_time("definitions/gemm/gemm_c.json", utc(2026, 11, 29, 23, 59, 59));
  set_time("definitions/rmsnorm/rms_a.json", utc(2026, 11, 30));
  set_time("definitions/rmsnorm/rms_b.json", utc(2026, 12, 1));
  TagSelectionOptions options;
  options.dataset = data.root();
  options.since = *parse_tag_time("2026-11-30");
  EXPECT_EQ(relative_paths(select_tag_files(options)),
            (Tags{"definitions/rmsnorm/rms_a.json", "definitions/rmsnorm/rms_b.json"}));
  options.since = *parse_tag_time("2026-11-30T00:00:00.5");
  EXPECT_EQ(relative_paths(select_tag_files(options)), (Tags{"definitions/rmsnorm/rms_b.json"}));
}

TEST(TagSelect, MissingDatasetRoot) {
  const TempDir dir;
  TagSelectionOptions options;
  options.dataset = dir.path() / "nope";
  const auto selection = select_tag_files(options);
  EXPECT_EQ(count_diagnostics(selection.problems).environment_errors, 1u);
  ASSERT_EQ(selection.problems.size(), 1u);
  EXPECT_EQ(selection.problems[0].code, codes::k_dataset_root_missing);
}

TEST(TagSelect, Manifest) {
  const Dataset data;
  const std::string root = data.root().string();
  const std::string text =
      R"({"fib_stage_manifest": 1, "dataset": ")" + root + R"(", "entries": [)" +
      R"({"path": "definitions/rmsnorm/rms_b.json", "name": "rms_b", "op_type": "rmsnorm", "action": "added", "source": "s"},)" +
      R"({"path": "definitions/gemm/gemm_c.json", "name": "gemm_c", "op_type": "gemm", "action": "overwritten", "source": "s"},)" +
      R"({"path": "definitions/gemm/gone.json", "name": "gone", "op_type": "gemm", "action": "added", "source": "s"},)" +
      R"({"path": "definitions/rmsnorm/rms_b.json", "name": "rms_b", "op_type": "rmsnorm", "action": "added", "source": "s"}]})";
  const TempDir elsewhere;
  const auto manifest = elsewhere.write("staged.json", text);
  TagSelectionOptions options;
  options.manifest = manifest;
  const auto selection = select_tag_files(options);
  EXPECT_TRUE(selection.problems.empty());
  EXPECT_EQ(relative_paths(selection),
            (Tags{"definitions/gemm/gemm_c.json", "definitions/rmsnorm/rms_b.json"}));
  ASSERT_EQ(selection.missing_entries.size(), 1u);
  EXPECT_EQ(selection.missing_entries[0].code, codes::k_io_not_found);
  EXPECT_EQ(selection.missing_entries[0].pointer, "/entries/2/path");
  EXPECT_EQ(selection.missing_entries[0].file, manifest);

  options.op_types = {"rmsnorm"};
  EXPECT_EQ(relative_paths(select_tag_files(options)), (Tags{"definitions/rmsnorm/rms_b.json"}));

  // --dataset overrides the manifest's root.
  const TempDir other;
  other.write("definitions/gemm/gemm_c.json", k_definition);
  options.op_types.clear();
  options.dataset = other.path();
  const auto moved = select_tag_files(options);
  ASSERT_EQ(moved.files.size(), 1u);
  EXPECT_EQ(moved.files[0].path, other.path() / "definitions/gemm/gemm_c.json");
}

TEST(TagSelect, InvalidManifestIsAUsageError) {
  const TempDir dir;
  TagSelectionOptions options;
  options.manifest = dir.write("m.json", "{not json");
  const auto not_json = select_tag_files(options);
  EXPECT_EQ(count_diagnostics(not_json.problems).usage_errors, 1u);
  ASSERT_EQ(not_json.problems.size(), 1u);
  EXPECT_EQ(not_json.problems[0].code, codes::k_tag_manifest_invalid);

  options.manifest = dir.write("m2.json", manifest_text("/d", "../x"));
  const auto hostile = select_tag_files(options);
  EXPECT_EQ(count_diagnostics(hostile.problems).usage_errors, 1u);
  EXPECT_TRUE(hostile.files.empty());
  ASSERT_EQ(hostile.problems.size(), 1u);
  EXPECT_EQ(hostile.problems[0].pointer, "/entries/0/path");
}

TEST(TagSelect, WritePathSafety) {
  const Dataset data;
  TempDir outside;
  outside.write("op/x.json", k_definition);
  std::filesystem::create_directory_symlink(outside.path() / "op",
                                            data.root() / "definitions/linked");
  const SelectedFile through{data.root() / "definitions/linked/x.json", "definitions/linked/x.json",
                             data.root()};
  const auto unsafe = check_tag_write_path(through);
  ASSERT_TRUE(unsafe.has_value());
  EXPECT_EQ(unsafe->code, codes::k_io_unsafe_path);

  std::filesystem::create_symlink(data.root() / "definitions/gemm/gemm_c.json",
                                  data.root() / "definitions/gemm/alias.json");
  const SelectedFile link{data.root() / "definitions/gemm/alias.json", {}, {}};
  ASSERT_TRUE(check_tag_write_path(link).has_value());
  EXPECT_EQ(check_tag_write_path(link)->code, codes::k_io_unsafe_path);

  const SelectedFile plain{data.root() / "definitions/gemm/gemm_c.json",
                           "definitions/gemm/gemm_c.json", data.root()};
  EXPECT_FALSE(check_tag_write_path(plain).has_value());
}

// --- Editing files ---

std::vector<TaggedFile> edit(const std::vector<SelectedFile>& files, TagAction action, Tags tags,
                             DryRun dry_run = DryRun::no) {
  TagEditOptions options;
  options.action = action;
  options.tags = std::move(tags);
  options.dry_run = dry_run;
  std::vector<TaggedFile> out;
  edit_tag_files(files, options, [&](const TaggedFile& file) { out.push_back(file); });
  return out;
}

// Killed between writing the tagged file and renaming it, `fib tag` leaves the file untouched and
// a temporary beside it; the rerun removes the temporary and tags the file.
TEST(TagFiles, ARerunAfterAKillLeavesNoTemporary) {
  const TempDir dir;
  const std::string original = "{\"name\": \"n\", \"op_type\": \"op\", \"axes\": {}}";
  const auto file = dir.write("definitions/op/n.json", original);
  const SelectedFile selected{file, "definitions/op/n.json", dir.path()};
  ASSERT_TRUE(
      testing::dies_in_an_atomic_write([&] { (void)edit({selected}, TagAction::add, {"fused"}); }));
  ASSERT_EQ(testing::temporaries_below(dir.path()).size(), 1U);
  EXPECT_EQ(read_file(file), original);
  const auto results = edit({selected}, TagAction::add, {"fused"});
  ASSERT_EQ(results.size(), 1U);
  EXPECT_TRUE(results[0].written);
  EXPECT_TRUE(results[0].diagnostics.empty());
  EXPECT_EQ(testing::tree(dir.path() / "definitions/op"), std::vector<std::string>{"n.json"});
  EXPECT_NE(read_file(file).find("\"fused\""), std::string::npos);
}

TEST(TagFiles, AddWritesCanonicalJsonAndKeepsUnchangedFiles) {
  const TempDir dir;
  const auto file = dir.write("d.json", "{\"name\": \"n\", \"op_type\": \"op\", \"axes\": {}}");
  const auto results = edit({{file, {}, {}}}, TagAction::add, {"tp:2", "fused"});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TagFileStatus::changed);
  EXPECT_TRUE(results[0].written);
  EXPECT_EQ(results[0].added, (Tags{"fused", "tp:2"}));
  EXPECT_EQ(read_file(file), "{\n  \"name\": \"n\",\n  \"op_type\": \"op\",\n  \"tags\": [\n    "
                             "\"fused\",\n    \"tp:2\"\n  ],\n  \"axes\": {}\n}\n");

  const auto past = std::filesystem::last_write_time(file) - std::chrono::hours(1);
  std::filesystem::last_write_time(file, past);
  const auto again = edit({{file, {}, {}}}, TagAction::add, {"tp:2"});
  EXPECT_EQ(again[0].status, TagFileStatus::unchanged);
  EXPECT_FALSE(again[0].written);
  EXPECT_EQ(std::filesystem::last_write_time(file), past);

  const auto absent = edit({{file, {}, {}}}, TagAction::remove, {"model:x", "stage:*"});
  EXPECT_EQ(absent[0].status, TagFileStatus::unchanged);
  EXPECT_EQ(std::filesystem::last_write_time(file), past);
}

TEST(TagFiles, SameSetInAnotherOrderIsUnchanged) {
  const TempDir dir;
  const std::string text = R"({"name": "n", "tags": ["b", "a", "a"]})";
  const auto file = dir.write("d.json", text);
  const auto results = edit({{file, {}, {}}}, TagAction::add, {"a"});
  EXPECT_EQ(results[0].status, TagFileStatus::unchanged);
  EXPECT_EQ(read_file(file), text);
}

TEST(TagFiles, RemoveWildcardAndClash) {
  const TempDir dir;
  const auto file = dir.write("d.json", R"({"tags": ["model:a", "model:b", "tp:2"]})");
  const auto clash = edit({{file, {}, {}}}, TagAction::add, {"model:c", "tp:4"});
  ASSERT_EQ(clash[0].diagnostics.size(), 1u);
  EXPECT_EQ(clash[0].diagnostics[0].code, codes::k_tag_clash);
  EXPECT_EQ(clash[0].diagnostics[0].pointer, "/tags");
  EXPECT_EQ(clash[0].diagnostics[0].file, file);
  const auto removed = edit({{file, {}, {}}}, TagAction::remove, {"model:*"});
  EXPECT_EQ(removed[0].removed, (Tags{"model:a", "model:b", "model:c"}));
  EXPECT_EQ(*read_tags(testing::parse_or_die(read_file(file)).root), (Tags{"tp:2", "tp:4"}));
}

TEST(TagFiles, DryRunWritesNothing) {
  const TempDir dir;
  const std::string text = R"({"name": "n"})";
  const auto file = dir.write("d.json", text);
  const auto results = edit({{file, {}, {}}}, TagAction::add, {"fused"}, DryRun::yes);
  EXPECT_EQ(results[0].status, TagFileStatus::changed);
  EXPECT_FALSE(results[0].written);
  EXPECT_EQ(results[0].original_text, text);
  EXPECT_NE(results[0].new_text.find("\"fused\""), std::string::npos);
  EXPECT_EQ(read_file(file), text);
}

TEST(TagFiles, NonDefinitionsAndLinksAreSkipped) {
  const TempDir dir;
  const auto array = dir.write("array.json", "[]");
  const auto bad_tags = dir.write("bad.json", R"({"tags": [1]})");
  const auto broken = dir.write("broken.json", "{");
  const auto target = dir.write("target.json", R"({"name": "n"})");
  std::filesystem::create_symlink(target, dir.path() / "link.json");
  const auto results = edit({{array, {}, {}},
                             {bad_tags, {}, {}},
                             {broken, {}, {}},
                             {dir.path() / "link.json", {}, {}},
                             {dir.path() / "missing.json", {}, {}}},
                            TagAction::add, {"fused"});
  ASSERT_EQ(results.size(), 5u);
  const auto only = [](const TaggedFile& file) {
    EXPECT_EQ(file.status, TagFileStatus::skipped);
    EXPECT_EQ(file.diagnostics.size(), 1u);
    return file.diagnostics.empty()
               ? std::pair<std::string, std::string>()
               : std::pair(file.diagnostics.back().code, file.diagnostics.back().pointer);
  };
  EXPECT_EQ(only(results[0]), std::pair(std::string(codes::k_tag_not_definition), std::string()));
  EXPECT_EQ(only(results[1]), std::pair(std::string(codes::k_schema_type), std::string("/tags/0")));
  EXPECT_EQ(only(results[2]).first, codes::k_json_parse);
  EXPECT_EQ(only(results[3]).first, codes::k_io_unsafe_path);
  EXPECT_EQ(count_diagnostics(results[3].diagnostics).environment_errors, 1u);
  EXPECT_EQ(only(results[4]).first, codes::k_io_not_found);
  EXPECT_EQ(read_file(target), R"({"name": "n"})");
  EXPECT_EQ(read_file(array), "[]");
}

TEST(TagFiles, LinksNeedingNoChangeAreNotRefused) {
  const TempDir dir;
  const auto target = dir.write("target.json", R"({"name": "n", "tags": ["fused"]})");
  std::filesystem::create_symlink(target, dir.path() / "link.json");
  const auto results = edit({{dir.path() / "link.json", {}, {}}}, TagAction::add, {"fused"});
  EXPECT_EQ(results[0].status, TagFileStatus::unchanged);
  EXPECT_TRUE(results[0].diagnostics.empty());
  const auto dry = edit({{dir.path() / "link.json", {}, {}}}, TagAction::add, {"mla"}, DryRun::yes);
  EXPECT_EQ(dry[0].status, TagFileStatus::skipped);
  ASSERT_EQ(dry[0].diagnostics.size(), 1u);
  EXPECT_EQ(dry[0].diagnostics[0].code, codes::k_io_unsafe_path);
}

TEST(TagFiles, ADirectoryLockedPastTheDeadlineSkipsTheFile) {
  const TempDir dir;
  const std::string text = R"({"name": "n"})";
  const auto file = dir.write("defs/d.json", text);
  auto held = lock_directory(dir.path() / "defs");
  ASSERT_TRUE(held.has_value()) << held.error().message;
  TagEditOptions options;
  options.tags = {"fused"};
  options.lock_timeout = std::chrono::milliseconds(50);
  std::vector<TaggedFile> results;
  edit_tag_files({{file, {}, {}}}, options, [&](const TaggedFile& f) { results.push_back(f); });
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TagFileStatus::skipped);
  EXPECT_FALSE(results[0].written);
  ASSERT_EQ(results[0].diagnostics.size(), 1u);
  EXPECT_EQ(results[0].diagnostics[0].code, codes::k_io_lock_timeout);
  EXPECT_EQ(results[0].diagnostics[0].file, dir.path() / "defs");
  EXPECT_EQ(count_diagnostics(results[0].diagnostics).environment_errors, 1u);
  EXPECT_EQ(read_file(file), text);
  // Once the holder is gone the same edit goes through; a dry run never waits for the lock.
  const auto dry = edit({{file, {}, {}}}, TagAction::add, {"mla"}, DryRun::yes);
  EXPECT_EQ(dry[0].status, TagFileStatus::changed);
  *held = DirectoryLock();
  const auto again = edit({{file, {}, {}}}, TagAction::add, {"fused"});
  EXPECT_TRUE(again[0].written);
  EXPECT_EQ(*read_tags(testing::parse_or_die(read_file(file)).root), (Tags{"fused"}));
}

// --- Inventory ---

TEST(TagInventory, CountsFilesPerNamespaceAndTag) {
  const TempDir dir;
  const auto a = dir.write("a.json", R"({"tags": ["fused", "tp:2", "tp:4", "model:x"]})");
  const auto b = dir.write("b.json", R"({"tags": ["tp:2", "tp:2", "mla", "fused"]})");
  const auto c = dir.write("c.json", R"({"tags": ["tp:02"]})");
  const auto d = dir.write("d.json", R"([])");
  DiagnosticList sink;
  const auto inventory = inventory_tags({{a, {}, {}}, {b, {}, {}}, {c, {}, {}}, {d, {}, {}}}, sink);
  EXPECT_EQ(inventory.files, 3u);
  EXPECT_EQ(inventory.skipped, 1u);
  EXPECT_EQ(inventory.namespaces,
            (std::map<std::string, std::size_t>{{"(flag)", 2}, {"model", 1}, {"tp", 3}}));
  EXPECT_EQ(inventory.tags,
            (std::map<std::string, std::size_t>{
                {"fused", 2}, {"mla", 1}, {"model:x", 1}, {"tp:02", 1}, {"tp:2", 2}, {"tp:4", 1}}));
  ASSERT_EQ(sink.items().size(), 2u) << testing::describe(sink);
  EXPECT_EQ(sink.items()[0].code, codes::k_tag_malformed);
  EXPECT_EQ(sink.items()[0].severity, Severity::warning);
  EXPECT_EQ(sink.items()[0].pointer, "/tags/0");
  EXPECT_EQ(sink.items()[0].file, c);
  EXPECT_EQ(sink.items()[1].code, codes::k_tag_not_definition);
  EXPECT_EQ(tag_inventory_json(inventory).dump(),
            R"J({"files":3,"namespaces":{"(flag)":2,"model":1,"tp":3},)J"
            R"J("tags":{"fused":2,"mla":1,"model:x":1,"tp:02":1,"tp:2":2,"tp:4":1}})J");
}

TEST(TagNames, ActionSpellings) {
  EXPECT_EQ(to_string(TagAction::add), "add");
  EXPECT_EQ(to_string(TagAction::remove), "remove");
  EXPECT_EQ(parse_enum<TagAction>("remove"), TagAction::remove);
  EXPECT_EQ(parse_enum<TagAction>("list"), std::nullopt);
}

} // namespace
} // namespace fib
