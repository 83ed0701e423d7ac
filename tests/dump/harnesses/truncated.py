"""fib dump test harness: one good dump (rmsnorm_h4096), then a half-written JSON
document broken_h1.json, as a writer killed mid-write would leave it (the real
dumper's write is not atomic, dumper.md §1.3)."""
import json
import os

import flashinfer
from flashinfer import tensor

flashinfer.rmsnorm(tensor(8, 4096), tensor(4096))
out_dir = os.environ["FLASHINFER_TRACE_DUMP_DIR"]
good = json.loads(open(os.path.join(out_dir, "rmsnorm_h4096.json")).read())
good["name"] = "broken_h1"
text = json.dumps(good, indent=2)
with open(os.path.join(out_dir, "broken_h1.json"), "w") as f:
    f.write(text[: len(text) // 2])
