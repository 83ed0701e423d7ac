"""TEST DOUBLE of ``flashinfer/api_logging.py`` (``flashinfer_api``, ``_attach_fi_trace``).

Not FlashInfer. ``@flashinfer_api(trace=TEMPLATE)`` attaches ``.fi_trace`` to the
API and wraps it in the auto-dump wrapper described in dumper.md §1.1/§1.3:
at every call, if ``FLASHINFER_TRACE_DUMP`` is on, bind the call to the original
signature (defaults applied), build the definition, write it (unless deduped or no
DIR) and only then run the "kernel". Any exception while dumping becomes one
``warnings.warn`` per (fi_api, exception type) and the call proceeds. With
``FLASHINFER_LOGLEVEL>=10`` every decorated API is also logged with its tensors (level10.py).
"""

from __future__ import annotations

import functools
import inspect
import warnings

from . import level10
from .trace.template import _TRACE_REGISTRY, TraceTemplate, _dump_enabled, make_fi_trace

_WARNED = set()


def _fi_api_name(func) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def _attach_fi_trace(func, trace):
    fi_api = _fi_api_name(func)
    try:
        sig = inspect.signature(func)
        fi_trace = make_fi_trace(trace, fi_api, sig)
    except Exception as e:  # pragma: no cover - mirrors the real import-time warning
        warnings.warn(f"[flashinfer] Failed to attach fi_trace to '{func.__qualname__}': {e}")
        return func

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _dump_enabled():
            try:
                fi_trace(*args, _auto_dump=True, **kwargs)
            except Exception as e:
                key = (fi_api, type(e))
                if key not in _WARNED:
                    _WARNED.add(key)
                    warnings.warn(
                        f"[flashinfer] fi_trace auto-dump failed for '{fi_api}': "
                        f"{type(e).__name__}: {e}. Further occurrences of this error "
                        f"for this API will be suppressed."
                    )
        return level10.call(func, args, kwargs)

    wrapper.fi_trace = fi_trace
    templates = [trace] if isinstance(trace, TraceTemplate) else list(getattr(trace, "templates", []))
    for t in templates:
        _TRACE_REGISTRY.append((func, t, fi_api))
    return wrapper


def flashinfer_api(func=None, *, trace=None):
    """``@flashinfer_api`` or ``@flashinfer_api(trace=TEMPLATE)``."""

    def deco(f):
        if trace is None:
            if not level10.enabled():
                return f

            @functools.wraps(f)
            def logged(*args, **kwargs):
                return level10.call(f, args, kwargs)

            return logged
        return _attach_fi_trace(f, trace)

    if func is not None:
        return deco(func)
    return deco
