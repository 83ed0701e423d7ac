// fib stage on the way to "Path A never blocks on one file": --exclude, skip that stages the rest,
// lines and summaries in the same words, overwrites that know their dependents and keep curated
// fields, case-only name clashes, decisions for one source file, and the corpus dumps staged into
// a copy of the corpus dataset.

#include "stage_fixture.hpp"
#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/stage/stage.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace fib {
namespace {

using testing::find_entry;
using testing::make_definition;
using testing::python;
using testing::read_file;
using testing::StageFixture;
using testing::TempDir;

struct Fixture : StageFixture {
  std::filesystem::path staged(const Json& document) const {
    return dir.write(std::filesystem::path("dataset") / "definitions" / "rmsnorm" /
                         (document["name"].get<std::string>() + ".json"),
                     canonical_json_text(document));
  }
  void workload_lines(std::string_view name, int count) const {
    std::string text;
    for (int i = 0; i < count; ++i) {
      text += fmt::format(R"({{"definition": "{}", "solution": null, "evaluation": null, )"
                          R"("workload": {{"uuid": "u{}", "axes": {{"batch_size": {}}}, )"
                          R"("inputs": {{"hidden_states": {{"type": "random"}}, )"
                          R"("weight": {{"type": "random"}}}}}}}})"
                          "\n",
                          name, i, i + 1);
    }
    dir.write(std::filesystem::path("dataset") / "workloads" / "rmsnorm" /
                  (std::string(name) + ".jsonl"),
              text);
  }

  StageOptions options(OnConflict mode = OnConflict::fail) const {
    StageOptions o;
    o.sources = {dumps};
    o.dataset = dataset;
    o.on_conflict = mode;
    return o;
  }
  StageResult stage(const StageOptions& o) const {
    NoPython no_python;
    return stage_definitions(o, no_python);
  }
};

const StageEntry& entry_for(const StageResult& result, std::string_view file_name) {
  if (const StageEntry* entry = find_entry(result, file_name)) {
    return *entry;
  }
  ADD_FAILURE() << "no entry for " << file_name;
  static const StageEntry none;
  return none;
}

const Diagnostic* find_code(const StageEntry& entry, std::string_view code) {
  const auto it = std::find_if(entry.diagnostics.begin(), entry.diagnostics.end(),
                               [&](const Diagnostic& d) { return d.code == code; });
  return it == entry.diagnostics.end() ? nullptr : &*it;
}

std::map<std::string, std::size_t> counts_of(const StageResult& result) {
  std::map<std::string, std::size_t> out;
  for (const auto& [label, count] : stage_summary_counts(result)) {
    out[std::string(label)] = count;
  }
  return out;
}

// Every entry is counted once, under the label of its line.
void expect_counts_agree_with_lines(const StageResult& result) {
  std::map<std::string, std::size_t> lines;
  for (const auto& entry : result.entries) {
    ++lines[std::string(stage_line_label(entry, result.summary))];
  }
  for (const auto& [label, count] : counts_of(result)) {
    EXPECT_EQ(count, lines[label]) << label;
  }
  std::size_t total = 0;
  for (const auto& [label, count] : stage_summary_counts(result)) {
    total += count;
  }
  EXPECT_EQ(total, result.entries.size());
}

// --- --exclude ---

TEST(StageExclude, MatchingInputsAreNotReadAndSayExcluded) {
  Fixture f;
  f.dump("rmsnorm_h128.json", make_definition("rmsnorm_h128"));
  f.dir.write("dumps/graph/rmsnorm_h128.json", "{not json");
  StageOptions o = f.options();
  o.exclude = {"graph/*"};
  const StageResult result = f.stage(o);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].action, StageAction::excluded); // graph/ sorts first
  EXPECT_TRUE(result.entries[0].diagnostics.empty());
  EXPECT_EQ(result.entries[1].action, StageAction::added);
  EXPECT_EQ(result.summary.excluded, 1u);
  EXPECT_EQ(counts_of(result)["excluded"], 1u);
  expect_counts_agree_with_lines(result);
}

