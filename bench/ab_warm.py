#!/usr/bin/env python3
"""Benchmark helper (not a test): two fib binaries, warm, alternating, on one dataset.

    python3 bench/ab_warm.py BEFORE_FIB AFTER_FIB DATASET ROUNDS

Both binaries share one new cache directory, which the first round (a warm-up, not counted)
primes with each build's entries (the cache key holds fib's build identity). Each round runs both
(the order alternates between rounds) as bench/ab_cold.py does, but with that cache directory,
emptying the output folder after each run. Prints, per binary, the median wall time (spawn to
reap, with the minimum and maximum) and the median CPU time of the run's processes.
"""
import os
import shutil
import sys
import tempfile

from ab_cold import alternate, arguments, timed_validate


def main(argv):
    parsed = arguments(argv, __doc__)
    if parsed is None:
        return 2
    binaries, dataset, rounds = parsed
    cache = tempfile.mkdtemp(prefix="fib-ab-warm-cache-")
    out = tempfile.mkdtemp(prefix="fib-ab-warm-out-")

    def warm(binary):
        measured = timed_validate(binary, dataset, out, cache)
        for name in os.listdir(out):
            os.unlink(os.path.join(out, name))
        return measured

    try:
        alternate(binaries, rounds, warm, "warm ")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
