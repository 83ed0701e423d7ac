#!/usr/bin/env python3
"""Benchmark helper (not a test): two fib binaries, warm, alternating, on one dataset.

    python3 bench/ab_warm.py BEFORE_FIB AFTER_FIB DATASET ROUNDS

Both binaries share one new cache directory; each primes it with one unmeasured run (a build's
entries are its own: the cache key holds fib's build identity). Then each round runs both (the
order alternates between rounds) as
`fib validate --dataset DATASET --disable-gpu --outputs json --output-folder OUT --cache-dir CACHE`,
emptying the output folder after each run. Prints, per binary, the median wall time (spawn to
reap, with the minimum and maximum).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    binaries = {"before": argv[1], "after": argv[2]}
    dataset, rounds = argv[3], int(argv[4])
    cache = tempfile.mkdtemp(prefix="fib-ab-warm-cache-")
    out = tempfile.mkdtemp(prefix="fib-ab-warm-out-")

    def run(binary):
        start = time.perf_counter()
        subprocess.run([binary, "validate", "--dataset", dataset, "--disable-gpu", "--outputs",
                        "json", "--output-folder", out, "--cache-dir", cache],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        took = time.perf_counter() - start
        for name in os.listdir(out):
            os.unlink(os.path.join(out, name))
        return took

    try:
        for binary in binaries.values():
            run(binary)  # primes the cache with this build's entries
        wall = {name: [] for name in binaries}
        for round_index in range(rounds):
            order = list(binaries) if round_index % 2 == 0 else list(reversed(binaries))
            for name in order:
                wall[name].append(run(binaries[name]))
        for name, times in wall.items():
            print(f"{name}: warm median {statistics.median(times) * 1000:.1f} ms "
                  f"({min(times) * 1000:.1f}-{max(times) * 1000:.1f})")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
