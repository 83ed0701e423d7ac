"""TEST DOUBLE of ``flashinfer.norm``: traced APIs whose "kernels" only compute
output shapes (fake tensors). Not FlashInfer; needs no GPU and no torch."""

from __future__ import annotations

from .api_logging import flashinfer_api
from .fake_tensor import Tensor
from .trace.templates.norm import (
    FUSED_ADD_RMSNORM_TEMPLATE,
    GEMMA_RMSNORM_TEMPLATE,
    RMSNORM_TEMPLATE,
)


def _check_norm(input, weight):
    if input.shape[-1:] != weight.shape:
        raise ValueError(f"rmsnorm: weight {weight.shape} does not match input {input.shape}")


@flashinfer_api(trace=RMSNORM_TEMPLATE)
def rmsnorm(input, weight, eps=1e-6, enable_pdl=None, out=None):
    """out = input / rms(input) * weight."""
    _check_norm(input, weight)  # runs after the dump, like a kernel failure would
    return out if out is not None else Tensor(input.shape, input.dtype)


@flashinfer_api(trace=FUSED_ADD_RMSNORM_TEMPLATE)
def fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    """In place: residual += input; input = rmsnorm(residual) * weight. Returns None."""
    _check_norm(input, weight)
    if residual.shape != input.shape:
        raise ValueError(f"fused_add_rmsnorm: residual {residual.shape} != input {input.shape}")
    return None


@flashinfer_api(trace=GEMMA_RMSNORM_TEMPLATE)
def gemma_rmsnorm(input, weight, eps=1e-6, enable_pdl=None, out=None):
    """Gemma RMSNorm. The fake implements it by calling the *traced* ``rmsnorm``
    with ``1 + weight``, so one call dumps two definitions (nested traced call,
    dumper.md §1.3: gemma_rmsnorm_h<H> first, then rmsnorm_h<H>)."""
    one_plus_weight = Tensor(weight.shape, weight.dtype)
    return rmsnorm(input, one_plus_weight, eps=eps, enable_pdl=enable_pdl, out=out)