// --- skip stages the rest; lines and summary agree ---

TEST(StageSkip, APairThatDiffersIsSkippedAndTheRestIsWritten) {
  Fixture f;
  f.dump("a/gqa_h32.json", make_definition("gqa_h32"));
  Json twin = make_definition("gqa_h32");
  twin["description"] = "RMSNorm (CUDA graph)";
  f.dump("b/gqa_h32.json", twin);
  f.dump("c/rmsnorm_h128.json", make_definition("rmsnorm_h128"));
  const StageResult result = f.stage(f.options(OnConflict::skip));
  EXPECT_EQ(entry_for(result, "rmsnorm_h128.json").action, StageAction::added);
  EXPECT_TRUE(entry_for(result, "rmsnorm_h128.json").written);
  EXPECT_EQ(result.summary.skipped, 2u);
  EXPECT_EQ(result.summary.conflicts, 0u);
  EXPECT_FALSE(result.summary.blocked_by_conflicts);
  const auto counts = counts_of(result);
  EXPECT_EQ(counts.at("skipped"), 2u);
  EXPECT_EQ(counts.at("conflict"), 0u);
  EXPECT_EQ(counts.at("added"), 1u);
  expect_counts_agree_with_lines(result);
  // The hint names what fib stage and fib dump accept.
  const Diagnostic* conflict = find_code(result.entries[1], codes::k_stage_conflict);
  ASSERT_NE(conflict, nullptr);
  EXPECT_NE(conflict->hint.find("\"files\""), std::string::npos) << conflict->hint;
  EXPECT_NE(conflict->hint.find("--exclude GLOB"), std::string::npos) << conflict->hint;
  EXPECT_NE(conflict->hint.find("--on-conflict skip"), std::string::npos) << conflict->hint;
}

TEST(StageLines, AnAbortedPlanSaysNotWrittenAndADryRunWouldAdd) {
  Fixture f;
  f.staged(make_definition("rmsnorm_h128"));
  Json changed = make_definition("rmsnorm_h128");
  changed["axes"]["hidden_size"]["value"] = 256;
  f.dump("rmsnorm_h128.json", changed);
  f.dump("rmsnorm_h256.json", make_definition("rmsnorm_h256"));
  const StageResult blocked = f.stage(f.options());
  ASSERT_TRUE(blocked.summary.blocked_by_conflicts);
  const StageEntry& not_written = entry_for(blocked, "rmsnorm_h256.json");
  EXPECT_FALSE(not_written.written);
  EXPECT_EQ(stage_line_label(not_written, blocked.summary), "not written");
  EXPECT_EQ(counts_of(blocked)["not written"], 1u);
  EXPECT_EQ(counts_of(blocked)["added"], 0u);
  expect_counts_agree_with_lines(blocked);

  StageOptions dry = f.options(OnConflict::overwrite);
  dry.dry_run = DryRun::yes;
  const StageResult planned = f.stage(dry);
  EXPECT_EQ(stage_line_label(entry_for(planned, "rmsnorm_h256.json"), planned.summary),
            "would add");
  EXPECT_EQ(stage_line_label(entry_for(planned, "rmsnorm_h128.json"), planned.summary),
            "would overwrite");
  EXPECT_EQ(counts_of(planned)["would add"], 1u);
  EXPECT_EQ(counts_of(planned)["would overwrite"], 1u);
  expect_counts_agree_with_lines(planned);
}

// --- Overwrite knows its dependents ---

