// `fib collect` end to end on Level-10 dumps written by the test (l10_fixtures.hpp): binding,
// plan pairing by object, const checks for TP ranks, storage policy, scalars that are asked for,
// dedupe, selection, --replace that never empties a definition, and recovery of an interrupted
// run's blobs.
#include "l10_fixtures.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/collect.hpp>
#include <fib/collect/selection.hpp>
#include <fib/collect/workload_file.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fib {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using namespace l10;

UuidSource counting_uuids() {
  auto next = std::make_shared<int>(0);
  return [next] { return fmt::format("00000000-0000-4000-8000-{:012}", ++*next); };
}

struct CollectRun {
  Expected<CollectReport> report = unexpected(make_diagnostic(codes::k_usage, "not run"));
  DiagnosticList diagnostics;
};

CollectRun collect(const TempDir& dump, const TempDir& dataset,
                   const std::function<void(CollectOptions&)>& adjust = {}) {
  CollectOptions options;
  options.dumps = {dump.path()};
  options.dataset = dataset.path();
  options.write.uuid = counting_uuids();
  if (adjust) {
    adjust(options);
  }
  CollectRun run;
  run.report = collect_workloads(options, run.diagnostics);
  return run;
}

std::vector<Json> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) {
      out.push_back(Json::parse(line));
    }
  }
  return out;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const DefinitionCollection& only(const CollectRun& run) {
  EXPECT_TRUE(run.report.has_value()) << (run.report ? "" : run.report.error().message);
  EXPECT_EQ(run.report->definitions.size(), 1u);
  return run.report->definitions.at(0);
}

std::vector<std::int32_t> blob_i32(const fs::path& file, const std::string& key) {
  auto header = read_safetensors_header(file);
  EXPECT_TRUE(header.has_value());
  auto values = read_tensor_values(file, *header, key, 1000);
  EXPECT_TRUE(values.has_value());
  std::vector<std::int32_t> out;
  for (const double v : *values) {
    out.push_back(static_cast<std::int32_t>(v));
  }
  return out;
}

const Diagnostic* find_code(const DiagnosticList& list, std::string_view code) {
  for (const Diagnostic& d : list.items()) {
    if (d.code == code) {
      return &d;
    }
  }
  return nullptr;
}

TEST(Collect, APlainFunctionCallBecomesAWorkloadWithItsScalarAndNoBlob) {
  for (const bool by_keyword : {false, true}) {
    TempDir dump;
    TempDir dataset;
    write_call(dump, rmsnorm_call(1, 4, by_keyword));
    write_definition(dataset, rmsnorm_definition());
    const CollectRun run = collect(dump, dataset);
    const DefinitionCollection& d = only(run);
    EXPECT_EQ(d.calls, 1u);
    EXPECT_EQ(d.accepted, 1u);
    ASSERT_EQ(d.written.uuids.size(), 1u);
    const auto lines = lines_of(dataset.path() / "workloads/rmsnorm/rmsnorm_h8.jsonl");
    ASSERT_EQ(lines.size(), 1u);
    const Json& w = lines[0].at("workload");
    EXPECT_EQ(lines[0].at("definition"), "rmsnorm_h8");
    EXPECT_TRUE(lines[0].at("solution").is_null());
    EXPECT_TRUE(lines[0].at("evaluation").is_null());
    EXPECT_EQ(w.at("uuid"), "00000000-0000-4000-8000-000000000001");
    EXPECT_EQ(w.at("axes"), Json::parse(R"({"batch_size": 4})"));
    EXPECT_EQ(w.at("inputs").at("hidden_states"), Json::parse(R"({"type": "random"})"));
    EXPECT_EQ(w.at("inputs").at("weight"), Json::parse(R"({"type": "random"})"));
    EXPECT_EQ(w.at("inputs").at("eps").at("type"), "scalar");
    EXPECT_DOUBLE_EQ(w.at("inputs").at("eps").at("value").get<double>(), 1e-06);
    EXPECT_FALSE(fs::exists(dataset.path() / "blob")) << "no blob for a workload without one";
  }
}

