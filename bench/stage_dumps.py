#!/usr/bin/env python3
"""Benchmark (not a test): `fib stage` of about 100 raw trace dumps into a dataset.

    python3 bench/stage_dumps.py [--fib build/apps/fib/fib] [--source DIR]
                                 [--copies 4] [--runs 7] [--keep]

Builds the same renamed dump copies as bench/normalize_dumps.py (104 files by default, in a
temporary directory, never in the repository), then times, one warm-up and `--runs` measured runs
each:

  fib stage DUMPS --dataset EMPTY              (a fresh empty dataset per run: every file added)
  fib stage DUMPS --dataset FULL               (everything already staged: every file unchanged)
  fib stage DUMPS --dataset EMPTY --normalize  (normalized on the way in; starts Python)
  fib stage DUMPS --dataset FULL --normalize   (re-staging normalized dumps: unchanged)

Wall time, CPU time and peak RSS come from os.wait4 on the child. The summary line on stderr is
checked (every input added, or every input unchanged). Prints a Markdown table. Standard library
only.
"""
import argparse
import os
import platform
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from normalize_dumps import make_dumps, run_once  # noqa: E402

import statistics  # noqa: E402

SUMMARY = re.compile(r"fib stage: (\d+) inputs?: (\d+) added, (\d+) unchanged, (\d+) overwritten, "
                     r"(\d+) conflicts?, (\d+) rejected")


def bench(label, make_cmd, runs, files, work, expect):
    walls, cpus, rsss = [], [], []
    for i in range(runs + 1):
        cmd = make_cmd(i)
        code, wall, cpu, rss, stderr = run_once(cmd, work)
        match = SUMMARY.search(stderr)
        if code != 0 or not match:
            sys.exit(f"fib failed (exit {code}): {' '.join(cmd)}\n--- stderr ---\n{stderr[-4000:]}")
        counts = dict(zip(("inputs", "added", "unchanged", "overwritten", "conflicts", "rejected"),
                          (int(g) for g in match.groups())))
        if counts["inputs"] != files or counts[expect] != files:
            sys.exit(f"expected {files} {expect}, got {counts}: {' '.join(cmd)}")
        if i == 0:
            continue
        walls.append(wall)
        cpus.append(cpu)
        rsss.append(rss)
    return {"label": label, "files": files, "wall": statistics.median(walls),
            "wall_min": min(walls), "wall_max": max(walls), "cpu": statistics.median(cpus),
            "rss": statistics.median(rsss), "expect": expect}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"))
    parser.add_argument("--source", default=os.path.join(root, "..", "shared", "corpus", "dumps"))
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    if args.copies < 1 or args.runs < 1:
        parser.error("--copies and --runs must be at least 1")
    fib = os.path.abspath(args.fib)
    work = tempfile.mkdtemp(prefix="fib-bench-stage-")
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    try:
        dumps = os.path.join(work, "dumps")
        files = make_dumps(os.path.normpath(args.source), dumps, args.copies)
        print(f"{files} dumps; {args.runs} runs after one warm-up\n")

        def fresh(tag):
            def make(i):
                target = os.path.join(work, f"{tag}-{i}")
                if i >= 2:
                    shutil.rmtree(os.path.join(work, f"{tag}-{i - 1}"))
                os.makedirs(target)
                return target
            return make

        empty_raw, empty_norm = fresh("raw"), fresh("norm")
        rows.append(bench("`stage DUMPS --dataset EMPTY`",
                          lambda i: [fib, "stage", dumps, "--dataset", empty_raw(i)],
                          args.runs, files, work, "added"))
        full_raw = os.path.join(work, "raw-0")
        rows.append(bench("`stage DUMPS --dataset FULL`",
                          lambda i: [fib, "stage", dumps, "--dataset", full_raw],
                          args.runs, files, work, "unchanged"))
        rows.append(bench("`stage DUMPS --dataset EMPTY --normalize`",
                          lambda i: [fib, "stage", dumps, "--dataset", empty_norm(i),
                                     "--normalize"],
                          args.runs, files, work, "added"))
        full_norm = os.path.join(work, "norm-0")
        rows.append(bench("`stage DUMPS --dataset FULL --normalize`",
                          lambda i: [fib, "stage", dumps, "--dataset", full_norm, "--normalize"],
                          args.runs, files, work, "unchanged"))
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("| command | files | wall median (min–max) | CPU median | peak RSS median | result |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['label']} | {r['files']} | {r['wall'] * 1000:,.1f} ms "
              f"({r['wall_min'] * 1000:,.1f}–{r['wall_max'] * 1000:,.1f}) "
              f"| {r['cpu'] * 1000:,.1f} ms | {r['rss']:.1f} MB | all {r['expect']} |")
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
