#!/usr/bin/env python3
"""Benchmark helper (not a test): two fib binaries, cold, alternating, on one dataset.

    python3 bench/ab_cold.py BEFORE_FIB AFTER_FIB DATASET ROUNDS

Each round runs both binaries (the order alternates between rounds) as
`fib validate --dataset DATASET --disable-gpu --outputs json --output-folder OUT --cache-dir EMPTY`
with a new output folder and a new, empty cache directory, so every run is cold. The first round
is a warm-up and is not counted. Prints, per binary, the median wall time (spawn to reap, with the
minimum and maximum) and the median CPU time of the run's processes (getrusage of the children).
"""
import os
import resource
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
    wall = {name: [] for name in binaries}
    cpu = {name: [] for name in binaries}
    for round_index in range(rounds + 1):
        order = list(binaries) if round_index % 2 == 0 else list(reversed(binaries))
        for name in order:
            with tempfile.TemporaryDirectory() as scratch:
                os.mkdir(os.path.join(scratch, "out"))
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run([binaries[name], "validate", "--dataset", dataset, "--disable-gpu",
                                "--outputs", "json", "--output-folder",
                                os.path.join(scratch, "out"), "--cache-dir",
                                os.path.join(scratch, "cache")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                elapsed = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if round_index > 0:
                    wall[name].append(elapsed * 1000)
                    cpu[name].append((after.ru_utime + after.ru_stime - before.ru_utime -
                                      before.ru_stime) * 1000)
    for name in binaries:
        print(f"{name}: wall median {statistics.median(wall[name]):,.0f} ms "
              f"({min(wall[name]):,.0f}-{max(wall[name]):,.0f}); "
              f"CPU median {statistics.median(cpu[name]):,.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
