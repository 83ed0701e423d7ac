// fib stage: path-segment safety, content comparison and structural diffs, the staging plan on
// temporary datasets (added, unchanged, conflicts under each --on-conflict mode, N20 groups),
// hostile names and symbolic links, the manifest, and a kill between temp file and rename.

#include "stage_fixture.hpp"
#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/stage/stage.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fib {
namespace {

using testing::find_entry;
using testing::make_definition;
using testing::python;
using testing::read_file;
using testing::StageFixture;
using testing::TempDir;
using testing::tree;

struct Fixture : StageFixture {
  std::filesystem::path staged(const std::string& relative, const Json& document) const {
    return dir.write(std::filesystem::path("dataset") / relative, canonical_json_text(document));
  }

  StageResult stage(OnConflict mode = OnConflict::fail, DryRun dry_run = DryRun::no) const {
    StageOptions options;
    options.sources = {dumps};
    options.dataset = dataset;
    options.on_conflict = mode;
    options.dry_run = dry_run;
    NoPython no_python;
    return stage_definitions(options, no_python);
  }
};

const StageEntry* entry_for(const StageResult& result, std::string_view file_name) {
  return find_entry(result, file_name);
}

bool has_code(const StageEntry& entry, std::string_view code, std::string_view pointer = "*") {
  return std::any_of(entry.diagnostics.begin(), entry.diagnostics.end(), [&](const Diagnostic& d) {
    return d.code == code && (pointer == "*" || d.pointer == pointer);
  });
}

std::vector<std::string> difference_pointers(const std::vector<FieldDifference>& differences) {
  std::vector<std::string> out;
  for (const auto& d : differences) {
    out.push_back(d.pointer);
  }
  return out;
}

// --- Path segments ---

TEST(StageSegments, UnsafeNamesAreRefusedWithAReason) {
  for (const std::string& bad :
       {std::string(), std::string("."), std::string(".."), std::string("../../evil"),
        std::string("/etc"), std::string("a\\b"), std::string("a\0b", 3), std::string("a\nb"),
        std::string("\x7f"), std::string("-rf"), std::string(".hidden"), std::string(201, 'a')}) {
    EXPECT_NE(unsafe_segment_reason(bad), "") << "accepted: " << bad;
  }
  const std::vector<std::string> good_names{"rmsnorm_h7168", "gemm_bf16_N4096_K4096", "a.b", "x-1",
                                            std::string(200, 'a')};
  for (const std::string& good : good_names) {
    EXPECT_EQ(unsafe_segment_reason(good), "") << "refused: " << good;
  }
}

// --- Comparing ---

TEST(StageCompare, KeyOrderAndTagOrderDoNotMatterButInputOrderDoes) {
  const Json a = make_definition("x");
  Json b = Json::object();
  for (auto it = a.items().begin(); it != a.items().end(); ++it) {
    if (it.key() != "name") {
      b[it.key()] = it.value();
    }
  }
  b["name"] = "x";
  b["tags"] = Json::array({"status:verified", "fi_api:flashinfer.norm.rmsnorm"});
  EXPECT_TRUE(same_definition_content(a, b));

  Json swapped = a;
  Json inputs = Json::object();
  inputs["weight"] = a["inputs"]["weight"];
  inputs["hidden_states"] = a["inputs"]["hidden_states"];
  swapped["inputs"] = inputs;
  EXPECT_FALSE(same_definition_content(a, swapped));
  const auto differences = diff_definitions(a, swapped);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].pointer, "/inputs");
  EXPECT_EQ(differences[0].staged, "order hidden_states, weight");
  EXPECT_EQ(differences[0].incoming, "order weight, hidden_states");
}