TEST(Collect, AConstAxisMismatchRefusesTheCallAndWritesNothing) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4, false, 16)); // hidden 16 for an h8 definition
  write_definition(dataset, rmsnorm_definition(8));
  const CollectRun run = collect(dump, dataset);
  const DefinitionCollection& d = only(run);
  EXPECT_EQ(d.accepted, 0u);
  EXPECT_EQ(d.rejected.at(std::string(codes::k_collect_axis_mismatch)), 1u);
  const Diagnostic* refused = find_code(run.diagnostics, codes::k_collect_axis_mismatch);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->pointer, "/axes/hidden_size");
  EXPECT_NE(refused->message.find("rmsnorm_call0001"), std::string::npos) << refused->message;
  EXPECT_NE(find_code(run.diagnostics, codes::k_collect_no_workloads), nullptr);
  EXPECT_FALSE(fs::exists(dataset.path() / "workloads"));
}

void write_decode_dump(const TempDir& dump) {
  write_call(dump, decode_plan());
  write_call(dump, decode_run());
}

TEST(Collect, ADecodeRunTakesItsPlansIndexBuffersCutToTheirUsedLength) {
  for (const std::string_view api : {"flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper",
                                     "flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run"}) {
    TempDir dump;
    TempDir dataset;
    write_decode_dump(dump);
    write_definition(dataset, decode_definition(4, 2, api));
    const CollectRun run = collect(dump, dataset);
    const DefinitionCollection& d = only(run);
    EXPECT_EQ(d.calls, 1u) << api << ": the plan is not a workload of its own";
    ASSERT_EQ(d.written.uuids.size(), 1u) << api;
    const auto lines =
        lines_of(dataset.path() / "workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1.jsonl");
    ASSERT_EQ(lines.size(), 1u);
    const Json& w = lines[0].at("workload");
    // num_pages is the pool's size (the cache's first dimension), not max(index) + 1.
    EXPECT_EQ(w.at("axes"), Json::parse(R"({"batch_size": 2, "num_pages": 12, "len_indptr": 3,
                                            "num_kv_indices": 5})"));
    for (const char* random : {"q", "k_cache", "v_cache"}) {
      EXPECT_EQ(w.at("inputs").at(random).at("type"), "random") << random;
    }
    EXPECT_EQ(w.at("inputs").at("sm_scale"), Json::parse(R"({"type": "scalar", "value": 0.25})"));
    const std::string path = w.at("inputs").at("kv_indices").at("path");
    EXPECT_EQ(path, "./blob/workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1/"
                    "gqa_paged_decode_h4_kv2_d16_ps1_00000000000040008000000000000001.safetensors");
    EXPECT_EQ(w.at("inputs").at("kv_indices").at("tensor_key"), "kv_indices");
    const fs::path blob = dataset.path() / path.substr(2);
    EXPECT_EQ(blob_i32(blob, "kv_indptr"), (std::vector<std::int32_t>{0, 3, 5}));
    EXPECT_EQ(blob_i32(blob, "kv_indices"), (std::vector<std::int32_t>{7, 2, 9, 4, 1}));
    EXPECT_EQ(blob_i32(blob, "kv_last_page_len"), (std::vector<std::int32_t>{1, 1}));
    EXPECT_FALSE(fs::exists(blob.parent_path() / ".fib-collect-pending.json"));
  }
}

TEST(Collect, ARunWithoutItsPlanIsRefusedForItsIndexBuffers) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, decode_run());
  write_definition(dataset, decode_definition());
  const CollectRun run = collect(dump, dataset);
  const DefinitionCollection& d = only(run);
  EXPECT_EQ(d.rejected.at(std::string(codes::k_collect_input_missing)), 1u);
  const Diagnostic* refused = find_code(run.diagnostics, codes::k_collect_input_missing);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->pointer, "/inputs/kv_indptr");
  EXPECT_NE(refused->message.find("no plan of the same object"), std::string::npos);
}

TEST(Collect, AMissingScalarIsAskedForAndTheAnswerIsUsed) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, decode_plan(4242, 4, 2, /*sm_scale=*/false));
  write_call(dump, decode_run());
  write_definition(dataset, decode_definition());
  const CollectRun asked = collect(dump, dataset);
  EXPECT_EQ(only(asked).rejected.at(std::string(codes::k_collect_scalar_missing)), 1u);
  const Diagnostic* question = find_code(asked.diagnostics, codes::k_collect_scalar_missing);
  ASSERT_NE(question, nullptr);
  EXPECT_EQ(question->pointer, "/inputs/sm_scale");
  EXPECT_NE(question->message.find("--scalar sm_scale=VALUE"), std::string::npos);
  EXPECT_FALSE(fs::exists(dataset.path() / "workloads")) << "no value is made up";

  const CollectRun answered = collect(dump, dataset, [](CollectOptions& o) {
    o.candidates.scalars.push_back({"gqa_paged_decode_h4_kv2_d16_ps1", "sm_scale", 0.125});
  });
  ASSERT_EQ(only(answered).written.uuids.size(), 1u);
  const auto lines =
      lines_of(dataset.path() / "workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1.jsonl");
  EXPECT_EQ(lines.at(0).at("workload").at("inputs").at("sm_scale").at("value"), 0.125);
}

