"""TEST DOUBLE of ``flashinfer.trace`` (see tests/fakes/README.md). Not FlashInfer."""

import os as _os

from .default_check import default_check  # noqa: F401  (the dumped check source imports it)
from .template import _DUMPED_NAMES, _TRACE_REGISTRY, Const, Scalar, Tensor, TraceTemplate, Var  # noqa: F401

# Import-time snapshots, exported like the real package; NOT what the dumper uses (§1.2).
_TRACE_DUMP_DIR = _os.environ.get("FLASHINFER_TRACE_DUMP_DIR")
_TRACE_DUMP_ENABLED = _os.environ.get("FLASHINFER_TRACE_DUMP", "") not in ("", "0")