TEST(StageCompare, DiffNamesEveryChangedField) {
  const Json staged = make_definition("x");
  Json incoming = staged;
  incoming["axes"]["hidden_size"]["value"] = 256;
  incoming["inputs"]["weight"]["dtype"] = "float16";
  incoming["tags"] = Json::array({"fi_api:flashinfer.norm.rmsnorm", "model:llama"});
  incoming["reference"] = "import torch\n\ndef run(hidden_states, weight):\n    return weight\n";
  incoming.erase("description");
  incoming["init"] = "def init(): pass";
  const auto differences = diff_definitions(staged, incoming);
  EXPECT_EQ(difference_pointers(differences),
            (std::vector<std::string>{"/description", "/tags", "/axes/hidden_size/value",
                                      "/inputs/weight/dtype", "/reference", "/init"}));
  EXPECT_EQ(differences[0].incoming, "(absent)");
  EXPECT_EQ(differences[1].staged, "only status:verified");
  EXPECT_EQ(differences[1].incoming, "only model:llama");
  EXPECT_EQ(differences[2].staged, "128");
  EXPECT_EQ(differences[2].incoming, "256");
  EXPECT_EQ(differences[4].staged, "4 lines");
  EXPECT_EQ(differences[4].incoming, "4 lines");
  EXPECT_EQ(differences[4].detail, "1 line removed, 1 added");
  EXPECT_EQ(differences[5].staged, "(absent)");
}

// --- Staging ---

TEST(Stage, AddsThenLeavesUnchanged) {
  const Fixture f;
  f.dump("rmsnorm_h128.json", make_definition("rmsnorm_h128"));
  f.dump("gemm.json", make_definition("gemm_n8_k8", "gemm"));
  const auto first = f.stage();
  EXPECT_EQ(first.summary.added, 2u);
  EXPECT_EQ(count_stage_diagnostics(first).environment_errors, 0u);
  const auto staged = f.dataset / "definitions/rmsnorm/rmsnorm_h128.json";
  EXPECT_EQ(read_file(staged), canonical_json_text(make_definition("rmsnorm_h128")));
  EXPECT_EQ(tree(f.dataset),
            (std::vector<std::string>{"definitions", "definitions/gemm",
                                      "definitions/gemm/gemm_n8_k8.json", "definitions/rmsnorm",
                                      "definitions/rmsnorm/rmsnorm_h128.json"}));
  const auto mtime = std::filesystem::last_write_time(staged);

  const auto second = f.stage();
  EXPECT_EQ(second.summary.added, 0u);
  EXPECT_EQ(second.summary.unchanged, 2u);
  for (const auto& entry : second.entries) {
    EXPECT_FALSE(entry.written);
  }
  EXPECT_EQ(std::filesystem::last_write_time(staged), mtime);
}

TEST(Stage, ReformattedOrTaggedStagedCopyIsUnchanged) {
  const Fixture f;
  f.dump("a.json", make_definition("a"));
  Json staged = make_definition("a");
  staged["tags"].push_back("model:llama-3.1-8b");
  staged["tags"].push_back("tp:2");
  f.dir.write("dataset/definitions/rmsnorm/a.json", staged.dump()); // one line, other tags
  const auto result = f.stage();
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].action, StageAction::unchanged);
  EXPECT_EQ(read_file(f.dataset / "definitions/rmsnorm/a.json"), staged.dump());
}

TEST(Stage, ADifferingStagedCopyIsAConflictThatBlocksEverything) {
  const Fixture f;
  Json incoming = make_definition("a");
  incoming["axes"]["hidden_size"]["value"] = 256;
  f.dump("a.json", incoming);
  f.dump("b.json", make_definition("b"));
  f.staged("definitions/rmsnorm/a.json", make_definition("a"));
  const std::string before = read_file(f.dataset / "definitions/rmsnorm/a.json");

  const auto result = f.stage(OnConflict::fail);
  const auto* a = entry_for(result, "a.json");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->action, StageAction::conflict);
  EXPECT_TRUE(has_code(*a, codes::k_stage_conflict));
  EXPECT_EQ(difference_pointers(a->differences),
            std::vector<std::string>{"/axes/hidden_size/value"});
  EXPECT_TRUE(result.summary.blocked_by_conflicts);
  EXPECT_EQ(result.summary.conflicts, 1u);
  // b would be added, but fail stages nothing when anything conflicts.
  EXPECT_EQ(entry_for(result, "b.json")->action, StageAction::added);
  EXPECT_FALSE(entry_for(result, "b.json")->written);
  EXPECT_FALSE(std::filesystem::exists(f.dataset / "definitions/rmsnorm/b.json"));
  EXPECT_EQ(read_file(f.dataset / "definitions/rmsnorm/a.json"), before);
}