TEST(Collect, ARunIsPairedWithThePlanOfItsOwnWrapperObject) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_call(dump, prefill_plan()); // same pid, another object, sorts between plan and run
  write_definition(dataset, decode_definition());
  const CollectRun run = collect(dump, dataset);
  ASSERT_EQ(only(run).written.uuids.size(), 1u);
  const auto lines =
      lines_of(dataset.path() / "workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1.jsonl");
  // Pairing by process only would give len_indptr 3 from [0,4,9] and 9 indices.
  EXPECT_EQ(lines.at(0).at("workload").at("axes").at("num_kv_indices"), 5);
}

TEST(Collect, TensorParallelRanksGoToTheDefinitionOfTheirShardOnly) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);                   // TP=1 shapes: 4 q heads, 2 kv heads
  write_call(dump, decode_plan(4243, 2, 1)); // a TP=2 rank: 2 and 1
  write_call(dump, decode_run(4243, 2, 1));
  write_definition(dataset, decode_definition(4, 2));
  write_definition(dataset, decode_definition(2, 1));
  const CollectRun run = collect(dump, dataset);
  ASSERT_TRUE(run.report.has_value());
  ASSERT_EQ(run.report->definitions.size(), 2u);
  for (const DefinitionCollection& d : run.report->definitions) {
    EXPECT_EQ(d.calls, 2u) << d.name;
    EXPECT_EQ(d.accepted, 1u) << d.name;
    EXPECT_EQ(d.rejected.at(std::string(codes::k_collect_axis_mismatch)), 1u) << d.name;
    EXPECT_EQ(d.written.uuids.size(), 1u) << d.name;
  }
}

TEST(Collect, DebrisIsCountedAndTheGoodCallsStillCount) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4));
  Call crashed = rmsnorm_call(2, 6);
  crashed.completed = false;
  write_call(dump, crashed);
  dump.write("20260101_120000_004_pid4242_rmsnorm_call0004/.keep", "");
  dump.write("20260101_120000_005_pid4242_rmsnorm_call0005/metadata.jsonl", "{\"function_na");
  write_definition(dataset, rmsnorm_definition());
  const CollectRun run = collect(dump, dataset);
  ASSERT_TRUE(run.report.has_value());
  EXPECT_EQ(run.report->calls_rejected, 3u);
  EXPECT_NE(find_code(run.diagnostics, codes::k_collect_call_incomplete), nullptr);
  EXPECT_NE(find_code(run.diagnostics, codes::k_collect_no_metadata), nullptr);
  EXPECT_NE(find_code(run.diagnostics, codes::k_collect_metadata_cut), nullptr);
  EXPECT_EQ(only(run).written.uuids.size(), 1u) << "the crashed call never becomes a workload";
}

TEST(Collect, DuplicatesAreDroppedWithinARunAndAgainstTheDataset) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4));
  write_call(dump, rmsnorm_call(2, 4)); // the same data
  write_call(dump, rmsnorm_call(3, 8));
  write_definition(dataset, rmsnorm_definition());
  const CollectRun first = collect(dump, dataset);
  EXPECT_EQ(only(first).written.selection.duplicates, 1u);
  EXPECT_EQ(only(first).written.uuids.size(), 2u);
  const fs::path file = dataset.path() / "workloads/rmsnorm/rmsnorm_h8.jsonl";
  const std::string before = text_of(file);
  const CollectRun again = collect(dump, dataset);
  EXPECT_EQ(only(again).written.selection.duplicates, 3u);
  EXPECT_TRUE(only(again).written.uuids.empty());
  EXPECT_EQ(text_of(file), before) << "nothing new: the file is not rewritten";
}

