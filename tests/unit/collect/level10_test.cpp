// The Level-10 dump reader on dumps written by the test in FlashInfer's format (safetensors mode):
// completed calls, wrapper methods, debris of crashed and killed processes, CUDA-graph flushes,
// torch-format dumps and hostile entries.
#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/level10.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fib {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// `count` little-endian int32 values 0, 1, 2, … (or `values` when given).
std::string i32_bytes(const std::vector<std::int32_t>& values) {
  std::string out;
  for (const std::int32_t v : values) {
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * i)) & 0xff));
    }
  }
  return out;
}

std::string zeros(std::size_t bytes) {
  return std::string(bytes, '\0');
}

std::string safetensors(const std::vector<SafetensorsTensor>& tensors) {
  auto bytes = encode_safetensors(tensors);
  EXPECT_TRUE(bytes.has_value()) << (bytes ? "" : bytes.error().message);
  return bytes ? *bytes : std::string();
}

// Line 1 of a call's metadata.jsonl, with every key FlashInfer writes.
Json first_record(std::string_view function, std::string_view module, int sequence, int pid,
                  const std::vector<std::string>& input_keys) {
  Json r = Json::object();
  r["function_name"] = function;
  r["module"] = module;
  r["call_sequence"] = sequence;
  r["timestamp"] = "20260101_120000_001";
  r["process_id"] = pid;
  r["input_metadata"] = Json::object();
  r["output_metadata"] = Json::object();
  r["tensor_info"] = {{"input_tensor_keys", input_keys},
                      {"output_tensor_keys", Json::array()},
                      {"input_size_bytes", 64},
                      {"input_size_mb", 0.0}};
  r["tensor_details"] = Json::object();
  r["tensor_format"] = "safetensors";
  r["function_signature"] = "(input: torch.Tensor, weight: torch.Tensor, eps: float = 1e-06)";
  r["versions"] = {{"torch", "2.9.0"}, {"python", "3.12.3"}, {"flashinfer", "0.6.12"}};
  r["execution_status"] = "inputs_saved";
  r["graph_capture"] = false;
  return r;
}

// Line 2: line 1 with the outputs and `completed`.
Json completed(Json record, const std::vector<std::string>& output_keys) {
  record["tensor_info"]["output_tensor_keys"] = output_keys;
  record["execution_status"] = "completed";
  return record;
}

std::string jsonl(const std::vector<Json>& records) {
  std::string out;
  for (const Json& r : records) {
    out += r.dump() + "\n";
  }
  return out;
}

// F1 of the fixtures: rmsnorm(arg_0 [4,8] bf16, arg_1 [8] bf16, eps=1e-06) -> result [4,8].
void write_rmsnorm_call(const TempDir& dump, const std::string& dir, int sequence) {
  Json line1 = first_record("rmsnorm", "flashinfer.norm", sequence, 4242, {"arg_0", "arg_1"});
  line1["input_metadata"] = {{"arg_2", 1e-06}};
  dump.write(dir + "/metadata.jsonl", jsonl({line1, completed(line1, {"result"})}));
  dump.write(dir + "/inputs.safetensors", safetensors({{"arg_0", "BF16", {4, 8}, zeros(64)},
                                                       {"arg_1", "BF16", {8}, zeros(16)}}));
  dump.write(dir + "/outputs.safetensors", safetensors({{"result", "BF16", {4, 8}, zeros(64)}}));
}

const RejectedCall* rejected(const Level10Dump& dump, std::string_view name) {
  for (const RejectedCall& r : dump.rejected) {
    if (r.name == name) {
      return &r;
    }
  }
  return nullptr;
}

TEST(Level10Dump, ACompletedCallHasItsRecordAndItsTensorHeaders) {
  TempDir dump;
  write_rmsnorm_call(dump, "20260101_120000_001_pid4242_rmsnorm_call0001", 1);
  dump.write("session.jsonl", "{}\n"); // not a call: ignored
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->calls.size(), 1u);
  EXPECT_TRUE(read->rejected.empty());
  const DumpedCall& call = read->calls[0];
  EXPECT_EQ(call.name, "20260101_120000_001_pid4242_rmsnorm_call0001");
  EXPECT_EQ(call.function_name, "rmsnorm");
  EXPECT_EQ(call.module, "flashinfer.norm");
  EXPECT_EQ(call.process_id, 4242);
  EXPECT_EQ(call.call_sequence, 1);
  EXPECT_EQ(call.timestamp, "20260101_120000_001");
  EXPECT_FALSE(call.self_id.has_value());
  EXPECT_FALSE(call.graph_flush_index.has_value());
  EXPECT_EQ(call.input_metadata.at("arg_2").get<double>(), 1e-06);
  EXPECT_EQ(call.input_tensor_keys, (std::vector<std::string>{"arg_0", "arg_1"}));
  EXPECT_EQ(call.output_tensor_keys, (std::vector<std::string>{"result"}));
  ASSERT_TRUE(call.inputs.has_value());
  EXPECT_EQ(call.inputs->header.tensors.at("arg_0").shape, (std::vector<std::int64_t>{4, 8}));
  EXPECT_EQ(call.inputs->header.tensors.at("arg_1").dtype, "BF16");
  ASSERT_TRUE(call.outputs.has_value());
  EXPECT_EQ(call.outputs->header.tensors.at("result").shape, (std::vector<std::int64_t>{4, 8}));
}