TEST(StageOverwrite, BreakingTheWorkloadsIsRefusedWithCountsAndLines) {
  Fixture f;
  f.staged(make_definition("rmsnorm_h128"));
  f.workload_lines("rmsnorm_h128", 5);
  Json renamed = make_definition("rmsnorm_h128");
  renamed["inputs"] = Json::parse(R"({"x": {"shape": ["batch_size", "hidden_size"],
    "dtype": "bfloat16"}, "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}})");
  f.dump("rmsnorm_h128.json", renamed);
  f.dump("rmsnorm_h256.json", make_definition("rmsnorm_h256"));
  const StageResult result = f.stage(f.options(OnConflict::overwrite));
  const StageEntry& entry = entry_for(result, "rmsnorm_h128.json");
  EXPECT_EQ(entry.action, StageAction::conflict);
  EXPECT_FALSE(entry.written);
  const Diagnostic* breaks = find_code(entry, codes::k_stage_overwrite_breaks);
  ASSERT_NE(breaks, nullptr);
  EXPECT_EQ(breaks->severity, Severity::error);
  EXPECT_NE(breaks->message.find("5 of 5 workloads"), std::string::npos) << breaks->message;
  EXPECT_NE(breaks->message.find("rmsnorm_h128.jsonl:1: "), std::string::npos) << breaks->message;
  EXPECT_NE(breaks->message.find("and 2 more"), std::string::npos) << breaks->message;
  EXPECT_NE(breaks->hint.find("--force"), std::string::npos);
  // The field diff comes with it.
  const Diagnostic* conflict = find_code(entry, codes::k_stage_conflict);
  ASSERT_NE(conflict, nullptr);
  EXPECT_NE(conflict->message.find("/inputs"), std::string::npos) << conflict->message;
  // The staged file is as it was; the other input was staged.
  EXPECT_EQ(read_file(f.dataset / "definitions/rmsnorm/rmsnorm_h128.json"),
            canonical_json_text(make_definition("rmsnorm_h128")));
  EXPECT_TRUE(entry_for(result, "rmsnorm_h256.json").written);
  EXPECT_TRUE(has_unresolved_conflicts(result));

  StageOptions forced = f.options(OnConflict::overwrite);
  forced.overwrite_breaking = OverwriteBreaking::force;
  const StageResult replaced = f.stage(forced);
  const StageEntry& overwritten = entry_for(replaced, "rmsnorm_h128.json");
  EXPECT_EQ(overwritten.action, StageAction::overwritten);
  EXPECT_TRUE(overwritten.written);
  const Diagnostic* warned = find_code(overwritten, codes::k_stage_overwrite_breaks);
  ASSERT_NE(warned, nullptr);
  EXPECT_EQ(warned->severity, Severity::warning);
}

TEST(StageOverwrite, ANonBreakingOverwriteSaysWhatNamesItAndKeepsCuratedFields) {
  Fixture f;
  Json staged = make_definition("rmsnorm_h128");
  staged["description"] = "Curated: RMSNorm of Qwen3, eps 1e-6.";
  staged["inputs"]["weight"]["description"] = "gamma";
  staged["tags"].push_back("model:qwen3-30b-a3b");
  staged["tags"].push_back("fi_api:flashinfer.norm.old_name"); // the incoming fi_api: wins
  f.staged(staged);
  f.workload_lines("rmsnorm_h128", 2);
  Json incoming = make_definition("rmsnorm_h128");
  incoming.erase("description");
  incoming["reference"] =
      "import torch\n\ndef run(hidden_states, weight):\n    return (hidden_states * weight)\n";
  f.dump("rmsnorm_h128.json", incoming);
  const StageResult result = f.stage(f.options(OnConflict::overwrite));
  const StageEntry& entry = entry_for(result, "rmsnorm_h128.json");
  ASSERT_EQ(entry.action, StageAction::overwritten);
  EXPECT_EQ(entry.kept, (std::vector<std::string>{"/description", "/inputs/weight/description",
                                                  "tag model:qwen3-30b-a3b"}));
  const Diagnostic* conflict = find_code(entry, codes::k_stage_conflict);
  ASSERT_NE(conflict, nullptr);
  EXPECT_EQ(conflict->severity, Severity::warning);
  EXPECT_NE(conflict->message.find("2 workloads, 0 solutions and 0 trace lines name it; none "
                                   "breaks"),
            std::string::npos)
      << conflict->message;
  const Json written = Json::parse(read_file(f.dataset / entry.target));
  EXPECT_EQ(written["description"], staged["description"]);
  EXPECT_EQ(written["inputs"]["weight"]["description"], "gamma");
  EXPECT_NE(std::find(written["tags"].begin(), written["tags"].end(), "model:qwen3-30b-a3b"),
            written["tags"].end());
  EXPECT_EQ(written["reference"], incoming["reference"]);

  f.staged(staged);
  StageOptions drop = f.options(OnConflict::overwrite);
  drop.curated = CuratedFields::drop;
  const StageResult dropped = f.stage(drop);
  EXPECT_TRUE(entry_for(dropped, "rmsnorm_h128.json").kept.empty());
  EXPECT_FALSE(Json::parse(read_file(f.dataset / entry.target)).contains("description"));
}