TEST(Collect, ARewrittenWorkloadsFileKeepsItsPermissionBits) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4));
  write_definition(dataset, rmsnorm_definition());
  ASSERT_TRUE(collect(dump, dataset).report.has_value());
  const fs::path file = dataset.path() / "workloads/rmsnorm/rmsnorm_h8.jsonl";
  const auto group_writable = fs::perms::owner_read | fs::perms::owner_write |
                              fs::perms::group_read | fs::perms::group_write;
  fs::permissions(file, group_writable);
  TempDir more;
  write_call(more, rmsnorm_call(2, 16));
  const CollectRun appended = collect(more, dataset);
  ASSERT_EQ(only(appended).written.uuids.size(), 1u);
  EXPECT_EQ(lines_of(file).size(), 2u);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::mask, group_writable)
      << "the rewrite kept the file's mode";
}

TEST(Collect, ReplaceNeverEmptiesADefinitionAndRemovesOnlyTheOldLinesBlobs) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_definition(dataset, decode_definition());
  ASSERT_EQ(only(collect(dump, dataset)).written.uuids.size(), 1u);
  const fs::path file =
      dataset.path() / "workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1.jsonl";
  const fs::path blob_dir =
      dataset.path() / "blob/workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1";
  const std::string old_path = lines_of(file).at(0)["workload"]["inputs"]["kv_indptr"]["path"];
  dataset.write("blob/workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1/notes.txt", "mine");
  // A line naming a blob outside the definition's own places: replaced, but its blob stays.
  dataset.write("blob/shared/common.safetensors", safetensors({i32("kv_indptr", {0, 1})}));
  {
    Json line = lines_of(file).at(0);
    line["workload"]["uuid"] = "shared";
    line["workload"]["axes"]["batch_size"] = 7;
    line["workload"]["inputs"]["kv_indptr"]["path"] = "./blob/shared/common.safetensors";
    std::ofstream(file, std::ios::app) << line.dump() << "\n";
  }

  TempDir empty_dump;
  write_call(empty_dump, decode_run()); // refused: no plan
  const std::string before = text_of(file);
  const CollectRun nothing = collect(
      empty_dump, dataset, [](CollectOptions& o) { o.write.replace = ReplaceMode::replace; });
  EXPECT_EQ(only(nothing).accepted, 0u);
  EXPECT_EQ(text_of(file), before) << "--replace with nothing accepted keeps the workloads";
  EXPECT_TRUE(fs::exists(dataset.path() / old_path.substr(2)));

  TempDir new_dump;
  Call plan = decode_plan();
  plan.inputs[1] = i32("arg_2", {3, 2, 9, 4, 1, 0, 0, 0}); // other pages: new data
  write_call(new_dump, plan);
  write_call(new_dump, decode_run());
  const CollectRun replaced = collect(new_dump, dataset, [](CollectOptions& o) {
    o.write.replace = ReplaceMode::replace;
    o.write.uuid = [] { return std::string("00000000-0000-4000-8000-0000000000aa"); };
  });
  EXPECT_EQ(only(replaced).written.removed, 2u);
  EXPECT_EQ(only(replaced).written.blobs_removed, 1u);
  const auto lines = lines_of(file);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["workload"]["uuid"], "00000000-0000-4000-8000-0000000000aa");
  EXPECT_FALSE(fs::exists(dataset.path() / old_path.substr(2)));
  EXPECT_TRUE(fs::exists(blob_dir / "notes.txt")) << "files no line named are not touched";
  EXPECT_TRUE(fs::exists(dataset.path() / "blob/shared/common.safetensors"))
      << "a blob outside the definition's own places may be shared";
}

TEST(Collect, AnInterruptedRunsUnlistedBlobsAreRemovedByTheNextRun) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_definition(dataset, decode_definition());
  const std::string dir = "blob/workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1/";
  const std::string orphan =
      "gqa_paged_decode_h4_kv2_d16_ps1_00000000000040008000000000000099.safetensors";
  // What a run killed between its blob and its line leaves: the journal and the blob.
  dataset.write(dir + orphan, safetensors({i32("kv_indptr", {0, 1})}));
  dataset.write(dir + ".fib-collect-pending.json",
                Json{{"written", {dir + orphan}}, {"remove", Json::array()}}.dump());
  const CollectRun run = collect(dump, dataset);
  EXPECT_EQ(only(run).written.uuids.size(), 1u);
  const Diagnostic* recovered = find_code(run.diagnostics, codes::k_collect_recovered);
  ASSERT_NE(recovered, nullptr);
  EXPECT_NE(recovered->message.find("removed 1 blob"), std::string::npos);
  EXPECT_FALSE(fs::exists(dataset.path() / dir / orphan));
  EXPECT_FALSE(fs::exists(dataset.path() / dir / ".fib-collect-pending.json"));
}

