"""TEST DOUBLE of ``flashinfer/fi_trace.py`` (module helper). Not FlashInfer.

``fi_trace(api, save_dir=..., **api_kwargs)`` builds (and, with a directory,
always writes - no dedup) the definition of one call, like ``api.fi_trace``.
The auto-dump machinery lives in ``flashinfer.api_logging`` and
``flashinfer.trace.template`` (dumper.md §1.1).
"""

from .trace.template import _DUMPED_NAMES, _TRACE_REGISTRY  # noqa: F401


def fi_trace(func, *args, save_dir=None, name=None, **kwargs):
    fn = getattr(func, "fi_trace", None)
    if fn is None:
        raise TypeError(f"{getattr(func, '__qualname__', func)!r} has no fi_trace template")
    return fn(*args, save_dir=save_dir, name=name, **kwargs)
