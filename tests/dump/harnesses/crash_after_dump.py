"""fib dump test harness: one dump (rmsnorm_h4096), then SIGABRT (like a CUDA crash)."""
import os

import flashinfer
from flashinfer import tensor

flashinfer.rmsnorm(tensor(8, 4096), tensor(4096))
os.abort()
