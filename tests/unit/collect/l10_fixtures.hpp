#pragma once
// Level-10 dumps written the way FlashInfer writes them (safetensors mode), and the definitions
// they belong to: the fixtures F1–F9 of docs/collect.md's test plan, built in code so that every
// byte is the test's own.

#include "test_support.hpp"

#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib::l10 {

inline std::string i32_bytes(const std::vector<std::int32_t>& values) {
  std::string out;
  for (const std::int32_t v : values) {
    for (int i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * i)) & 0xff));
    }
  }
  return out;
}

inline std::string zeros(std::size_t bytes) {
  return std::string(bytes, '\0');
}

// A tensor of a call: int32 values, or zeros of a float dtype.
inline SafetensorsTensor i32(std::string key, const std::vector<std::int32_t>& values) {
  return {std::move(key), "I32", {static_cast<std::int64_t>(values.size())}, i32_bytes(values)};
}
inline SafetensorsTensor bf16(std::string key, std::vector<std::int64_t> shape) {
  std::size_t count = 1;
  for (const std::int64_t d : shape) {
    count *= static_cast<std::size_t>(d);
  }
  return {std::move(key), "BF16", std::move(shape), zeros(2 * count)};
}

inline std::string safetensors(const std::vector<SafetensorsTensor>& tensors) {
  auto bytes = encode_safetensors(tensors);
  EXPECT_TRUE(bytes.has_value()) << (bytes ? "" : bytes.error().message);
  return bytes ? *bytes : std::string();
}

// One call as FlashInfer logs it.
struct Call {
  std::string dir; // "<ts>_pid<pid>_<function>_call<NNNN>"
  std::string function;
  std::string module;
  std::string signature;
  int pid = 4242;
  int sequence = 1;
  std::optional<std::int64_t> self_id;
  Json input_metadata = Json::object();
  std::vector<SafetensorsTensor> inputs;
  std::vector<SafetensorsTensor> outputs;
  Json output_metadata = Json::object();
  bool completed = true;
};

inline std::vector<std::string> keys_of(const std::vector<SafetensorsTensor>& tensors) {
  std::vector<std::string> out;
  for (const SafetensorsTensor& t : tensors) {
    out.push_back(t.key);
  }
  return out;
}

// Writes `call` below `dump`: metadata.jsonl (line 1 `inputs_saved`, line 2 `completed` unless
// the call did not complete) and its tensor files.
inline void write_call(const testing::TempDir& dump, const Call& call) {
  Json r = Json::object();
  r["function_name"] = call.function;
  r["module"] = call.module;
  r["call_sequence"] = call.sequence;
  r["timestamp"] = call.dir.substr(0, 19);
  r["process_id"] = call.pid;
  r["input_metadata"] = call.input_metadata;
  r["output_metadata"] = Json::object();
  r["tensor_info"] = {{"input_tensor_keys", keys_of(call.inputs)},
                      {"output_tensor_keys", Json::array()},
                      {"input_size_bytes", 0},
                      {"input_size_mb", 0.0}};
  r["tensor_details"] = Json::object();
  r["tensor_format"] = "safetensors";
  r["function_signature"] = call.signature;
  r["versions"] = {{"torch", "2.9.0"}, {"python", "3.12.3"}, {"flashinfer", "0.6.12"}};
  r["execution_status"] = "inputs_saved";
  r["graph_capture"] = false;
  if (call.self_id) {
    r["self_id"] = *call.self_id;
  }
  std::string lines = r.dump() + "\n";
  if (call.completed) {
    r["output_metadata"] = call.output_metadata;
    r["tensor_info"]["output_tensor_keys"] = keys_of(call.outputs);
    r["execution_status"] = "completed";
    lines += r.dump() + "\n";
  }
  dump.write(call.dir + "/metadata.jsonl", lines);
  if (!call.inputs.empty()) {
    dump.write(call.dir + "/inputs.safetensors", safetensors(call.inputs));
  }
  if (call.completed && !call.outputs.empty()) {
    dump.write(call.dir + "/outputs.safetensors", safetensors(call.outputs));
  }
}

