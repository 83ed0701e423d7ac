#!/usr/bin/env python3
"""Benchmark (not a test): `fib validate --dataset` on 1x, 10x and 100x copies of a dataset.

    python3 bench/validate_dataset.py [--fib build/apps/fib/fib] [--source DIR]
                                      [--sizes 1,10,100] [--runs 7] [--keep]

Builds the copies with scale_dataset.py (every definition renamed per copy) in a temporary
directory, then times `fib validate --dataset COPY --disable-gpu --outputs json --output-folder
OUT` (a fresh OUT per run, so report names never collide) after one warm-up run per size. Each run's
wall time, CPU time (user + system) and peak RSS come from os.wait4 on that one child. Prints the
medians per size, definitions per second, CPU per definition, and the ratio to the old tool's
figure (about 3.4 s CPU and 262 MB peak RSS for 156 definitions, from the contract's measurement).
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_dataset  # noqa: E402

OLD_TOOL_CPU_S = 3.4
OLD_TOOL_DEFINITIONS = 156
OLD_TOOL_RSS_MB = 262


def run_once(cmd):
    """(exit status, wall s, CPU s, peak RSS MiB) of one child, from its own rusage."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"))
    parser.add_argument("--source",
                        default=os.path.join(root, "..", "shared", "corpus", "dataset"))
    parser.add_argument("--sizes", default="1,10,100")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    work = tempfile.mkdtemp(prefix="fib-bench-dataset-")
    print(f"machine: {platform.node()}, {platform.system()} {platform.release()}, "
          f"{os.cpu_count()} CPUs; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"fib: {os.path.relpath(args.fib)}; source: {os.path.normpath(args.source)}; "
          f"{args.runs} runs per size after one warm-up\n")
    old_cpu_per_def = OLD_TOOL_CPU_S / OLD_TOOL_DEFINITIONS
    rows = []
    try:
        for n in sizes:
            dataset = os.path.join(work, f"x{n}")
            definitions = scale_dataset.scale(os.path.normpath(args.source), dataset, n)
            walls, cpus, rsss = [], [], []
            for i in range(args.runs + 1):
                out = os.path.join(work, "out", f"x{n}-{i}")
                cmd = [args.fib, "validate", "--dataset", dataset, "--disable-gpu",
                       "--outputs", "json", "--output-folder", out]
                code, wall, cpu, rss = run_once(cmd)
                if code not in (0, 1):
                    sys.exit(f"fib exited {code}: {' '.join(cmd)}")
                (report,) = os.listdir(out)
                with open(os.path.join(out, report), encoding="utf-8") as f:
                    reported = len(json.load(f)["definitions"])
                if reported != definitions:
                    sys.exit(f"report has {reported} definitions, expected {definitions}")
                shutil.rmtree(out)
                if i == 0:
                    continue  # warm-up: page cache, dynamic loader
                walls.append(wall)
                cpus.append(cpu)
                rsss.append(rss)
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            rows.append((n, definitions, wall, min(walls), max(walls), cpu, statistics.median(rsss),
                         max(rsss)))
            shutil.rmtree(dataset)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print("| size | definitions | wall median (min–max) | CPU median | peak RSS median (max) "
          "| definitions/s (wall) | CPU per definition | CPU/def speed-up vs old tool |")
    print("|---|---|---|---|---|---|---|---|")
    for n, defs, wall, wmin, wmax, cpu, rss, rss_max in rows:
        per_def = cpu / defs
        print(f"| {n}x | {defs} | {wall * 1000:.1f} ms ({wmin * 1000:.1f}–{wmax * 1000:.1f}) "
              f"| {cpu * 1000:.1f} ms | {rss:.1f} MB ({rss_max:.1f}) | {defs / wall:,.0f} "
              f"| {per_def * 1000:.3f} ms | {old_cpu_per_def / per_def:,.0f}x |")
    print(f"\nold tool: {OLD_TOOL_CPU_S} s CPU, {OLD_TOOL_RSS_MB} MB for {OLD_TOOL_DEFINITIONS} "
          f"definitions = {old_cpu_per_def * 1000:.1f} ms CPU per definition")
    if len(rows) > 1:
        base = rows[0]
        for n, defs, wall, _, _, cpu, _, _ in rows[1:]:
            print(f"{n}x vs {base[0]}x: {defs / base[1]:.0f}x the definitions, "
                  f"{wall / base[2]:.1f}x the wall time, {cpu / base[5]:.1f}x the CPU time")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
