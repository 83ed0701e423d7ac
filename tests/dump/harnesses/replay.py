"""fib dump test harness: replays dumps the real FlashInfer dumper wrote earlier.

Copies every *.json file below the directory given as its argument into
$FLASHINFER_TRACE_DUMP_DIR (flat, byte for byte, as the dumper would have written
them), so that `fib dump --stage` can be tested on real dumps without FlashInfer.
Standard library only; imports no FlashInfer, fake or real.
"""
import os
import shutil
import sys

source = sys.argv[1]
target = os.environ["FLASHINFER_TRACE_DUMP_DIR"]
os.makedirs(target, exist_ok=True)
count = 0
for folder, _dirs, files in sorted(os.walk(source)):
    for name in sorted(files):
        if name.endswith(".json"):
            shutil.copyfile(os.path.join(folder, name), os.path.join(target, name))
            count += 1
print(f"replayed {count} dumps")
