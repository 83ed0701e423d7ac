"""TEST DOUBLE of FlashInfer's Level-10 API logging (``FLASHINFER_LOGLEVEL>=10``): the tensor
dumps ``fib collect`` reads. Not FlashInfer. It reproduces the on-disk format (workloads.md §1):

- the variables are read **once, at import** (``FLASHINFER_LOGLEVEL``, ``FLASHINFER_DUMP_DIR``,
  ``FLASHINFER_DUMP_SAFETENSORS`` (exactly "1"), ``FLASHINFER_DUMP_INCLUDE`` / ``_EXCLUDE``
  (fnmatch on the logged name), ``FLASHINFER_DUMP_MAX_COUNT``);
- one directory per call, ``<YYYYmmdd_HHMMSS_mmm>_pid<pid>_<name>_call<NNNN>``, with
  ``metadata.jsonl`` (line 1 ``inputs_saved`` before the call, line 2 ``completed`` after it),
  ``inputs.safetensors`` and ``outputs.safetensors`` (or ``.pt`` placeholders without
  ``FLASHINFER_DUMP_SAFETENSORS=1``), and every record appended to ``session.jsonl``;
- positional arguments are ``arg_<i>``, keyword ones ``kwarg_<name>``; tensors go to the tensor
  file (zeros: fake tensors have no data), everything else to ``input_metadata``.
"""

from __future__ import annotations

import fnmatch
import inspect
import json
import os
import struct
import time

from .fake_tensor import Tensor

_LEVEL = int(os.environ.get("FLASHINFER_LOGLEVEL", "0"))
_DIR = os.environ.get("FLASHINFER_DUMP_DIR", "flashinfer_dumps")
_SAFETENSORS = os.environ.get("FLASHINFER_DUMP_SAFETENSORS", "0") == "1"
_INCLUDE = [p.strip() for p in os.environ.get("FLASHINFER_DUMP_INCLUDE", "").split(",") if p.strip()]
_EXCLUDE = [p.strip() for p in os.environ.get("FLASHINFER_DUMP_EXCLUDE", "").split(",") if p.strip()]
_MAX_COUNT = int(os.environ.get("FLASHINFER_DUMP_MAX_COUNT", "1000"))
_COUNTERS = {}
_DUMPED = [0]

_CODES = {"float32": ("F32", 4), "float16": ("F16", 2), "bfloat16": ("BF16", 2),
          "float64": ("F64", 8), "int64": ("I64", 8), "int32": ("I32", 4), "int16": ("I16", 2),
          "int8": ("I8", 1), "uint8": ("U8", 1), "bool": ("BOOL", 1),
          "float8_e4m3fn": ("F8_E4M3", 1), "float8_e5m2": ("F8_E5M2", 1)}


def enabled() -> bool:
    return _LEVEL >= 10


def _safetensors(tensors):
    header, data = {}, b""
    for key in sorted(tensors):
        code, width = _CODES[tensors[key].dtype]
        raw = b"\0" * (width * tensors[key].numel())
        header[key] = {"dtype": code, "shape": list(tensors[key].shape),
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def _split(value, key, tensors, depth=0):
    """The metadata of `value`; tensors (nested ones under `key__<i>`) go to `tensors`."""
    if isinstance(value, Tensor):
        tensors[key] = value
        return {"type": "torch.Tensor", "shape": list(value.shape),
                "dtype": "torch." + value.dtype, "device": "cuda:0", "tensor_key": key}
    if isinstance(value, (list, tuple)):
        items = [_split(v, f"{key}__{i}", tensors, depth + 1) for i, v in enumerate(value)]
        return {"type": type(value).__name__, "length": len(value), "items": items,
                "truncated": False}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {"type": type(value).__name__, "repr": str(value)[:1000]}


def _name(func, args) -> str:
    if args and "Wrapper" in type(args[0]).__name__:
        return f"{type(args[0]).__name__}.{func.__name__}"
    return func.__name__


def _wanted(name: str) -> bool:
    if _INCLUDE and not any(fnmatch.fnmatch(name, p) for p in _INCLUDE):
        return False
    return not any(fnmatch.fnmatch(name, p) for p in _EXCLUDE)


def _append(path, record):
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def call(func, args, kwargs):
    """Runs func(*args, **kwargs), dumping it first when Level-10 logging is on."""
    name = _name(func, args)
    if not enabled() or not _wanted(name) or _DUMPED[0] >= _MAX_COUNT:
        return func(*args, **kwargs)
    _COUNTERS[name] = _COUNTERS.get(name, 0) + 1
    now = time.time()
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(now)) + "_%03d" % int(now % 1 * 1000)
    folder = os.path.join(_DIR, f"{stamp}_pid{os.getpid()}_{name}_call{_COUNTERS[name]:04d}")
    os.makedirs(folder, exist_ok=True)
    tensors, metadata = {}, {}
    for i, value in enumerate(args):
        meta = _split(value, f"arg_{i}", tensors)
        if not isinstance(value, Tensor):
            metadata[f"arg_{i}"] = meta
    for key, value in kwargs.items():
        meta = _split(value, f"kwarg_{key}", tensors)
        if not isinstance(value, Tensor):
            metadata[f"kwarg_{key}"] = meta
    extension = "safetensors" if _SAFETENSORS else "pt"
    if tensors:
        with open(os.path.join(folder, f"inputs.{extension}"), "wb") as f:
            f.write(_safetensors(tensors) if _SAFETENSORS else b"PK\x03\x04 fake torch.save")
    self_id = id(args[0]) if args and "Wrapper" in type(args[0]).__name__ else None
    record = {"function_name": name, "module": func.__module__,
              "call_sequence": _COUNTERS[name], "timestamp": stamp, "process_id": os.getpid(),
              "input_metadata": metadata, "output_metadata": {},
              "tensor_info": {"input_tensor_keys": list(tensors), "output_tensor_keys": []},
              "tensor_details": {}, "tensor_format": "safetensors" if _SAFETENSORS else "torch",
              "function_signature": str(inspect.signature(func)),
              "versions": {"torch": "<fake>", "python": "<fake>", "flashinfer": "0.0.0+fake"},
              "execution_status": "inputs_saved", "graph_capture": False}
    if self_id is not None:
        record["self_id"] = self_id
    _append(os.path.join(folder, "metadata.jsonl"), record)
    _append(os.path.join(_DIR, "session.jsonl"), record)
    _DUMPED[0] += 1
    result = func(*args, **kwargs)
    outputs = {}
    output_meta = {"result": _split(result, "result", outputs)} if not isinstance(result, Tensor) \
        else (_split(result, "result", outputs) and {})
    if outputs:
        with open(os.path.join(folder, f"outputs.{extension}"), "wb") as f:
            f.write(_safetensors(outputs) if _SAFETENSORS else b"PK\x03\x04 fake torch.save")
    record = {**record, "output_metadata": output_meta, "execution_status": "completed",
              "tensor_info": {"input_tensor_keys": list(tensors),
                              "output_tensor_keys": list(outputs)}}
    _append(os.path.join(folder, "metadata.jsonl"), record)
    _append(os.path.join(_DIR, "session.jsonl"), record)
    return result
