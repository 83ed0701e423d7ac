# TEST DOUBLE of flashinfer/trace/templates/_init_helpers.py (not FlashInfer).
# Never imported by the fakes: its text is inlined into every dumped "init"
# (dumper.md §4.1), like the real module.
"""Shared helpers used by ``TraceTemplate.init`` functions (fake, short version)."""

from typing import Tuple

import torch


def bf16_randn(*shape: int, scale: float = 1.0, device: str = "cuda") -> torch.Tensor:
    """``randn(*shape) * scale`` in bfloat16."""
    return (torch.randn(*shape, dtype=torch.float32, device=device) * scale).to(torch.bfloat16)


def col_major_weight(k: int, n: int, *, device: str = "cuda") -> torch.Tensor:
    """A ``[K, N]`` view of an ``[N, K]`` row-major bfloat16 weight (column-major B)."""
    return bf16_randn(n, k, scale=0.1, device=device).t()


__all__ = ["bf16_randn", "col_major_weight"]