TEST(Stage, SkipLeavesTheConflictAndStagesTheRest) {
  const Fixture f;
  Json incoming = make_definition("a");
  incoming["inputs"]["weight"]["dtype"] = "float16";
  f.dump("a.json", incoming);
  f.dump("b.json", make_definition("b"));
  f.staged("definitions/rmsnorm/a.json", make_definition("a"));
  const std::string before = read_file(f.dataset / "definitions/rmsnorm/a.json");
  const auto result = f.stage(OnConflict::skip);
  const auto* a = entry_for(result, "a.json");
  EXPECT_EQ(a->action, StageAction::skipped);
  ASSERT_TRUE(has_code(*a, codes::k_stage_conflict));
  EXPECT_EQ(a->diagnostics.back().severity, Severity::warning);
  EXPECT_TRUE(entry_for(result, "b.json")->written);
  EXPECT_EQ(read_file(f.dataset / "definitions/rmsnorm/a.json"), before);
}

TEST(Stage, OverwriteReplacesTheStagedCopy) {
  const Fixture f;
  Json incoming = make_definition("a");
  incoming["inputs"]["weight"]["dtype"] = "float16";
  f.dump("a.json", incoming);
  f.staged("definitions/rmsnorm/a.json", make_definition("a"));
  const auto result = f.stage(OnConflict::overwrite);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].action, StageAction::overwritten);
  EXPECT_TRUE(result.entries[0].written);
  EXPECT_EQ(read_file(f.dataset / "definitions/rmsnorm/a.json"), canonical_json_text(incoming));
  EXPECT_EQ(tree(f.dataset / "definitions/rmsnorm"), std::vector<std::string>{"a.json"});
}

TEST(Stage, ANameStagedUnderAnotherOpTypeConflictsEvenWithOverwrite) {
  const Fixture f;
  f.dump("a.json", make_definition("a", "layernorm"));
  f.staged("definitions/rmsnorm/a.json", make_definition("a"));
  const auto result = f.stage(OnConflict::overwrite);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].action, StageAction::conflict);
  EXPECT_TRUE(has_code(result.entries[0], codes::k_stage_name_taken, "/op_type"));
  EXPECT_FALSE(std::filesystem::exists(f.dataset / "definitions/layernorm"));
}

TEST(Stage, InputsSharingANameAreGroupedFirst) {
  const Fixture f;
  // Same content twice (different formatting): one staged, one duplicate.
  f.dump("one/same.json", make_definition("same"));
  f.dir.write("dumps/two/same.json", make_definition("same").dump());
  // Different reference text only: the first is staged, N20 warning.
  Json text_only = make_definition("text");
  f.dump("one/text.json", text_only);
  text_only["reference"] = "import torch\n\ndef run(hidden_states, weight):\n    return weight\n";
  f.dump("two/text.json", text_only);
  // Different dtype: a conflict, none staged.
  f.dump("one/dtype.json", make_definition("dtype"));
  Json other_dtype = make_definition("dtype");
  other_dtype["inputs"]["hidden_states"]["dtype"] = "float16";
  f.dump("two/dtype.json", other_dtype);

  const auto result = f.stage(OnConflict::skip);
  std::map<std::string, std::vector<StageAction>> actions;
  for (const auto& entry : result.entries) {
    actions[entry.source.parent_path().filename().string() + "/" + entry.source.filename().string()]
        .push_back(entry.action);
  }
  EXPECT_EQ(actions["one/same.json"], std::vector<StageAction>{StageAction::added});
  EXPECT_EQ(actions["two/same.json"], std::vector<StageAction>{StageAction::duplicate});
  EXPECT_EQ(actions["one/text.json"], std::vector<StageAction>{StageAction::added});
  EXPECT_EQ(actions["two/text.json"], std::vector<StageAction>{StageAction::duplicate});
  EXPECT_EQ(actions["one/dtype.json"], std::vector<StageAction>{StageAction::skipped});
  EXPECT_EQ(actions["two/dtype.json"], std::vector<StageAction>{StageAction::skipped});
  for (const auto& entry : result.entries) {
    if (entry.source.filename() == "text.json" && entry.action == StageAction::duplicate) {
      EXPECT_TRUE(has_code(entry, codes::k_normalize_n20));
      EXPECT_EQ(difference_pointers(entry.differences), std::vector<std::string>{"/reference"});
    }
    if (entry.source.filename() == "dtype.json" && entry.source.parent_path().filename() == "two") {
      EXPECT_TRUE(has_code(entry, codes::k_stage_conflict));
      EXPECT_EQ(difference_pointers(entry.differences),
                std::vector<std::string>{"/inputs/hidden_states/dtype"});
    }
  }
  EXPECT_TRUE(std::filesystem::exists(f.dataset / "definitions/rmsnorm/same.json"));
  EXPECT_TRUE(std::filesystem::exists(f.dataset / "definitions/rmsnorm/text.json"));
  EXPECT_FALSE(std::filesystem::exists(f.dataset / "definitions/rmsnorm/dtype.json"));
}