TEST(Collect, DryRunWritesNothing) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_definition(dataset, decode_definition());
  const CollectRun run =
      collect(dump, dataset, [](CollectOptions& o) { o.write.dry_run = DryRun::yes; });
  EXPECT_EQ(only(run).written.uuids.size(), 1u);
  EXPECT_EQ(only(run).written.blobs_written, 1u);
  EXPECT_FALSE(fs::exists(dataset.path() / "workloads"));
  EXPECT_FALSE(fs::exists(dataset.path() / "blob"));
}

TEST(Collect, UnknownFiltersAndHostileNamesAreRefused) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4));
  write_definition(dataset, rmsnorm_definition());
  const CollectRun unknown =
      collect(dump, dataset, [](CollectOptions& o) { o.definitions = {"nope"}; });
  ASSERT_FALSE(unknown.report.has_value());
  EXPECT_EQ(unknown.report.error().code, codes::k_filter_unmatched);

  Json hostile = rmsnorm_definition();
  hostile["name"] = "../../escape";
  dataset.write("definitions/rmsnorm/escape.json", hostile.dump());
  const CollectRun run = collect(dump, dataset);
  ASSERT_TRUE(run.report.has_value());
  const Diagnostic* unsafe = find_code(run.diagnostics, codes::k_io_unsafe_path);
  ASSERT_NE(unsafe, nullptr);
  EXPECT_EQ(unsafe->pointer, "/name");
  EXPECT_FALSE(fs::exists(dataset.path().parent_path() / "escape.jsonl"));
  EXPECT_EQ(run.report->definitions.size(), 1u) << "the safe definition is still collected";
}

TEST(CollectSelection, SpreadsOverTheAxesAndCapsIdenticalAxes) {
  const Definition definition = [] {
    DiagnosticList ignored;
    JsonDocument document{"d.json", rmsnorm_definition(), {}, {}};
    return parse_definition(document, ignored);
  }();
  std::vector<Candidate> candidates;
  for (const int batch : {1, 2, 4, 8, 16, 16, 16}) {
    Candidate c;
    c.axes = {{"batch_size", batch}};
    c.fingerprint = fmt::format("{}-{}", batch, candidates.size());
    candidates.push_back(c);
  }
  SelectionPolicy policy;
  policy.max_workloads = 3;
  const Selection picked = select_workloads(definition, candidates, {}, policy);
  EXPECT_EQ(picked.axes_capped, 1u) << "a third batch 16";
  EXPECT_EQ(picked.selected, (std::vector<std::size_t>{0, 4, 2})) << "1, then 16, then 4";
  EXPECT_EQ(picked.not_selected, 3u);
  policy.max_workloads = 10;
  const Selection every = select_workloads(definition, candidates, {}, policy);
  EXPECT_EQ(every.selected, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  const Selection against =
      select_workloads(definition, candidates, {{{{"batch_size", 16}}, "x"}}, policy);
  EXPECT_EQ(against.axes_capped, 2u) << "the dataset's workload counts toward the cap";
}

TEST(CollectBlobPaths, BothFormsAreFoundAndNothingOutsideBlob) {
  TempDir dataset;
  const Definition definition = [] {
    DiagnosticList ignored;
    JsonDocument document{"d.json", rmsnorm_definition(), {}, {}};
    return parse_definition(document, ignored);
  }();
  dataset.write("blob/workloads/rmsnorm/rmsnorm_h8_a.safetensors", "x");            // flat
  dataset.write("blob/workloads/rmsnorm/rmsnorm_h8/rmsnorm_h8_b.safetensors", "x"); // nested
  const auto found = [&](std::string_view path) {
    const auto p = resolve_workload_blob(dataset.path(), definition, path);
    return p ? p->lexically_relative(dataset.path()).generic_string() : std::string("-");
  };
  EXPECT_EQ(found("./blob/workloads/rmsnorm/rmsnorm_h8_a.safetensors"),
            "blob/workloads/rmsnorm/rmsnorm_h8_a.safetensors");
  EXPECT_EQ(found("blob/workloads/rmsnorm/rmsnorm_h8/rmsnorm_h8_a.safetensors"),
            "blob/workloads/rmsnorm/rmsnorm_h8_a.safetensors");
  EXPECT_EQ(found("./blob/workloads/rmsnorm/rmsnorm_h8_b.safetensors"),
            "blob/workloads/rmsnorm/rmsnorm_h8/rmsnorm_h8_b.safetensors");
  EXPECT_EQ(found("./blob/../definitions/x.json"), "-");
  EXPECT_EQ(found("/etc/passwd"), "-");
  EXPECT_EQ(found("workloads/rmsnorm/rmsnorm_h8.jsonl"), "-");
}

} // namespace
} // namespace fib

