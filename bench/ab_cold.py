#!/usr/bin/env python3
"""Benchmark helper (not a test): two fib binaries, cold, alternating, on one dataset.

    python3 bench/ab_cold.py BEFORE_FIB AFTER_FIB DATASET ROUNDS

Each round runs both binaries (the order alternates between rounds) as
`fib validate --dataset DATASET --disable-gpu --outputs json --output-folder OUT --cache-dir EMPTY`
with a new output folder and a new, empty cache directory, so every run is cold. The first round
is a warm-up and is not counted. Prints, per binary, the median wall time (spawn to reap, with the
minimum and maximum) and the median CPU time of the run's processes (getrusage of the children).
bench/ab_warm.py does the same warm, with these helpers.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def arguments(argv, doc):
    """({"before": BEFORE_FIB, "after": AFTER_FIB}, DATASET, ROUNDS), or None after printing doc."""
    if len(argv) != 5:
        print(doc, file=sys.stderr)
        return None
    return {"before": argv[1], "after": argv[2]}, argv[3], int(argv[4])


def timed_validate(binary, dataset, out, cache):
    """Runs `fib validate --dataset` once; (wall ms, CPU ms of its processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([binary, "validate", "--dataset", dataset, "--disable-gpu", "--outputs", "json",
                    "--output-folder", out, "--cache-dir", cache],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed * 1000, (after.ru_utime + after.ru_stime - before.ru_utime -
                            before.ru_stime) * 1000


def alternate(binaries, rounds, run_one, label):
    """run_one(binary) -> (wall, cpu), for each binary in each round, the order alternating; the
    first round is a warm-up. Prints the medians."""
    wall = {name: [] for name in binaries}
    cpu = {name: [] for name in binaries}
    for round_index in range(rounds + 1):
        order = list(binaries) if round_index % 2 == 0 else list(reversed(binaries))
        for name in order:
            took, used = run_one(binaries[name])
            if round_index > 0:
                wall[name].append(took)
                cpu[name].append(used)
    for name in binaries:
        print(f"{name}: {label}wall median {statistics.median(wall[name]):,.1f} ms "
              f"({min(wall[name]):,.1f}-{max(wall[name]):,.1f}); "
              f"CPU median {statistics.median(cpu[name]):,.1f} ms")


def main(argv):
    parsed = arguments(argv, __doc__)
    if parsed is None:
        return 2
    binaries, dataset, rounds = parsed

    def cold(binary):
        with tempfile.TemporaryDirectory() as scratch:
            os.mkdir(os.path.join(scratch, "out"))
            return timed_validate(binary, dataset, os.path.join(scratch, "out"),
                                  os.path.join(scratch, "cache"))

    alternate(binaries, rounds, cold, "")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
