"""TEST DOUBLE of ``sglang.srt.server_args.ServerArgs`` - NOT SGLang.

SGLang's ``Engine(**kwargs)`` builds a ``ServerArgs`` dataclass from its keyword arguments, so an
argument an SGLang version does not know is a ``TypeError``. This double has the fields the
harness ``fib dump --sglang`` generates (and a few of their neighbours), with made-up defaults.

``FAKE_SGLANG_WITHOUT_FIELDS`` (comma-separated field names) removes fields, to stand for an older
SGLang that lacks them: the generated harness must leave those arguments out and say so.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, List, Optional, Tuple

_FIELDS: List[Tuple[str, Any, Any]] = [
    ("model_path", str, ""),
    ("dtype", str, "auto"),
    ("trust_remote_code", bool, False),
    ("attention_backend", Optional[str], None),
    ("prefill_attention_backend", Optional[str], None),
    ("decode_attention_backend", Optional[str], None),
    ("sampling_backend", Optional[str], None),
    ("disable_cuda_graph", bool, False),
    ("disable_piecewise_cuda_graph", bool, False),
    ("disable_radix_cache", bool, False),
    ("enable_deterministic_inference", bool, False),
    ("mem_fraction_static", Optional[float], None),
    ("max_running_requests", Optional[int], None),
    ("tp_size", int, 1),
    ("ep_size", int, 1),
    ("page_size", Optional[int], None),
    ("quantization", Optional[str], None),
    ("cpu_offload_gb", int, 0),
    ("log_level", str, "info"),
]

_WITHOUT = {name for name in os.environ.get("FAKE_SGLANG_WITHOUT_FIELDS", "").split(",") if name}

ServerArgs = dataclasses.make_dataclass(
    "ServerArgs",
    [(name, kind, dataclasses.field(default=default))
     for name, kind, default in _FIELDS if name not in _WITHOUT],
)