namespace fib {
namespace {

TEST(Collect, BadBuffersDtypesAndScalarsRefuseTheCallWithTheirCode) {
  struct Case {
    std::string code;
    std::string pointer;
    std::function<void(Call& plan, Call& run)> spoil;
  };
  const std::vector<Case> cases = {
      {std::string(codes::k_collect_binding_invalid), "/inputs/kv_indices",
       [](Call& plan, Call&) {
         plan.inputs[0] = i32("arg_1", {0, 3, 50});
       }},
      {std::string(codes::k_collect_binding_invalid), "/inputs/kv_indptr",
       [](Call& plan, Call&) {
         plan.inputs[0] = i32("arg_1", {0, 3, 2});
       }},
      {std::string(codes::k_collect_dtype_mismatch), "/inputs/q",
       [](Call&, Call& run) { run.inputs[0].dtype = "F16"; }},
      {std::string(codes::k_collect_scalar_invalid), "/inputs/sm_scale",
       [](Call& plan, Call&) {
         plan.input_metadata["kwarg_sm_scale"] = {{"type", "torch.dtype"},
                                                  {"value", "torch.bfloat16"}};
       }},
  };
  for (const Case& c : cases) {
    TempDir dump;
    TempDir dataset;
    Call plan = decode_plan();
    Call run = decode_run();
    c.spoil(plan, run);
    write_call(dump, plan);
    write_call(dump, run);
    write_definition(dataset, decode_definition());
    const CollectRun result = collect(dump, dataset);
    EXPECT_EQ(only(result).rejected.count(c.code), 1u) << c.code << " " << c.pointer;
    const Diagnostic* refused = find_code(result.diagnostics, c.code);
    ASSERT_NE(refused, nullptr) << c.code;
    EXPECT_EQ(refused->pointer, c.pointer) << refused->message;
    EXPECT_FALSE(fs::exists(dataset.path() / "workloads")) << c.code;
  }
}

TEST(Collect, ATensorAboveTheBlobLimitIsGeneratedInstead) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_definition(dataset, decode_definition());
  const CollectRun run =
      collect(dump, dataset, [](CollectOptions& o) { o.candidates.max_blob_tensor_bytes = 10; });
  ASSERT_EQ(only(run).written.uuids.size(), 1u);
  EXPECT_EQ(only(run).notes, 2u) << "kv_indptr (12 bytes) and kv_indices (20); not 8 bytes";
  const Diagnostic* note = find_code(run.diagnostics, codes::k_collect_blob_too_large);
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->severity, Severity::warning);
  const auto lines =
      lines_of(dataset.path() / "workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1.jsonl");
  const Json& inputs = lines.at(0).at("workload").at("inputs");
  EXPECT_EQ(inputs.at("kv_indptr").at("type"), "random");
  EXPECT_EQ(inputs.at("kv_last_page_len").at("type"), "safetensors");
}

TEST(Collect, ADefinitionWithoutAnFiApiTagIsNamedWhenSelected) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4));
  Json untagged = rmsnorm_definition();
  untagged["tags"] = Json::array();
  write_definition(dataset, untagged);
  const CollectRun quiet = collect(dump, dataset);
  ASSERT_TRUE(quiet.report.has_value());
  EXPECT_EQ(find_code(quiet.diagnostics, codes::k_collect_no_api), nullptr);
  EXPECT_EQ(quiet.report->calls_unmatched, 1u);
  const CollectRun named =
      collect(dump, dataset, [](CollectOptions& o) { o.definitions = {"rmsnorm_h8"}; });
  const Diagnostic* no_api = find_code(named.diagnostics, codes::k_collect_no_api);
  ASSERT_NE(no_api, nullptr);
  EXPECT_EQ(no_api->pointer, "/tags");
}

} // namespace
} // namespace fib