// --- Case-only clashes ---

TEST(StageCaseClash, NamesThatDifferOnlyInCaseAreWarned) {
  Fixture f;
  f.staged(make_definition("RMSNorm_h128"));
  f.dump("rmsnorm_h128.json", make_definition("rmsnorm_h128"));
  f.dump("gemm_N64.json", make_definition("gemm_N64"));
  f.dump("gemm_n64.json", make_definition("gemm_n64"));
  const StageResult result = f.stage(f.options());
  for (const char* file : {"rmsnorm_h128.json", "gemm_N64.json", "gemm_n64.json"}) {
    const Diagnostic* clash = find_code(entry_for(result, file), codes::k_stage_case_clash);
    ASSERT_NE(clash, nullptr) << file;
    EXPECT_EQ(clash->severity, Severity::warning);
    EXPECT_EQ(clash->pointer, "/name");
  }
  EXPECT_NE(find_code(entry_for(result, "rmsnorm_h128.json"), codes::k_stage_case_clash)
                ->message.find("'RMSNorm_h128' (staged)"),
            std::string::npos);
  EXPECT_EQ(result.summary.added, 3u); // a warning, not a conflict
}

// --- Decisions for one file, and unused entries ---

TEST(StageDecisions, AFilesEntryRenamesOneOfAPairAndAnUnusedEntryIsWarned) {
  Fixture f;
  f.dump("a/gqa_h32.json", make_definition("gqa_h32"));
  Json twin = make_definition("gqa_h32");
  twin["description"] = "RMSNorm (CUDA graph)";
  const auto twin_path = f.dump("b/gqa_h32.json", twin);
  NormalizeDecisions decisions;
  decisions.file = "decisions.json";
  auto& by_file = decisions.files[resolved_source_path(twin_path)];
  by_file.name = "gqa_h32_cuda_graph";
  by_file.pointer = "/files/b~1gqa_h32.json";
  decisions.definitions["gqa_h23"].pointer = "/definitions/gqa_h23";
  decisions.definitions["gqa_h23"].line = 4;
  StageOptions o = f.options();
  o.normalize = StageNormalize::yes;
  o.normalize_options.decisions = &decisions;
  const StageResult result = stage_definitions(o, python());
  EXPECT_EQ(result.summary.added, 2u);
  EXPECT_EQ(result.summary.conflicts, 0u);
  EXPECT_EQ(result.entries[1].name, "gqa_h32_cuda_graph");
  EXPECT_TRUE(std::filesystem::exists(f.dataset / "definitions/rmsnorm/gqa_h32_cuda_graph.json"));
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].code, codes::k_normalize_decision_unused);
  EXPECT_EQ(result.diagnostics[0].pointer, "/definitions/gqa_h23");
  EXPECT_EQ(result.diagnostics[0].line, 4);
  EXPECT_EQ(result.diagnostics[0].file, "decisions.json");
}

