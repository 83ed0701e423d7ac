"""fib dump test harness: one dump (rmsnorm_h4096), then exit status 3."""
import sys

import flashinfer
from flashinfer import tensor

flashinfer.rmsnorm(tensor(8, 4096), tensor(4096))
print("error: something failed after the dump", file=sys.stderr)
sys.exit(3)
