"""TEST DOUBLE: GEMM templates modelled on flashinfer/trace/templates/gemm.py.

Not FlashInfer. Reference/init sources are dumped, never executed here.
"""

from flashinfer.trace import _torch_stub as torch
from flashinfer.trace.template import Const, Tensor, TraceTemplate, Var


def _mm_reference(A, B):
    # B is physically [K, N] (column-major weight), so C = A @ B.
    return torch.matmul(A, B)


def _mm_bf16_init(
    *,
    M: int,
    N: int = 4096,
    K: int = 4096,
    device: str = "cuda",
    seed: int = 0,
):
    """Build inputs for ``flashinfer.mm_bf16``."""
    torch.manual_seed(seed)
    return {
        "a": bf16_randn(M, K, scale=0.1, device=device),
        "b": col_major_weight(K, N, device=device),
    }


@torch.no_grad()
def _bmm_reference(A, B):
    """Batched C[i] = A[i] @ B[i]."""
    return torch.bmm(A.to(torch.float32), B.to(torch.float32)).to(A.dtype)


MM_BF16_TEMPLATE = TraceTemplate(
    op_type="gemm_bf16",
    name_prefix="gemm_bf16",
    description="General matrix multiply (GEMM) C = A @ B (B is column-major [K, N]).",
    axes={
        "M": Var(description="Number of rows of A (tokens)."),
        "N": Const(abbrev="N", description="Output features."),
        "K": Const(abbrev="K", description="Reduction dimension."),
    },
    inputs={
        "A": Tensor(["M", "K"], param="a", description="Activations."),
        "B": Tensor(["K", "N"], param="b",
                    description="Weight matrix in column-major layout (physical shape [K, N])."),
    },
    outputs={
        "C": Tensor(["M", "N"], param="out", description="Result."),
    },
    tags=["status:verified"],
    reference=_mm_reference,
    init=_mm_bf16_init,
)

# A const axis with abbrev="" (like the real MoE/rope templates, dumper.md §1.4):
# `batch` is emitted with its value but is not part of the name, so two calls that
# differ only in the batch count collide on one name (first call wins, §1.5).
BMM_BF16_TEMPLATE = TraceTemplate(
    op_type="gemm_bf16",
    name_prefix="bmm_bf16",
    description="Batched GEMM C[i] = A[i] @ B[i] in bfloat16.",
    axes={
        "batch": Const(abbrev="", description="Number of independent GEMMs (not in the name)."),
        "M": Var(description="Rows of each A."),
        "N": Const(abbrev="N", description="Output features."),
        "K": Const(abbrev="K", description="Reduction dimension."),
    },
    inputs={
        "A": Tensor(["batch", "M", "K"], description="Batched activations."),
        "B": Tensor(["batch", "K", "N"], description="Batched weights."),
    },
    outputs={
        "C": Tensor(["batch", "M", "N"], param="out", description="Batched result."),
    },
    tags=["status:verified"],
    reference=_bmm_reference,
)