namespace fib {
namespace {

TEST(Collect, EachReplayOfAGraphCaptureIsACallAndIdenticalReplaysAreDuplicates) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, decode_plan());
  Call captured = decode_run();
  captured.dir = "20260101_120000_106_pid4242_BatchDecodeWithPagedKVCacheWrapper.run_call0002";
  write_graph_call(dump, captured, 2);
  Call never = decode_run();
  never.dir = "20260101_120000_107_pid4242_BatchDecodeWithPagedKVCacheWrapper.run_call0003";
  write_graph_call(dump, never, 0);
  write_definition(dataset, decode_definition());
  const CollectRun run = collect(dump, dataset);
  const DefinitionCollection& d = only(run);
  EXPECT_EQ(d.calls, 2u) << "one call per flush; the pending capture is not a call";
  EXPECT_EQ(d.accepted, 2u) << "each flush is paired with the plan of its wrapper";
  EXPECT_EQ(d.written.selection.duplicates, 1u) << "a replay of the same shapes and buffers";
  EXPECT_EQ(d.written.uuids.size(), 1u);
  EXPECT_EQ(run.report->calls_rejected, 1u);
  EXPECT_NE(find_code(run.diagnostics, codes::k_collect_graph_pending), nullptr);
}

TEST(Collect, ContainersAndEnumsAreReadAsFlashInferRecordsThem) {
  TempDir dump;
  TempDir dataset;
  Call foo;
  foo.dir = "20260101_120000_001_pid4242_foo_call0001";
  foo.function = "foo";
  foo.module = "flashinfer.misc";
  foo.inputs = {i32("kwarg_xs__0", {1, 2}), i32("kwarg_xs__1", {3, 4}),
                i32("kwarg_d__value_0", {5, 6}), i32("arg_1", {7, 8, 9})};
  foo.input_metadata = {
      {"kwarg_d",
       {{"type", "dict"}, {"length", 1}, {"items", {{{"key", "a"}}}}, {"truncated", false}}},
      {"kwarg_d__key_0", "a"},
      {"arg_0", {{"type", "enum"}, {"name", "Mode.FAST"}, {"value", 1}}}};
  foo.outputs = {i32("result_0", {0})};
  foo.output_metadata = {{"result_1", 3}};
  foo.signature = "(mode: Mode, n: torch.Tensor, xs: List[torch.Tensor] = (), d: Dict[str, "
                  "torch.Tensor] = None) -> Tuple[torch.Tensor, int]";
  write_call(dump, foo);
  write_definition(dataset, Json::parse(R"({
    "name": "foo_k3", "op_type": "misc", "tags": ["fi_api:flashinfer.misc.foo"],
    "axes": {"k": {"type": "const", "value": 3}},
    "inputs": {"mode": {"shape": null, "dtype": "int32"},
               "n": {"shape": ["k"], "dtype": "int32"}},
    "outputs": {"out": {"shape": ["k"], "dtype": "int32"}},
    "reference": "def run(mode, n):\n    return n\n"})"));
  const CollectRun run = collect(dump, dataset);
  ASSERT_EQ(only(run).written.uuids.size(), 1u);
  const auto lines = lines_of(dataset.path() / "workloads/misc/foo_k3.jsonl");
  const Json& inputs = lines.at(0).at("workload").at("inputs");
  EXPECT_EQ(inputs.at("mode"), Json::parse(R"({"type": "scalar", "value": 1})"))
      << "an enum's value is what the kernel receives";
  const fs::path blob = dataset.path() / inputs.at("n").at("path").get<std::string>().substr(2);
  EXPECT_EQ(blob_i32(blob, "n"), (std::vector<std::int32_t>{7, 8, 9}));
}

TEST(Collect, AnExistingWorkloadInTheFlatBlobFormIsADuplicateToo) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_definition(dataset, decode_definition());
  ASSERT_EQ(only(collect(dump, dataset)).written.uuids.size(), 1u);
  // Rewrite the dataset as the Hugging Face files have it: the flat form, without "./".
  const fs::path file =
      dataset.path() / "workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1.jsonl";
  Json line = lines_of(file).at(0);
  const std::string nested = line["workload"]["inputs"]["kv_indptr"]["path"];
  const fs::path name = fs::path(nested).filename();
  const std::string flat = "blob/workloads/gqa_paged/" + name.string();
  fs::rename(dataset.path() / nested.substr(2), dataset.path() / flat);
  for (auto& [input, spec] : line["workload"]["inputs"].items()) {
    if (spec.contains("path")) {
      spec["path"] = flat;
    }
  }
  std::ofstream(file, std::ios::trunc) << line.dump() << "\n";
  const CollectRun again = collect(dump, dataset);
  EXPECT_EQ(only(again).written.selection.duplicates, 1u) << "the blob is read in the flat form";
  EXPECT_TRUE(only(again).written.uuids.empty());
}

} // namespace
} // namespace fib