// `call` made during CUDA-graph capture and replayed `flushes` times: the root records (two pending
// lines, then an inputs_saved and a completed line per flush) and one graph_flushes/flush_<k>/
// snapshot per replay, with the call's tensors. With 0 flushes the capture stays pending.
inline void write_graph_call(const testing::TempDir& dump, const Call& call, int flushes) {
  Json pending = Json::object();
  pending["function_name"] = call.function;
  pending["module"] = call.module;
  pending["call_sequence"] = call.sequence;
  pending["timestamp"] = call.dir.substr(0, 19);
  pending["process_id"] = call.pid;
  pending["input_metadata"] = call.input_metadata;
  pending["output_metadata"] = Json::object();
  pending["tensor_info"] = {{"input_tensor_keys", keys_of(call.inputs)},
                            {"output_tensor_keys", keys_of(call.outputs)}};
  pending["tensor_details"] = Json::object();
  pending["tensor_format"] = "safetensors";
  pending["function_signature"] = call.signature;
  pending["versions"] = {{"torch", "2.9.0"}, {"python", "3.12.3"}, {"flashinfer", "0.6.12"}};
  pending["execution_status"] = "graph_capture_pending_flush";
  pending["graph_capture"] = true;
  if (call.self_id) {
    pending["self_id"] = *call.self_id;
  }
  std::string root = pending.dump() + "\n" + pending.dump() + "\n";
  for (int k = 1; k <= flushes; ++k) {
    const std::string snapshot = fmt::format("{}/graph_flushes/flush_{:04d}", call.dir, k);
    Json in = pending;
    in["execution_status"] = "inputs_saved";
    in["graph_capture_flushed"] = true;
    in["graph_capture_flush_index"] = k;
    in["graph_capture_snapshot_dir"] = snapshot;
    Json out = in;
    out["execution_status"] = "completed";
    root += in.dump() + "\n" + out.dump() + "\n";
    Json snapshot_out = out;
    snapshot_out["graph_capture_base_dump_dir"] = call.dir;
    dump.write(snapshot + "/metadata.jsonl", in.dump() + "\n" + snapshot_out.dump() + "\n");
    dump.write(snapshot + "/inputs.safetensors", safetensors(call.inputs));
    dump.write(snapshot + "/outputs.safetensors", safetensors(call.outputs));
  }
  dump.write(call.dir + "/metadata.jsonl", root);
}

inline constexpr std::string_view k_rmsnorm_signature =
    "(input: torch.Tensor, weight: torch.Tensor, eps: float = 1e-06, out: "
    "Optional[torch.Tensor] = None, enable_pdl: Optional[bool] = None) -> torch.Tensor";
inline constexpr std::string_view k_decode_plan_signature =
    "(self, indptr: torch.Tensor, indices: torch.Tensor, last_page_len: torch.Tensor, "
    "num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int, "
    "*deprecated_positional_args: Any, **kwargs: Any) -> None";
inline constexpr std::string_view k_decode_run_signature =
    "(self, q: torch.Tensor, paged_kv_cache: Union[torch.Tensor, Tuple[torch.Tensor, "
    "torch.Tensor]], *args, q_scale: Optional[float] = None, k_scale: Optional[float] = None, "
    "v_scale: Optional[float] = None, out: Optional[torch.Tensor] = None, lse: "
    "Optional[torch.Tensor] = None, return_lse: bool = False) -> torch.Tensor";
inline constexpr std::string_view k_prefill_plan_signature =
    "(self, qo_indptr: torch.Tensor, paged_kv_indptr: torch.Tensor, paged_kv_indices: "
    "torch.Tensor, paged_kv_last_page_len: torch.Tensor, num_qo_heads: int, num_kv_heads: int, "
    "head_dim_qk: int, page_size: int, **kwargs: Any) -> None";

