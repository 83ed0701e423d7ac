"""TEST DOUBLE: the default ``check`` every FlashInfer template carries since v3
(dumper.md §1.7/§1.8). Only its source text is dumped; it is never run here."""

from __future__ import annotations

from typing import Any, Optional


def standard_check(
    reference_outputs: Any,
    actual_outputs: Any,
    *,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    max_mismatch_pct: float = 0.0,
    min_cos_sim: Optional[float] = 1.0 - 1e-3,
) -> bool:
    """Default trace correctness check used when a template does not override it."""
    from flashinfer.trace import default_check

    return default_check(
        reference_outputs,
        actual_outputs,
        rtol=rtol,
        atol=atol,
        max_mismatch_pct=max_mismatch_pct,
        min_cos_sim=min_cos_sim,
    )
