"""TEST DOUBLE of ``flashinfer.gemm`` (not FlashInfer)."""

from .gemm_base import bmm_bf16, mm_bf16  # noqa: F401