namespace fib {
namespace {

TEST(Collect, AHostileJournalRemovesNothingButTheDefinitionsOwnUnlistedBlobs) {
  TempDir dump;
  TempDir dataset;
  write_decode_dump(dump);
  write_definition(dataset, decode_definition());
  const std::string dir = "blob/workloads/gqa_paged/gqa_paged_decode_h4_kv2_d16_ps1/";
  const std::string own = "gqa_paged_decode_h4_kv2_d16_ps1_0123456789abcdef0123456789abcdef";
  dataset.write(dir + own + ".safetensors", "orphan");
  dataset.write("victim.txt", "keep me");
  dataset.write("blob/workloads/gqa_paged/other_def/other_def_x.safetensors", "another's");
  const std::string escape = std::string("blob/..") + '\0' + "/victim.txt";
  dataset.write(
      dir + ".fib-collect-pending.json",
      Json{{"written",
            {dir + own + ".safetensors", escape,
             "blob/workloads/gqa_paged/other_def/other_def_x.safetensors"}},
           {"remove",
            {"../victim.txt", "blob/workloads/gqa_paged/other_def/other_def_x.safetensors"}}}
          .dump());
  const CollectRun run = collect(dump, dataset);
  EXPECT_EQ(only(run).written.uuids.size(), 1u);
  EXPECT_FALSE(fs::exists(dataset.path() / dir / (own + ".safetensors"))) << "its own orphan goes";
  EXPECT_TRUE(fs::exists(dataset.path() / "victim.txt"));
  EXPECT_TRUE(
      fs::exists(dataset.path() / "blob/workloads/gqa_paged/other_def/other_def_x.safetensors"));
}

TEST(Collect, ReplaceKeepsTheLinesOfOtherDefinitionsAndLinesItCannotRead) {
  TempDir dump;
  TempDir dataset;
  write_call(dump, rmsnorm_call(1, 4));
  write_definition(dataset, rmsnorm_definition());
  const fs::path file = dataset.path() / "workloads/rmsnorm/rmsnorm_h8.jsonl";
  const std::string foreign =
      R"({"definition": "rmsnorm_h16", "solution": null, "workload": {"uuid": "f", "axes": {"batch_size": 4}, "inputs": {}}, "evaluation": null})";
  const std::string mine =
      R"({"definition": "rmsnorm_h8", "solution": null, "workload": {"uuid": "m", "axes": {"batch_size": 9}, "inputs": {}}, "evaluation": null})";
  dataset.write("workloads/rmsnorm/rmsnorm_h8.jsonl", foreign + "\n" + mine + "\n{not json\n");
  const CollectRun run =
      collect(dump, dataset, [](CollectOptions& o) { o.write.replace = ReplaceMode::replace; });
  EXPECT_EQ(only(run).written.removed, 1u) << "only this definition's line is replaced";
  const std::string text = text_of(file);
  EXPECT_NE(text.find(foreign), std::string::npos);
  EXPECT_NE(text.find("{not json"), std::string::npos);
  EXPECT_EQ(text.find(R"("uuid": "m")"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3)
      << "the foreign line, the broken one and the new one";
}

TEST(Collect, AnIndptrThatIsNotAnIntegerTensorIsRefused) {
  TempDir dump;
  TempDir dataset;
  Call plan = decode_plan();
  plan.inputs[0] = {"arg_1", "F32", {3}, zeros(12)};
  write_call(dump, plan);
  write_call(dump, decode_run());
  write_definition(dataset, decode_definition());
  const CollectRun run = collect(dump, dataset);
  const Diagnostic* refused = find_code(run.diagnostics, codes::k_collect_binding_invalid);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->pointer, "/inputs/kv_indptr");
  EXPECT_NE(refused->message.find("not an integer tensor"), std::string::npos);
}

} // namespace
} // namespace fib
