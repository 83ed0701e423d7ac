"""fib dump test harness: one dump (rmsnorm_h4096), then exits 0 leaving a process behind in its
process group (a `sleep` it started and did not wait for). With FIB_LEFT_PID_FILE set, the
process id of that `sleep` is written there."""
import os
import subprocess

import flashinfer
from flashinfer import tensor

flashinfer.rmsnorm(tensor(8, 4096), tensor(4096))
left = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
if os.environ.get("FIB_LEFT_PID_FILE"):
    with open(os.environ["FIB_LEFT_PID_FILE"], "w", encoding="utf-8") as f:
        f.write(f"{left.pid}\n")
print("dumped; a child keeps running", flush=True)
