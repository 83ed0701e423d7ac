"""TEST DOUBLE: built-in model configs for the fake SGLang Engine (not SGLang).

Keyed by the Hugging Face id passed as ``model_path``; a local directory holding a
Hugging Face ``config.json`` is read too. Anything else raises ``ValueError``
(the real SGLang would fail to download it on an offline machine as well).
"""

from __future__ import annotations

import json
import os

# Values from the public Hugging Face config.json files (subset).
MODEL_CONFIGS = {
    "meta-llama/Llama-3.2-3B-Instruct": dict(
        hidden_size=3072, intermediate_size=8192, num_attention_heads=24,
        num_key_value_heads=8, head_dim=128, num_hidden_layers=28, vocab_size=128256,
        torch_dtype="bfloat16"),
    "meta-llama/Llama-3.1-8B-Instruct": dict(
        hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
        num_key_value_heads=8, head_dim=128, num_hidden_layers=32, vocab_size=128256,
        torch_dtype="bfloat16"),
    "Qwen/Qwen2.5-0.5B-Instruct": dict(
        hidden_size=896, intermediate_size=4864, num_attention_heads=14,
        num_key_value_heads=2, head_dim=64, num_hidden_layers=24, vocab_size=151936,
        torch_dtype="bfloat16"),
    # Not a real model: tiny sizes for quick tests.
    "fake/tiny-llama": dict(
        hidden_size=256, intermediate_size=512, num_attention_heads=4,
        num_key_value_heads=2, head_dim=64, num_hidden_layers=2, vocab_size=1024,
        torch_dtype="bfloat16"),
}

_KEYS = ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
         "num_hidden_layers", "vocab_size")


def load_config(model_path: str) -> dict:
    if model_path in MODEL_CONFIGS:
        return dict(MODEL_CONFIGS[model_path])
    cfg_file = os.path.join(model_path, "config.json")
    if os.path.isfile(cfg_file):
        with open(cfg_file) as f:
            raw = json.load(f)
        missing = [k for k in _KEYS if k not in raw]
        if missing:
            raise ValueError(f"fake sglang: {cfg_file} lacks {', '.join(missing)}")
        cfg = {k: int(raw[k]) for k in _KEYS}
        cfg["head_dim"] = int(raw.get("head_dim") or raw["hidden_size"] // raw["num_attention_heads"])
        cfg["torch_dtype"] = str(raw.get("torch_dtype") or "bfloat16")
        return cfg
    known = ", ".join(sorted(MODEL_CONFIGS))
    raise ValueError(
        f"fake sglang: unknown model_path {model_path!r} (not a built-in id and no "
        f"config.json there); built-in ids: {known}")