TEST(Stage, BadInputsAreRejectedWithTheirCode) {
  const Fixture f;
  f.dir.write("dumps/broken.json", "{\"name\": ");
  f.dir.write("dumps/list.json", "[1, 2]");
  Json no_op_type = make_definition("x");
  no_op_type.erase("op_type");
  f.dump("no_op_type.json", no_op_type);
  Json number_name = make_definition("x");
  number_name["name"] = 7;
  f.dump("number_name.json", number_name);
  const auto result = f.stage();
  EXPECT_EQ(result.summary.rejected, 4u);
  EXPECT_TRUE(has_code(*entry_for(result, "broken.json"), codes::k_json_parse));
  EXPECT_TRUE(has_code(*entry_for(result, "list.json"), codes::k_stage_not_definition, ""));
  EXPECT_TRUE(
      has_code(*entry_for(result, "no_op_type.json"), codes::k_stage_not_definition, "/op_type"));
  EXPECT_TRUE(
      has_code(*entry_for(result, "number_name.json"), codes::k_stage_not_definition, "/name"));
  EXPECT_EQ(tree(f.dataset), std::vector<std::string>{});
}

TEST(Stage, HostileNamesWriteNothingAnywhere) {
  const Fixture f;
  f.dump("evil.json", make_definition("../../evil"));
  f.dump("abs.json", make_definition("x", "/tmp/abs"));
  f.dump("dots.json", make_definition("x", ".."));
  f.dump("dash.json", make_definition("-rf"));
  f.dump("nul.json", make_definition(std::string("a\0b", 3)));
  const auto result = f.stage(OnConflict::overwrite);
  EXPECT_EQ(result.summary.rejected, 5u);
  EXPECT_TRUE(has_code(*entry_for(result, "evil.json"), codes::k_stage_unsafe_name, "/name"));
  EXPECT_TRUE(has_code(*entry_for(result, "abs.json"), codes::k_stage_unsafe_name, "/op_type"));
  EXPECT_TRUE(has_code(*entry_for(result, "dots.json"), codes::k_stage_unsafe_name, "/op_type"));
  EXPECT_TRUE(has_code(*entry_for(result, "dash.json"), codes::k_stage_unsafe_name, "/name"));
  EXPECT_TRUE(has_code(*entry_for(result, "nul.json"), codes::k_stage_unsafe_name, "/name"));
  EXPECT_EQ(tree(f.dataset), std::vector<std::string>{});
  EXPECT_EQ(tree(f.dir.path()),
            (std::vector<std::string>{"dataset", "dumps", "dumps/abs.json", "dumps/dash.json",
                                      "dumps/dots.json", "dumps/evil.json", "dumps/nul.json"}));
}

TEST(Stage, ASymlinkedOpTypeDirectoryIsRefusedNotFollowed) {
  const Fixture f;
  const auto outside = f.dir.path() / "outside";
  std::filesystem::create_directories(outside);
  std::filesystem::create_directories(f.dataset / "definitions");
  std::filesystem::create_directory_symlink(outside, f.dataset / "definitions/rmsnorm");
  f.dump("a.json", make_definition("a"));
  const auto result = f.stage(OnConflict::overwrite);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].action, StageAction::rejected);
  EXPECT_TRUE(has_code(result.entries[0], codes::k_io_unsafe_path));
  EXPECT_GT(count_stage_diagnostics(result).environment_errors, 0u);
  EXPECT_TRUE(std::filesystem::is_empty(outside));
}

TEST(Stage, ASymlinkedDefinitionsDirectoryIsRefused) {
  const Fixture f;
  const auto outside = f.dir.path() / "outside";
  std::filesystem::create_directories(outside);
  std::filesystem::create_directory_symlink(outside, f.dataset / "definitions");
  f.dump("a.json", make_definition("a"));
  const auto result = f.stage();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].code, codes::k_io_unsafe_path);
  EXPECT_GT(count_stage_diagnostics(result).environment_errors, 0u);
  EXPECT_TRUE(std::filesystem::is_empty(outside));
}