// F1: rmsnorm(arg_0 [batch,8] bf16, arg_1 [8] bf16, eps) -> result.
inline Call rmsnorm_call(int sequence, int batch, bool eps_by_keyword = false, int hidden = 8) {
  Call c;
  c.dir = fmt::format("20260101_120000_{:03}_pid4242_rmsnorm_call{:04}", sequence, sequence);
  c.function = "rmsnorm";
  c.module = "flashinfer.norm";
  c.signature = std::string(k_rmsnorm_signature);
  c.sequence = sequence;
  c.inputs = {bf16("arg_0", {batch, hidden}), bf16("arg_1", {hidden})};
  c.input_metadata = eps_by_keyword ? Json{{"kwarg_eps", 1e-06}} : Json{{"arg_2", 1e-06}};
  c.outputs = {bf16("result", {batch, hidden})};
  return c;
}

inline Json rmsnorm_definition(int hidden = 8) {
  return Json::parse(fmt::format(R"({{
  "name": "rmsnorm_h{0}", "op_type": "rmsnorm", "tags": ["fi_api:flashinfer.norm.rmsnorm"],
  "axes": {{"batch_size": {{"type": "var"}}, "hidden_size": {{"type": "const", "value": {0}}}}},
  "inputs": {{
    "hidden_states": {{"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "weight": {{"shape": ["hidden_size"], "dtype": "bfloat16"}},
    "eps": {{"shape": null, "dtype": "float32"}}}},
  "outputs": {{"output": {{"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}}}},
  "reference": "import torch\ndef run(hidden_states, weight, eps):\n    return hidden_states\n"
}})",
                                 hidden));
}

inline constexpr std::int64_t k_decode_self = 140000000000001;

// F2: a decode wrapper's plan (indptr [0,3,5], an over-allocated indices buffer, last_page_len
// [1,1], sm_scale by keyword) and its run (q [2,heads,16], paged_kv_cache of 12 pages).
inline Call decode_plan(int pid = 4242, int qo_heads = 4, int kv_heads = 2, bool sm_scale = true) {
  Call c;
  c.dir = fmt::format("20260101_120000_100_pid{}_BatchDecodeWithPagedKVCacheWrapper.plan_call0001",
                      pid);
  c.function = "BatchDecodeWithPagedKVCacheWrapper.plan";
  c.module = "flashinfer.decode";
  c.signature = std::string(k_decode_plan_signature);
  c.pid = pid;
  c.self_id = k_decode_self;
  c.inputs = {i32("arg_1", {0, 3, 5}), i32("arg_2", {7, 2, 9, 4, 1, 0, 0, 0}),
              i32("arg_3", {1, 1})};
  c.input_metadata = {{"arg_0",
                       {{"type", "BatchDecodeWithPagedKVCacheWrapper"},
                        {"repr", "<flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper object at "
                                 "0x7f0000000001>"}}},
                      {"arg_4", qo_heads},
                      {"arg_5", kv_heads},
                      {"arg_6", 16},
                      {"arg_7", 1},
                      {"kwarg_data_type", {{"type", "torch.dtype"}, {"value", "torch.bfloat16"}}}};
  if (sm_scale) {
    c.input_metadata["kwarg_sm_scale"] = 0.25;
  }
  c.output_metadata = {{"result", nullptr}};
  return c;
}

inline Call decode_run(int pid = 4242, int qo_heads = 4, int kv_heads = 2) {
  Call c;
  c.dir =
      fmt::format("20260101_120000_105_pid{}_BatchDecodeWithPagedKVCacheWrapper.run_call0001", pid);
  c.function = "BatchDecodeWithPagedKVCacheWrapper.run";
  c.module = "flashinfer.decode";
  c.signature = std::string(k_decode_run_signature);
  c.pid = pid;
  c.self_id = k_decode_self;
  c.inputs = {bf16("arg_1", {2, qo_heads, 16}), bf16("arg_2__0", {12, 1, kv_heads, 16}),
              bf16("arg_2__1", {12, 1, kv_heads, 16})};
  const Json cache_meta = {
      {"type", "torch.Tensor"}, {"dtype", "torch.bfloat16"}, {"device", "cuda:0"}};
  Json k = cache_meta;
  k["tensor_key"] = "arg_2__0";
  Json v = cache_meta;
  v["tensor_key"] = "arg_2__1";
  c.input_metadata = {
      {"arg_0",
       {{"type", "BatchDecodeWithPagedKVCacheWrapper"},
        {"repr", "<flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper object at "
                 "0x7f0000000001>"}}},
      {"arg_2", {{"type", "tuple"}, {"length", 2}, {"items", {k, v}}, {"truncated", false}}},
      {"kwarg_q_scale", nullptr},
      {"kwarg_k_scale", nullptr},
      {"kwarg_v_scale", nullptr}};
  c.outputs = {bf16("result", {2, qo_heads, 16})};
  return c;
}

// F3's second wrapper: a prefill plan of another object, sorting between F2's plan and run.
inline Call prefill_plan() {
  Call c;
  c.dir = "20260101_120000_103_pid4242_BatchPrefillWithPagedKVCacheWrapper.plan_call0001";
  c.function = "BatchPrefillWithPagedKVCacheWrapper.plan";
  c.module = "flashinfer.prefill";
  c.signature = std::string(k_prefill_plan_signature);
  c.self_id = 140000000000002;
  c.inputs = {i32("arg_1", {0, 3, 7}), i32("arg_2", {0, 4, 9}),
              i32("arg_3", {0, 1, 2, 3, 4, 5, 6, 7, 8}), i32("arg_4", {1, 1})};
  c.input_metadata = {{"arg_5", 4}, {"arg_6", 2}, {"arg_7", 16}, {"arg_8", 1}};
  c.output_metadata = {{"result", nullptr}};
  return c;
}

inline Json
decode_definition(int qo_heads = 4, int kv_heads = 2,
                  std::string_view api = "flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper") {
  return Json::parse(fmt::format(R"({{
  "name": "gqa_paged_decode_h{0}_kv{1}_d16_ps1", "op_type": "gqa_paged",
  "tags": ["fi_api:{2}"],
  "axes": {{
    "batch_size": {{"type": "var"}},
    "num_qo_heads": {{"type": "const", "value": {0}}},
    "num_kv_heads": {{"type": "const", "value": {1}}},
    "head_dim": {{"type": "const", "value": 16}},
    "num_pages": {{"type": "var"}},
    "page_size": {{"type": "const", "value": 1}},
    "len_indptr": {{"type": "var"}},
    "num_kv_indices": {{"type": "var"}}}},
  "inputs": {{
    "q": {{"shape": ["batch_size", "num_qo_heads", "head_dim"], "dtype": "bfloat16"}},
    "k_cache": {{"shape": ["num_pages", "page_size", "num_kv_heads", "head_dim"], "dtype": "bfloat16"}},
    "v_cache": {{"shape": ["num_pages", "page_size", "num_kv_heads", "head_dim"], "dtype": "bfloat16"}},
    "kv_indptr": {{"shape": ["len_indptr"], "dtype": "int32"}},
    "kv_indices": {{"shape": ["num_kv_indices"], "dtype": "int32"}},
    "kv_last_page_len": {{"shape": ["batch_size"], "dtype": "int32"}},
    "sm_scale": {{"shape": null, "dtype": "float32"}}}},
  "outputs": {{"output": {{"shape": ["batch_size", "num_qo_heads", "head_dim"], "dtype": "bfloat16"}}}},
  "reference": "import torch\ndef run(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, sm_scale):\n    return q\n"
}})",
                                 qo_heads, kv_heads, api));
}

// Writes `definition` into the dataset at `dataset` as definitions/<op_type>/<name>.json.
inline void write_definition(const testing::TempDir& dataset, const Json& definition) {
  dataset.write(fmt::format("definitions/{}/{}.json", definition.at("op_type").get<std::string>(),
                            definition.at("name").get<std::string>()),
                definition.dump(2));
}

} // namespace fib::l10
