"""TEST DOUBLE of FlashInfer - NOT FlashInfer.

A pure-Python, standard-library-only stand-in that reproduces FlashInfer's trace
dumper (``FLASHINFER_TRACE_DUMP`` / ``FLASHINFER_TRACE_DUMP_DIR``) for a handful of
APIs, so that ``fib dump`` can be tested without a GPU, torch or FlashInfer.
See tests/fakes/README.md.
"""

from . import gemm, norm  # noqa: F401
from .fake_tensor import Tensor, tensor  # noqa: F401
from .gemm import bmm_bf16, mm_bf16  # noqa: F401
from .norm import fused_add_rmsnorm, gemma_rmsnorm, rmsnorm  # noqa: F401

__version__ = "0.0.0+fake"
IS_FAKE = True