TEST(Stage, ASymlinkedTargetFileIsNeitherReadNorWrittenThrough) {
  const Fixture f;
  const auto outside = f.dir.write("outside.json", canonical_json_text(make_definition("x")));
  std::filesystem::create_directories(f.dataset / "definitions/rmsnorm");
  std::filesystem::create_symlink(outside, f.dataset / "definitions/rmsnorm/a.json");
  Json incoming = make_definition("a");
  f.dump("a.json", incoming);
  const auto result = f.stage(OnConflict::overwrite);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_TRUE(has_code(result.entries[0], codes::k_io_unsafe_path));
  EXPECT_EQ(read_file(outside), canonical_json_text(make_definition("x")));
}

TEST(Stage, DryRunWritesNothing) {
  const Fixture f;
  f.dump("a.json", make_definition("a"));
  const auto result = f.stage(OnConflict::fail, DryRun::yes);
  EXPECT_EQ(result.summary.added, 1u);
  EXPECT_FALSE(result.entries[0].written);
  EXPECT_EQ(tree(f.dataset), std::vector<std::string>{});
}

// A write that fails is `failed` and counted so, not `added`; nothing of it is left behind, and the
// other input is still staged.
TEST(Stage, AFailedWriteIsFailedNotAdded) {
  const Fixture f;
  f.dump("a.json", make_definition("rmsnorm_h128"));
  f.dump("b.json", make_definition("gemm_n8_k8", "gemm"));
  std::filesystem::create_directories(f.dataset / "definitions/rmsnorm");
  StageResult result;
  {
    const testing::RestrictedDirectory locked(f.dataset / "definitions/rmsnorm",
                                              testing::Restriction::read_only);
    if (!locked.works()) {
      GTEST_SKIP() << "this process lists a mode-000 directory anyway";
    }
    result = f.stage();
  }
  const StageEntry* failed = entry_for(result, "a.json");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->action, StageAction::failed);
  EXPECT_FALSE(failed->written);
  ASSERT_FALSE(failed->diagnostics.empty());
  EXPECT_EQ(exit_class_of(failed->diagnostics.back()), ExitClass::environment);
  EXPECT_EQ(entry_for(result, "b.json")->action, StageAction::added);
  EXPECT_EQ(result.summary.added, 1u);
  EXPECT_EQ(result.summary.failed, 1u);
  EXPECT_EQ(failed->diagnostics.back().code, codes::k_io_write);
  EXPECT_EQ(failed->diagnostics.back().file, f.dataset / "definitions/rmsnorm/rmsnorm_h128.json");
  EXPECT_TRUE(result.diagnostics.empty());
  EXPECT_EQ(count_stage_diagnostics(result).environment_errors, 1u);
  EXPECT_EQ(tree(f.dataset / "definitions/rmsnorm"), std::vector<std::string>{});
  EXPECT_EQ(to_string(StageAction::failed), "failed");
}

TEST(Stage, ADatasetRootThatIsAFileIsNotADirectory) {
  const Fixture f;
  f.dump("a.json", make_definition("a"));
  StageOptions options;
  options.sources = {f.dumps};
  options.dataset = f.dir.write("file", "x");
  NoPython no_python;
  const auto result = stage_definitions(options, no_python);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].code, codes::k_dataset_root_missing);
  EXPECT_EQ(result.diagnostics[0].message,
            "dataset root is not a directory: " + options.dataset.string());
}

TEST(Stage, MissingDatasetRootIsAnEnvironmentError) {
  const Fixture f;
  f.dump("a.json", make_definition("a"));
  StageOptions options;
  options.sources = {f.dumps};
  options.dataset = f.dir.path() / "nope";
  NoPython no_python;
  const auto result = stage_definitions(options, no_python);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].code, codes::k_dataset_root_missing);
  EXPECT_GT(count_stage_diagnostics(result).environment_errors, 0u);
  EXPECT_FALSE(std::filesystem::exists(options.dataset));
}

