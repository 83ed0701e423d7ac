"""fib dump --workloads test harness (uses the FlashInfer TEST DOUBLE from tests/fakes).

Traces rmsnorm at hidden size 4096 with batch sizes 1, 4, 4 (a duplicate) and 16, and once at
2048: the trace dumper writes rmsnorm_h4096 and rmsnorm_h2048, the Level-10 logging five calls.
"""
import os

import flashinfer
from flashinfer import tensor

assert os.environ.get("FLASHINFER_LOGLEVEL") == "10", "fib dump --workloads sets the level"
assert os.environ.get("FLASHINFER_DUMP_SAFETENSORS") == "1"
w = tensor(4096)
for batch in (1, 4, 4, 16):
    flashinfer.rmsnorm(tensor(batch, 4096), w, 1e-5)
flashinfer.rmsnorm(tensor(2, 2048), tensor(2048))  # eps not passed: the default is not dumped
print("ok: 5 traced calls")