TEST(Level10Dump, AWrapperMethodKeepsItsSelfIdAndAPlanWithoutOutputsNeedsNoOutputsFile) {
  TempDir dump;
  const std::string plan =
      "20260101_120000_100_pid4242_BatchDecodeWithPagedKVCacheWrapper.plan_call0001";
  Json line1 = first_record("BatchDecodeWithPagedKVCacheWrapper.plan", "flashinfer.decode", 1, 4242,
                            {"arg_1", "arg_2", "arg_3"});
  line1["self_id"] = 140000000000001;
  line1["input_metadata"] = {{"arg_4", 4}, {"arg_5", 2}, {"kwarg_sm_scale", 0.25}};
  Json line2 = completed(line1, {});
  line2["output_metadata"] = {{"result", nullptr}};
  dump.write(plan + "/metadata.jsonl", jsonl({line1, line2}));
  dump.write(plan + "/inputs.safetensors",
             safetensors({{"arg_1", "I32", {3}, i32_bytes({0, 3, 5})},
                          {"arg_2", "I32", {8}, i32_bytes({7, 2, 9, 4, 1, 0, 0, 0})},
                          {"arg_3", "I32", {2}, i32_bytes({1, 1})}}));
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->calls.size(), 1u)
      << (read->rejected.empty() ? "" : read->rejected[0].reason.message);
  const DumpedCall& call = read->calls[0];
  EXPECT_EQ(call.function_name, "BatchDecodeWithPagedKVCacheWrapper.plan");
  EXPECT_EQ(call.self_id, "140000000000001");
  EXPECT_FALSE(call.outputs.has_value());
  EXPECT_TRUE(call.output_metadata.at("result").is_null());
  EXPECT_EQ(call.input_metadata.at("kwarg_sm_scale").get<double>(), 0.25);
  auto values = read_tensor_values(call.inputs->path, call.inputs->header, "arg_2", 100);
  ASSERT_TRUE(values.has_value());
  EXPECT_EQ(*values, (std::vector<double>{7, 2, 9, 4, 1, 0, 0, 0}));
}

TEST(Level10Dump, CrashedEmptyAndCutCallsAreRejectedWithTheirReason) {
  TempDir dump;
  write_rmsnorm_call(dump, "20260101_120000_001_pid4242_rmsnorm_call0001", 1);
  // call0002: the API raised (or the process died): line 1 only, no outputs.
  const std::string crashed = "20260101_120000_002_pid4242_rmsnorm_call0002";
  dump.write(crashed + "/metadata.jsonl",
             jsonl({first_record("rmsnorm", "flashinfer.norm", 2, 4242, {"arg_0"})}));
  dump.write(crashed + "/inputs.safetensors", safetensors({{"arg_0", "BF16", {4, 8}, zeros(64)}}));
  // call0003 is missing (a size-limit gap); call0004: the tensor write raised.
  fs::create_directories(dump.path() / "20260101_120000_004_pid4242_rmsnorm_call0004");
  // call0005: killed while appending line 2.
  const std::string cut = "20260101_120000_005_pid4242_rmsnorm_call0005";
  const Json line1 = first_record("rmsnorm", "flashinfer.norm", 5, 4242, {"arg_0"});
  const std::string line2 = completed(line1, {"result"}).dump();
  dump.write(cut + "/metadata.jsonl", jsonl({line1}) + line2.substr(0, line2.size() / 2));

  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->calls.size(), 1u);
  EXPECT_EQ(read->calls[0].call_sequence, 1);
  ASSERT_EQ(read->rejected.size(), 3u);

  const RejectedCall* c2 = rejected(*read, crashed);
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(c2->reason.code, codes::k_collect_call_incomplete);
  EXPECT_EQ(c2->reason.pointer, "/execution_status");
  EXPECT_EQ(c2->function_name, "rmsnorm");
  EXPECT_EQ(c2->reason.severity, Severity::warning);

  const RejectedCall* c4 = rejected(*read, "20260101_120000_004_pid4242_rmsnorm_call0004");
  ASSERT_NE(c4, nullptr);
  EXPECT_EQ(c4->reason.code, codes::k_collect_no_metadata);

  const RejectedCall* c5 = rejected(*read, cut);
  ASSERT_NE(c5, nullptr);
  EXPECT_EQ(c5->reason.code, codes::k_collect_metadata_cut);
  EXPECT_EQ(c5->reason.line, 2);
}

