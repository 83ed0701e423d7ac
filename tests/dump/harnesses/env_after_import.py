"""fib dump test harness: FLASHINFER_TRACE_DUMP is removed after import, before
any traced call. The dumper reads it at every call (dumper.md §1.2), so nothing
is dumped."""
import os

import flashinfer
from flashinfer import tensor

os.environ.pop("FLASHINFER_TRACE_DUMP", None)
flashinfer.rmsnorm(tensor(8, 4096), tensor(4096))
flashinfer.gemm.mm_bf16(tensor(8, 4096), tensor(4096, 1024))
print("called 2 traced APIs with dumping switched off")
