"""Level-10 dumps written the way FlashInfer writes them (safetensors mode), for the golden CLI
cases and the crash test of `fib collect`."""
import json
import os
import struct


def safetensors_bytes(tensors):
    """A safetensors file of {key: (dtype, shape, raw bytes)}, as the library writes it."""
    header, data = {}, b""
    for key in sorted(tensors):
        dtype, shape, raw = tensors[key]
        header[key] = {"dtype": dtype, "shape": shape,
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return len(text).to_bytes(8, "little") + text + data


def i32(*values):
    return ("I32", [len(values)], struct.pack(f"<{len(values)}i", *values))


def bf16(*shape):
    count = 1
    for d in shape:
        count *= d
    return ("BF16", list(shape), b"\0" * (2 * count))


def write_call(root, name, function, module, signature, inputs, metadata=None, pid=4242,
               self_id=None, completed=True, tensor_format="safetensors"):
    """A call directory: metadata.jsonl (inputs_saved, then completed) and inputs.safetensors."""
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    record = {"function_name": function, "module": module,
              "call_sequence": int(name.rsplit("call", 1)[1]), "timestamp": name[:19],
              "process_id": pid, "input_metadata": metadata or {}, "output_metadata": {},
              "tensor_info": {"input_tensor_keys": sorted(inputs), "output_tensor_keys": []},
              "tensor_details": {}, "tensor_format": tensor_format,
              "function_signature": signature,
              "versions": {"torch": "2.9.0", "python": "3.12.3", "flashinfer": "0.6.12"},
              "execution_status": "inputs_saved", "graph_capture": False}
    if self_id is not None:
        record["self_id"] = self_id
    lines = [json.dumps(record)]
    if completed:
        lines.append(json.dumps({**record, "execution_status": "completed"}))
    with open(os.path.join(folder, "metadata.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    if tensor_format == "torch":
        with open(os.path.join(folder, "inputs.pt"), "wb") as f:
            f.write(b"PK\x03\x04 not read")
        return
    with open(os.path.join(folder, "inputs.safetensors"), "wb") as f:
        f.write(safetensors_bytes(inputs))


DECODE_PLAN = ("(self, indptr: torch.Tensor, indices: torch.Tensor, last_page_len: torch.Tensor, "
               "num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int, "
               "*deprecated_positional_args: Any, **kwargs: Any) -> None")
DECODE_RUN = ("(self, q: torch.Tensor, paged_kv_cache: Union[torch.Tensor, Tuple[torch.Tensor, "
              "torch.Tensor]], *args, q_scale: Optional[float] = None) -> torch.Tensor")
PREFILL_PLAN = ("(self, qo_indptr: torch.Tensor, paged_kv_indptr: torch.Tensor, "
                "paged_kv_indices: torch.Tensor, paged_kv_last_page_len: torch.Tensor, "
                "num_qo_heads: int, num_kv_heads: int, head_dim_qk: int, page_size: int, "
                "**kwargs: Any) -> None")


def decode_pair(root, pid, qo_heads, kv_heads, self_id=140000000000001):
    wrapper = "BatchDecodeWithPagedKVCacheWrapper"
    me = {"type": wrapper, "repr": f"<flashinfer.decode.{wrapper} object at 0x7f0000000001>"}
    write_call(root, f"20260101_120000_100_pid{pid}_{wrapper}.plan_call0001", f"{wrapper}.plan",
               "flashinfer.decode", DECODE_PLAN,
               {"arg_1": i32(0, 3, 5), "arg_2": i32(7, 2, 9, 4, 1, 0, 0, 0),
                "arg_3": i32(1, 1)},
               {"arg_0": me, "arg_4": qo_heads, "arg_5": kv_heads, "arg_6": 16, "arg_7": 1,
                "kwarg_sm_scale": 0.25}, pid=pid, self_id=self_id)
    write_call(root, f"20260101_120000_105_pid{pid}_{wrapper}.run_call0001", f"{wrapper}.run",
               "flashinfer.decode", DECODE_RUN,
               {"arg_1": bf16(2, qo_heads, 16), "arg_2__0": bf16(12, 1, kv_heads, 16),
                "arg_2__1": bf16(12, 1, kv_heads, 16)},
               {"arg_0": me}, pid=pid, self_id=self_id)


def decode_definition(qo_heads, kv_heads):
    return {
        "name": f"gqa_paged_decode_h{qo_heads}_kv{kv_heads}_d16_ps1", "op_type": "gqa_paged",
        "description": "GQA paged decode.",
        "tags": ["fi_api:flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run"],
        "axes": {"batch_size": {"type": "var"},
                 "num_qo_heads": {"type": "const", "value": qo_heads},
                 "num_kv_heads": {"type": "const", "value": kv_heads},
                 "head_dim": {"type": "const", "value": 16}, "num_pages": {"type": "var"},
                 "page_size": {"type": "const", "value": 1}, "len_indptr": {"type": "var"},
                 "num_kv_indices": {"type": "var"}},
        "inputs": {
            "q": {"shape": ["batch_size", "num_qo_heads", "head_dim"], "dtype": "bfloat16"},
            "k_cache": {"shape": ["num_pages", "page_size", "num_kv_heads", "head_dim"],
                        "dtype": "bfloat16"},
            "v_cache": {"shape": ["num_pages", "page_size", "num_kv_heads", "head_dim"],
                        "dtype": "bfloat16"},
            "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
            "kv_indices": {"shape": ["num_kv_indices"], "dtype": "int32"},
            "kv_last_page_len": {"shape": ["batch_size"], "dtype": "int32"},
            "sm_scale": {"shape": None, "dtype": "float32"}},
        "outputs": {"output": {"shape": ["batch_size", "num_qo_heads", "head_dim"],
                               "dtype": "bfloat16"}},
        "reference": ("import torch\ndef run(q, k_cache, v_cache, kv_indptr, kv_indices, "
                      "kv_last_page_len, sm_scale):\n    return q\n")}


def write_definition(dataset, definition):
    path = os.path.join(dataset, "definitions", definition["op_type"], definition["name"] + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(definition, f, indent=2)
