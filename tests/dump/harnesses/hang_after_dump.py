"""fib dump test harness: one dump (rmsnorm_h4096), then hangs forever."""
import time

import flashinfer
from flashinfer import tensor

flashinfer.rmsnorm(tensor(8, 4096), tensor(4096))
print("dumped; now hanging", flush=True)
while True:
    time.sleep(3600)
