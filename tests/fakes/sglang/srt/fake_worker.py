"""TEST DOUBLE: what one tensor-parallel rank of the fake SGLang Engine "runs".

Not SGLang. With ``attention_backend="flashinfer"`` and CUDA graphs disabled, every
forward step calls the fake FlashInfer APIs on the Python path, so each call is
seen by the trace dumper (dumper.md §1.3). Per layer it calls what a Llama-style
decoder sends through FlashInfer in this fake: RMSNorm (first layer's input norm
and the final norm), fused add+RMSNorm, and bf16 GEMMs for the TP-sharded linear
layers (column-parallel N / row-parallel K divided by tp_size).

Run as ``python -m sglang.srt.fake_worker '<json>'`` for ranks of a tp_size > 1
engine (one process per rank, like the real scheduler processes; every rank
writes the same dump files: last writer wins, dumper.md §1.5).
"""

from __future__ import annotations

import json
import sys

# Layers actually stepped through per forward. All layers issue identical calls,
# so stepping through more only repeats deduplicated dumps.
MAX_LAYERS = 2


def gemm_shapes(cfg: dict, tp: int):
    """(name, N, K) of the per-rank linear layers."""
    h, inter = cfg["hidden_size"], cfg["intermediate_size"]
    nq, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    kv_per_rank = max(nkv // tp, 1)  # KV heads are replicated when tp > num_kv_heads
    return [
        ("qkv_proj", (nq // tp + 2 * kv_per_rank) * hd, h),  # column parallel
        ("o_proj", h, nq * hd // tp),                         # row parallel
        ("gate_up_proj", 2 * inter // tp, h),                 # column parallel
        ("down_proj", h, inter // tp),                        # row parallel
    ]


def run_forward(cfg: dict, tp: int, num_tokens_per_step) -> None:
    import flashinfer
    from flashinfer import tensor

    dt = cfg.get("torch_dtype", "bfloat16")
    h = cfg["hidden_size"]
    weights = {name: tensor(k, n, dtype=dt) for name, n, k in gemm_shapes(cfg, tp)}
    norm_w = tensor(h, dtype=dt)
    for tokens in num_tokens_per_step:
        x = tensor(tokens, h, dtype=dt)
        residual = tensor(tokens, h, dtype=dt)
        for layer in range(min(cfg["num_hidden_layers"], MAX_LAYERS)):
            if layer == 0:
                x = flashinfer.norm.rmsnorm(x, norm_w)
            else:
                flashinfer.norm.fused_add_rmsnorm(x, residual, norm_w)
            flashinfer.gemm.mm_bf16(x, weights["qkv_proj"])
            attn = tensor(tokens, cfg["num_attention_heads"] * cfg["head_dim"] // tp, dtype=dt)
            flashinfer.gemm.mm_bf16(attn, weights["o_proj"])
            flashinfer.norm.fused_add_rmsnorm(x, residual, norm_w)
            flashinfer.gemm.mm_bf16(x, weights["gate_up_proj"])
            act = tensor(tokens, cfg["intermediate_size"] // tp, dtype=dt)
            flashinfer.gemm.mm_bf16(act, weights["down_proj"])
        flashinfer.norm.fused_add_rmsnorm(x, residual, norm_w)  # final norm


def main(argv) -> int:
    job = json.loads(argv[1])
    run_forward(job["config"], job["tp_size"], job["steps"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