TEST(Stage, ManifestListsWrittenFilesOnly) {
  const Fixture f;
  f.dump("a.json", make_definition("a"));
  f.dump("b.json", make_definition("b"));
  f.staged("definitions/rmsnorm/b.json", make_definition("b"));
  const auto result = f.stage();
  const Json manifest = stage_manifest(result, f.dataset);
  EXPECT_EQ(manifest["fib_stage_manifest"], 1);
  EXPECT_EQ(manifest["dataset"], f.dataset.lexically_normal().string());
  ASSERT_EQ(manifest["entries"].size(), 1u);
  EXPECT_EQ(manifest["entries"][0]["path"], "definitions/rmsnorm/a.json");
  EXPECT_EQ(manifest["entries"][0]["action"], "added");
  EXPECT_EQ(manifest["entries"][0]["name"], "a");
}

TEST(Stage, NormalizeOnTheWayInWritesWhatNormalizeWrites) {
  const Fixture f;
  Json raw = make_definition("rmsnorm_h128");
  raw["reference"] = "import torch\n\n@torch.no_grad()\ndef _rmsnorm_reference(hidden_states, "
                     "weight):\n    return hidden_states * weight\n";
  f.dump("rmsnorm_h128.json", raw);
  StageOptions options;
  options.sources = {f.dumps};
  options.dataset = f.dataset;
  options.normalize = StageNormalize::yes;
  const auto result = stage_definitions(options, python());
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].action, StageAction::added);
  EXPECT_GT(result.entries[0].rules_applied, 0u);
  auto normalized = normalize_definition(testing::parse_or_die(raw.dump()), {}, python());
  ASSERT_TRUE(normalized.has_value());
  EXPECT_EQ(read_file(f.dataset / "definitions/rmsnorm/rmsnorm_h128.json"),
            canonical_json_text(normalized->document));
  // Staging the raw dump again compares its normalized form: unchanged.
  EXPECT_EQ(stage_definitions(options, python()).entries[0].action, StageAction::unchanged);
}

// A process killed after writing the temporary file and before renaming it leaves the staged copy
// intact, and the stray temporary is no *.json file the validator would pick up.
TEST(Stage, AKillBeforeTheRenameLosesNothing) {
  const Fixture f;
  Json incoming = make_definition("a");
  incoming["inputs"]["weight"]["dtype"] = "float16";
  f.dump("a.json", incoming);
  const auto staged = f.staged("definitions/rmsnorm/a.json", make_definition("a"));
  const std::string before = read_file(staged);
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    ::setenv(std::string(k_fault_injection_variable).c_str(), "kill-before-rename", 1);
    (void)f.stage(OnConflict::overwrite);
    ::_exit(0); // not reached when the fault fires
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(read_file(staged), before);
  const auto files = tree(f.dataset / "definitions/rmsnorm");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1], "a.json");
  EXPECT_TRUE(files[0].starts_with(".fib-")) << files[0];
  EXPECT_NE(std::filesystem::path(files[0]).extension(), ".json");
  // The next run, started at once, overwrites cleanly and removes the stray temporary.
  const auto again = f.stage(OnConflict::overwrite);
  EXPECT_EQ(again.entries[0].action, StageAction::overwritten);
  EXPECT_EQ(read_file(staged), canonical_json_text(incoming));
  EXPECT_EQ(tree(f.dataset / "definitions/rmsnorm"), std::vector<std::string>{"a.json"});
}

// Stage's view of the staged tree and of its sources ignores a stray temporary: it neither takes
// a name nor is it read as a dump.
TEST(Stage, AtomicWriteTemporariesAreNotSeen) {
  const Fixture f;
  f.dump("a.json", make_definition("a"));
  f.dump(".fib-abc123", make_definition("b"));
  f.staged("definitions/rmsnorm/.fib-abc124", make_definition("a"));
  const auto result = f.stage(OnConflict::fail);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].action, StageAction::added);
  EXPECT_TRUE(result.entries[0].diagnostics.empty());
  // The staged tree's stale temporary went with the write into its directory; the dump directory
  // is only read, never cleaned.
  EXPECT_EQ(tree(f.dataset / "definitions/rmsnorm"), std::vector<std::string>{"a.json"});
  EXPECT_EQ(testing::temporaries_below(f.dir.path() / "dumps"),
            std::vector<std::string>{".fib-abc123"});
}

} // namespace
} // namespace fib

