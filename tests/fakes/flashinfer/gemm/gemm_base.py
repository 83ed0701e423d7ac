"""TEST DOUBLE of ``flashinfer.gemm.gemm_base`` (not FlashInfer; shape-only kernels)."""

from __future__ import annotations

from ..api_logging import flashinfer_api
from ..fake_tensor import Tensor
from ..trace.templates.gemm import BMM_BF16_TEMPLATE, MM_BF16_TEMPLATE


@flashinfer_api(trace=MM_BF16_TEMPLATE)
def mm_bf16(a, b, out=None, out_dtype="bfloat16", backend="auto"):
    """C[M, N] = a[M, K] @ b[K, N] (b column-major)."""
    if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm_bf16: incompatible shapes {a.shape} @ {b.shape}")
    return out if out is not None else Tensor((a.shape[0], b.shape[1]), out_dtype)


@flashinfer_api(trace=BMM_BF16_TEMPLATE)
def bmm_bf16(A, B, out=None):
    """C[b, M, N] = A[b, M, K] @ B[b, K, N]."""
    if len(A.shape) != 3 or len(B.shape) != 3 or A.shape[0] != B.shape[0] or A.shape[2] != B.shape[1]:
        raise ValueError(f"bmm_bf16: incompatible shapes {A.shape} @ {B.shape}")
    return out if out is not None else Tensor((A.shape[0], A.shape[1], B.shape[2]), A.dtype)
