"""TEST DOUBLE: norm templates modelled on flashinfer/trace/templates/norm.py.

Not FlashInfer. The reference/init functions below are never executed; the
dumper copies their source (``inspect.getsource``) into the JSON, so they must be
correct torch code. ``torch`` here is a stub that only provides ``no_grad``.
"""

from flashinfer.trace import _torch_stub as torch
from flashinfer.trace.template import Const, Tensor, TraceTemplate, Var


@torch.no_grad()
def _rmsnorm_reference(hidden_states, weight):
    """Root Mean Square Normalization. Epsilon is fixed at 1e-6."""
    EPS = 1e-6
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
    y = (x * inv_rms) * weight.to(torch.float32)
    return y.to(hidden_states.dtype)


def _rmsnorm_init(
    *,
    batch_size: int,
    hidden_size: int = 4096,
    device: str = "cuda",
    seed: int = 0,
):
    """Build inputs for ``flashinfer.rmsnorm`` (keys are API parameter names)."""
    torch.manual_seed(seed)
    return {
        "input": bf16_randn(batch_size, hidden_size, device=device),
        "weight": bf16_randn(hidden_size, device=device),
    }


@torch.no_grad()
def _fused_add_rmsnorm_reference(hidden_states, residual, weight):
    """Fused Add + RMSNorm. Epsilon is fixed at 1e-6."""
    EPS = 1e-6
    x = hidden_states.to(torch.float32) + residual.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
    y = (x * inv_rms) * weight.to(torch.float32)
    return y.to(hidden_states.dtype)


def _fused_add_rmsnorm_init(
    *,
    batch_size: int,
    hidden_size: int = 4096,
    device: str = "cuda",
    seed: int = 0,
):
    """Build inputs for ``flashinfer.fused_add_rmsnorm``."""
    torch.manual_seed(seed)
    return {
        "input": bf16_randn(batch_size, hidden_size, device=device),
        "residual": bf16_randn(batch_size, hidden_size, device=device),
        "weight": bf16_randn(hidden_size, device=device),
    }


@torch.no_grad()
def _gemma_rmsnorm_reference(hidden_states, weight):
    """Gemma-style RMSNorm: y = x / rms(x) * (1 + weight). Epsilon is fixed at 1e-6."""
    EPS = 1e-6
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
    y = (x * inv_rms) * (1.0 + weight.to(torch.float32))
    return y.to(hidden_states.dtype)


_AXES = {
    "batch_size": Var(description="Number of tokens (rows)."),
    "hidden_size": Const(abbrev="h", description="Hidden dimension."),
}

RMSNORM_TEMPLATE = TraceTemplate(
    op_type="rmsnorm",
    name_prefix="rmsnorm",
    description="Root Mean Square Normalization. Epsilon is fixed at 1e-6.",
    axes=_AXES,
    inputs={
        "hidden_states": Tensor(["batch_size", "hidden_size"], param="input",
                                description="Input activations."),
        "weight": Tensor(["hidden_size"], description="Per-channel scale."),
    },
    outputs={
        "output": Tensor(["batch_size", "hidden_size"], param="out",
                         description="Normalized activations."),
    },
    tags=["status:verified"],
    reference=_rmsnorm_reference,
    init=_rmsnorm_init,
)

FUSED_ADD_RMSNORM_TEMPLATE = TraceTemplate(
    op_type="rmsnorm",
    name_prefix="fused_add_rmsnorm",
    description="Fused Add + RMSNorm. Epsilon is fixed at 1e-6.",
    axes=_AXES,
    inputs={
        "hidden_states": Tensor(["batch_size", "hidden_size"], param="input",
                                description="Input activations (overwritten with the output)."),
        "residual": Tensor(["batch_size", "hidden_size"],
                           description="Residual stream (updated in place)."),
        "weight": Tensor(["hidden_size"], description="Per-channel scale."),
    },
    outputs={
        # In place, like the real template: 'output' is written into the API's
        # `input`, 'residual' shares its name with an input (dumper.md §2 row 14/15).
        "output": Tensor(["batch_size", "hidden_size"], param="input",
                         description="Normalized activations."),
        "residual": Tensor(["batch_size", "hidden_size"], param="residual",
                           description="Updated residual (in-place: residual += hidden_states)."),
    },
    tags=["status:verified", "fused"],
    reference=_fused_add_rmsnorm_reference,
    init=_fused_add_rmsnorm_init,
)

GEMMA_RMSNORM_TEMPLATE = TraceTemplate(
    op_type="rmsnorm",
    name_prefix="gemma_rmsnorm",
    description="Gemma RMSNorm (weight offset by 1). Epsilon is fixed at 1e-6.",
    axes=_AXES,
    inputs={
        "hidden_states": Tensor(["batch_size", "hidden_size"], param="input",
                                description="Input activations."),
        "weight": Tensor(["hidden_size"], description="Per-channel scale minus one."),
    },
    outputs={
        "output": Tensor(["batch_size", "hidden_size"], param="out",
                         description="Normalized activations."),
    },
    tags=["status:verified"],
    reference=_gemma_rmsnorm_reference,
    # no init: like the 23 real dumps without one (dumper.md §4.1)
)