TEST(StageDecisions, ADecisionThatLeavesTooFewOutputsRejectsTheInput) {
  Fixture f;
  Json two = make_definition("split_h128");
  two["outputs"]["residual"] = two["outputs"]["output"];
  two["reference"] =
      "import torch\n\ndef run(hidden_states, weight):\n    return hidden_states, weight\n";
  f.dump("split_h128.json", two);
  NormalizeDecisions decisions;
  decisions.definitions["split_h128"].drop_outputs = {"residual"};
  decisions.definitions["split_h128"].pointer = "/definitions/split_h128";
  StageOptions o = f.options();
  o.normalize = StageNormalize::yes;
  o.normalize_options.decisions = &decisions;
  const StageResult result = stage_definitions(o, python());
  const StageEntry& entry = entry_for(result, "split_h128.json");
  EXPECT_EQ(entry.action, StageAction::rejected);
  const Diagnostic* error = find_code(entry, codes::k_normalize_decision_outputs);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->pointer, "/outputs");
  EXPECT_FALSE(std::filesystem::exists(f.dataset / "definitions"));
}

// --- Done means: the corpus dumps into a copy of the corpus dataset ---

std::size_t json_files_below(const std::filesystem::path& root) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    n += e.is_regular_file() && e.path().extension() == ".json" ? 1 : 0;
  }
  return n;
}

TEST(StageCorpus, DumpsIntoACopyOfTheDatasetAccountForEveryFileAndOnePairBlocksNothing) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty() || !std::filesystem::is_directory(corpus / "dumps") ||
      !std::filesystem::is_directory(corpus / "dataset")) {
    GTEST_SKIP() << "no shared corpus";
  }
  const TempDir dir;
  const auto dataset = dir.path() / "dataset";
  std::filesystem::copy(corpus / "dataset", dataset, std::filesystem::copy_options::recursive);
  // The CUDA-graph twin of a real dump: same name, another description.
  Json twin = Json::parse(read_file(corpus / "dumps/gqa_paged_decode_h32_kv8_d128_ps16.json"));
  twin["description"] = twin.value("description", std::string()) + " (CUDA graph capture)";
  const auto twin_path =
      dir.write("cudagraph/gqa_paged_decode_h32_kv8_d128_ps16.json", twin.dump(2));
  NormalizeDecisions decisions;
  decisions.files[resolved_source_path(twin_path)].name =
      "gqa_paged_decode_h32_kv8_d128_ps16_cuda_graph";
  decisions.files[resolved_source_path(twin_path)].pointer = "/files/twin";
  StageOptions o;
  o.sources = {corpus / "dumps", dir.path() / "cudagraph"};
  o.dataset = dataset;
  o.normalize = StageNormalize::yes;
  o.normalize_options.decisions = &decisions;
  o.on_conflict = OnConflict::skip;
  const StageResult result = stage_definitions(o, python());
  EXPECT_EQ(count_stage_diagnostics(result).environment_errors, 0u);
  EXPECT_TRUE(result.diagnostics.empty()); // the decisions entry was used
  EXPECT_EQ(result.entries.size(), json_files_below(corpus / "dumps") + 1);
  EXPECT_FALSE(result.summary.blocked_by_conflicts);
  EXPECT_EQ(result.summary.conflicts, 0u);
  EXPECT_EQ(result.summary.rejected, 0u);
  expect_counts_agree_with_lines(result);
  for (const auto& entry : result.entries) {
    const std::string_view label = stage_line_label(entry, result.summary);
    EXPECT_TRUE(label == "added" || label == "unchanged" || label == "skipped") << entry.source;
    if (entry.action == StageAction::added) {
      EXPECT_TRUE(entry.written && std::filesystem::exists(dataset / entry.target)) << entry.target;
    }
  }
  EXPECT_TRUE(std::filesystem::exists(
      dataset / "definitions/gqa_paged/gqa_paged_decode_h32_kv8_d128_ps16_cuda_graph.json"));
  EXPECT_TRUE(std::filesystem::exists(
      dataset / "definitions/gqa_paged/gqa_paged_decode_h32_kv8_d128_ps16.json"));
}

} // namespace
} // namespace fib