TEST(Level10Dump, AFlushedGraphCaptureGivesOneCallPerFlushAndAPendingOneNone) {
  TempDir dump;
  const std::string graph =
      "20260101_120001_000_pid4242_BatchDecodeWithPagedKVCacheWrapper.run_call0002";
  Json pending = first_record("BatchDecodeWithPagedKVCacheWrapper.run", "flashinfer.decode", 2,
                              4242, {"arg_1"});
  pending["graph_capture"] = true;
  pending["self_id"] = 140000000000001;
  pending["execution_status"] = "graph_capture_pending_flush";
  std::vector<Json> root_lines = {pending, pending};
  for (int k = 1; k <= 2; ++k) {
    const std::string snapshot = fmt::format("{}/graph_flushes/flush_{:04d}", graph, k);
    Json in = pending;
    in["execution_status"] = "inputs_saved";
    in["graph_capture_flushed"] = true;
    in["graph_capture_flush_index"] = k;
    Json out = completed(in, {"result"});
    root_lines.push_back(in);
    root_lines.push_back(out);
    Json snapshot_out = out;
    snapshot_out["graph_capture_base_dump_dir"] = graph;
    dump.write(snapshot + "/metadata.jsonl", jsonl({in, snapshot_out}));
    dump.write(snapshot + "/inputs.safetensors",
               safetensors({{"arg_1", "I32", {2}, i32_bytes({k, k})}}));
    dump.write(snapshot + "/outputs.safetensors",
               safetensors({{"result", "I32", {2}, i32_bytes({0, 0})}}));
  }
  dump.write(graph + "/metadata.jsonl", jsonl(root_lines));
  // A second capture, never replayed: two pending lines and no tensor files.
  const std::string never =
      "20260101_120002_000_pid4242_BatchDecodeWithPagedKVCacheWrapper.run_call0003";
  dump.write(never + "/metadata.jsonl", jsonl({pending, pending}));

  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->calls.size(), 2u)
      << (read->rejected.empty() ? "" : read->rejected[0].reason.message);
  for (int k = 1; k <= 2; ++k) {
    const DumpedCall& call = read->calls[static_cast<std::size_t>(k - 1)];
    EXPECT_EQ(call.name, fmt::format("{}/graph_flushes/flush_{:04d}", graph, k));
    EXPECT_EQ(call.graph_flush_index, k);
    EXPECT_EQ(call.self_id, "140000000000001");
    auto values = read_tensor_values(call.inputs->path, call.inputs->header, "arg_1", 10);
    ASSERT_TRUE(values.has_value());
    EXPECT_EQ(values->front(), k); // each flush its own replay's values
  }
  ASSERT_EQ(read->rejected.size(), 1u);
  EXPECT_EQ(read->rejected[0].name, never);
  EXPECT_EQ(read->rejected[0].reason.code, codes::k_collect_graph_pending);
}

TEST(Level10Dump, ATorchFormatDumpIsAnErrorThatSaysHowToDumpAgain) {
  TempDir dump;
  const std::string dir = "20260101_120000_001_pid4242_rmsnorm_call0001";
  Json line1 = first_record("rmsnorm", "flashinfer.norm", 1, 4242, {"arg_0"});
  line1["tensor_format"] = "torch";
  dump.write(dir + "/metadata.jsonl", jsonl({line1, completed(line1, {"result"})}));
  dump.write(dir + "/inputs.pt", "PK\x03\x04 not read");
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->calls.empty());
  ASSERT_EQ(read->rejected.size(), 1u);
  const Diagnostic& reason = read->rejected[0].reason;
  EXPECT_EQ(reason.code, codes::k_collect_torch_format);
  EXPECT_EQ(reason.severity, Severity::error);
  EXPECT_EQ(reason.pointer, "/tensor_format");
  EXPECT_NE(reason.message.find("FLASHINFER_DUMP_SAFETENSORS=1"), std::string::npos);
}