namespace fib {
namespace {

TEST(Stage, MalformedDumpTagsAreNotedAndKept) {
  const Fixture f;
  Json dump = make_definition("a");
  dump["tags"].push_back("tp:02");
  dump["tags"].push_back("model:llama");
  dump["tags"].push_back("quantization:nvfp4"); // the templates' vocabulary: accepted
  f.dump("a.json", dump);
  const auto result = f.stage();
  ASSERT_EQ(result.entries.size(), 1u);
  const auto& entry = result.entries[0];
  EXPECT_EQ(entry.action, StageAction::added);
  ASSERT_TRUE(has_code(entry, codes::k_tag_malformed, "/tags/2"));
  EXPECT_FALSE(has_code(entry, codes::k_tag_malformed, "/tags/3"));
  EXPECT_FALSE(has_code(entry, codes::k_tag_malformed, "/tags/4"));
  EXPECT_EQ(entry.diagnostics[0].severity, Severity::note);
  EXPECT_NE(read_file(f.dataset / "definitions/rmsnorm/a.json").find("tp:02"), std::string::npos);
}

TEST(Stage, TwoModelTagsOnOneInputAreAClash) {
  const Fixture f;
  Json dump = make_definition("a");
  dump["tags"].push_back("model:llama-3.1-8b");
  dump["tags"].push_back("model:qwen3");
  f.dump("a.json", dump);
  const auto result = f.stage();
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_TRUE(has_code(result.entries[0], codes::k_tag_clash, "/tags"));
}

} // namespace
} // namespace fib

namespace fib {
namespace {

// Done-means of issue 5 on the real dumps: staged with --normalize into an empty dataset, every
// file is exactly what normalize makes of it, and staging again changes nothing.
TEST(StageCorpus, AllSharedDumpsStageAsNormalizeWritesThemAndRestageIsANoOp) {
  const auto dumps = testing::corpus_dir() / "dumps";
  if (!std::filesystem::is_directory(dumps)) {
    GTEST_SKIP() << "no shared corpus at " << dumps;
  }
  const TempDir dir;
  StageOptions options;
  options.sources = {dumps};
  options.dataset = dir.path();
  options.normalize = StageNormalize::yes;
  const auto first = stage_definitions(options, python());
  ASSERT_EQ(count_stage_diagnostics(first).environment_errors, 0u);
  EXPECT_EQ(first.summary.rejected, 0u);
  EXPECT_EQ(first.summary.conflicts, 0u);
  EXPECT_EQ(first.summary.added, first.entries.size());
  EXPECT_GE(first.entries.size(), 20u);
  for (const auto& entry : first.entries) {
    DiagnosticList sink;
    auto raw = parse_json(read_file(entry.source), entry.source, sink);
    ASSERT_TRUE(raw.has_value()) << entry.source;
    auto normalized = normalize_definition(*raw, {}, python());
    ASSERT_TRUE(normalized.has_value()) << entry.source;
    EXPECT_EQ(read_file(dir.path() / entry.target), canonical_json_text(normalized->document))
        << entry.target;
  }
  const auto second = stage_definitions(options, python());
  EXPECT_EQ(second.summary.unchanged, first.entries.size());
  EXPECT_EQ(second.summary.added + second.summary.overwritten + second.summary.conflicts, 0u);
}

TEST(StageNames, OnConflictAndActionSpellings) {
  EXPECT_EQ(to_string(OnConflict::fail), "fail");
  EXPECT_EQ(to_string(OnConflict::skip), "skip");
  EXPECT_EQ(to_string(OnConflict::overwrite), "overwrite");
  EXPECT_EQ(parse_enum<OnConflict>("overwrite"), OnConflict::overwrite);
  EXPECT_EQ(parse_enum<OnConflict>("Overwrite"), std::nullopt);
  const std::vector<std::pair<StageAction, std::string_view>> actions = {
      {StageAction::added, "added"},
      {StageAction::unchanged, "unchanged"},
      {StageAction::overwritten, "overwritten"},
      {StageAction::conflict, "conflict"},
      {StageAction::skipped, "skipped"},
      {StageAction::duplicate, "duplicate"},
      {StageAction::rejected, "rejected"},
      {StageAction::failed, "failed"},
      {StageAction::excluded, "excluded"}};
  for (const auto& [action, name] : actions) {
    EXPECT_EQ(to_string(action), name);
    EXPECT_EQ(parse_enum<StageAction>(name), action);
  }
}

} // namespace
} // namespace fib
