#!/usr/bin/env python3
"""Benchmark (not a test): wall time, CPU time and peak RSS of `fib validate` over the corpus
definitions, Python-exact checks included (the embedded interpreter starts in every run).

    python3 bench/validate_files.py [--fib build/apps/fib/fib] [--runs 21] [PATH ...]

PATH defaults to ../shared/corpus/dataset/definitions. Prints median and worst wall time, median
user+system CPU time and the largest peak RSS of the fib process.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def run_once(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, wall, cpu


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"))
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = args.paths or [os.path.join(root, "..", "shared", "corpus", "dataset", "definitions")]
    cmd = [args.fib, "validate"] + paths
    code, _, _ = run_once(cmd)  # warm the page cache
    walls, cpus = [], []
    for _ in range(args.runs):
        code, wall, cpu = run_once(cmd)
        if code not in (0, 1):
            sys.exit(f"fib exited {code}")
        walls.append(wall)
        cpus.append(cpu)
    # ru_maxrss of children is the largest RSS of any waited-for child, in KiB on Linux.
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"fib validate {' '.join(os.path.relpath(p) for p in paths)} ({args.runs} runs): "
          f"wall median {statistics.median(walls) * 1000:.1f} ms, worst {max(walls) * 1000:.1f} ms; "
          f"CPU median {statistics.median(cpus) * 1000:.1f} ms; peak RSS {peak_kib / 1024:.1f} MB")


if __name__ == "__main__":
    main()