TEST(Level10Dump, TensorFilesThatAreMissingCutOrLackAKeyRejectTheCall) {
  TempDir dump;
  const auto call_dir = [&](int n) { return fmt::format("2026_pid1_rmsnorm_call{:04d}", n); };
  for (int n = 1; n <= 3; ++n) {
    const Json line1 = first_record("rmsnorm", "flashinfer.norm", n, 1, {"arg_0", "arg_1"});
    dump.write(call_dir(n) + "/metadata.jsonl", jsonl({line1, completed(line1, {})}));
  }
  // 1: no inputs file. 2: one listed key missing. 3: the file is cut (being written).
  dump.write(call_dir(2) + "/inputs.safetensors",
             safetensors({{"arg_0", "I32", {1}, i32_bytes({1})}}));
  const std::string whole =
      safetensors({{"arg_0", "I32", {1}, i32_bytes({1})}, {"arg_1", "I32", {1}, i32_bytes({2})}});
  dump.write(call_dir(3) + "/inputs.safetensors", whole.substr(0, whole.size() - 3));
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->calls.empty());
  ASSERT_EQ(read->rejected.size(), 3u);
  for (const RejectedCall& r : read->rejected) {
    EXPECT_EQ(r.reason.code, codes::k_collect_tensor_file) << r.name << ": " << r.reason.message;
    EXPECT_EQ(fs::path(r.reason.file).filename(), "inputs.safetensors") << r.name;
  }
  EXPECT_NE(rejected(*read, call_dir(2))->reason.message.find("\"arg_1\""), std::string::npos);
}

TEST(Level10Dump, RecordsWithWrongFieldsAreInvalidWithThePointer) {
  TempDir dump;
  Json bad_pid = completed(first_record("rmsnorm", "m", 1, 1, {}), {});
  bad_pid["process_id"] = "4242";
  dump.write("a_call0001/metadata.jsonl", jsonl({bad_pid}));
  Json no_info = completed(first_record("rmsnorm", "m", 1, 1, {}), {});
  no_info.erase("tensor_info");
  dump.write("b_call0001/metadata.jsonl", jsonl({no_info}));
  dump.write("c_call0001/metadata.jsonl", "{\"function_name\": \n"); // complete line, not JSON
  dump.write("d_call0001/metadata.jsonl", "");
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->calls.empty());
  ASSERT_EQ(read->rejected.size(), 4u);
  EXPECT_EQ(rejected(*read, "a_call0001")->reason.pointer, "/process_id");
  EXPECT_EQ(rejected(*read, "b_call0001")->reason.pointer, "/tensor_info");
  for (const RejectedCall& r : read->rejected) {
    EXPECT_EQ(r.reason.code, codes::k_collect_metadata_invalid) << r.name;
  }
}

TEST(Level10Dump, SymbolicLinksAreReportedAndNeverFollowed) {
  TempDir dump;
  TempDir elsewhere;
  write_rmsnorm_call(elsewhere, "call", 1);
  fs::create_directory_symlink(elsewhere.path() / "call", dump.path() / "linked_call0001");
  write_rmsnorm_call(dump, "real_call0002", 2);
  fs::remove(dump.path() / "real_call0002" / "inputs.safetensors");
  fs::create_symlink(elsewhere.path() / "call" / "inputs.safetensors",
                     dump.path() / "real_call0002" / "inputs.safetensors");
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->calls.empty());
  ASSERT_EQ(read->rejected.size(), 2u);
  EXPECT_EQ(rejected(*read, "linked_call0001")->reason.code, codes::k_collect_link_not_followed);
  EXPECT_EQ(rejected(*read, "real_call0002")->reason.code, codes::k_collect_link_not_followed);
}

TEST(Level10Dump, ACallDirectoryGivenAsTheRootIsReadAlone) {
  TempDir dump;
  write_rmsnorm_call(dump, "one", 7);
  auto read = read_level10_dump(dump.path() / "one");
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->calls.size(), 1u);
  EXPECT_EQ(read->calls[0].call_sequence, 7);
  EXPECT_EQ(read->calls[0].name, ".");
}

TEST(Level10Dump, ARootThatIsNoDumpIsAnError) {
  TempDir dump;
  for (const fs::path& root : {dump.path() / "missing", dump.path()}) {
    auto read = read_level10_dump(root);
    ASSERT_FALSE(read.has_value()) << root;
    EXPECT_EQ(read.error().code, codes::k_collect_not_a_dump);
  }
  const fs::path file = dump.write("file", "x");
  EXPECT_EQ(read_level10_dump(file).error().code, codes::k_collect_not_a_dump);
}

TEST(Level10Dump, AnOversizedMetadataFileIsRefusedUnread) {
  TempDir dump;
  dump.write("big_call0001/metadata.jsonl", std::string(k_max_call_metadata_bytes + 1, ' '));
  auto read = read_level10_dump(dump.path());
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->rejected.size(), 1u);
  EXPECT_EQ(read->rejected[0].reason.code, codes::k_collect_metadata_invalid);
  EXPECT_NE(read->rejected[0].reason.message.find("limit"), std::string::npos)
      << read->rejected[0].reason.message;
}

} // namespace
} // namespace fib
