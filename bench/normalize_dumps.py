#!/usr/bin/env python3
"""Benchmark (not a test): `fib normalize` on a directory of about 100 raw trace dumps.

    python3 bench/normalize_dumps.py [--fib build/apps/fib/fib] [--source DIR]
                                     [--copies 4] [--runs 7] [--keep]

Writes `--copies` renamed copies of every *.json dump below ../shared/corpus/dumps (26 files,
v1-sglang/ included, so 104 files by default) into a temporary directory under the system temp
dir (never into the repository): copy k of `<dir>/<stem>.json` is `<dir>/<stem>_x{k:03d}.json`
with the same suffix on its JSON "name" (the file is re-serialised with indent 2 and ASCII
escapes, which is byte-for-byte how the corpus dumps are written; a file that is not a JSON object
with a string "name" is copied unchanged under the suffixed stem). Then times

  fib normalize --output-dir OUT DUMPS   (a fresh OUT per run, in the temporary directory)
  fib normalize --check OUT              (on the normalized output: the CI lint step)

each one warm-up and `--runs` measured runs. Wall time, CPU time (user + system) and peak RSS come
from os.wait4 on that one child, so the embedded Python's start is included and this script's own
start is not. Exit status 1 (some file still invalid) is expected on this corpus; 2, 3 or a
signal aborts the benchmark with the child's stderr. The summary line on stderr is checked: every
file counted, none skipped, and `--check` reports 0 changed (idempotence). Prints a Markdown table
row per measurement. Standard library only.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SUMMARY = re.compile(r"fib normalize: (\d+) files?: (\d+) changed, (\d+) valid, (\d+) invalid, "
                     r"(\d+) skipped")


def make_dumps(source, target, copies):
    """Writes `copies` renamed copies of the *.json files below `source` into `target`.
    Returns the number of files written."""
    originals = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".json"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    originals.append((os.path.relpath(path, source), f.read()))
    written = 0
    for rel, data in originals:
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            doc = None
        renamable = isinstance(doc, dict) and isinstance(doc.get("name"), str)
        for k in range(copies):
            sfx = f"_x{k:03d}"
            out = os.path.join(target, rel[:-len(".json")] + sfx + ".json")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            body = data
            if renamable:
                doc_k = dict(doc, name=doc["name"] + sfx)
                body = (json.dumps(doc_k, indent=2) + "\n").encode("utf-8")
            with open(out, "wb") as f:
                f.write(body)
            written += 1
    return written


def run_once(cmd, log_dir):
    """(exit status, wall s, CPU s, peak RSS MiB, stderr text) of one child, from its own rusage.
    stdout and stderr go to files, so pipes never throttle the child."""
    out_path, err_path = os.path.join(log_dir, "stdout"), os.path.join(log_dir, "stderr")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    with open(err_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    return code, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stderr


def check_run(cmd, code, stderr, files, check_mode):
    """Aborts unless the run is the expected one: exit 0 or 1, every file counted, none skipped,
    and with --check nothing to change. Returns the summary counts."""
    if code not in (0, 1):
        what = f"signal {-code}" if code < 0 else f"exit status {code}"
        sys.exit(f"fib failed ({what}): {' '.join(cmd)}\n--- stderr ---\n{stderr}")
    match = SUMMARY.search(stderr)
    if not match:
        sys.exit(f"no summary line on stderr: {' '.join(cmd)}\n--- stderr ---\n{stderr}")
    total, changed, valid, invalid, skipped = (int(g) for g in match.groups())
    problems = []
    if total != files:
        problems.append(f"{total} files counted, {files} expected")
    if skipped:
        problems.append(f"{skipped} skipped")
    if check_mode and changed:
        problems.append(f"--check: {changed} files would still change (not idempotent)")
    if problems:
        sys.exit(f"{'; '.join(problems)}: {' '.join(cmd)}\n--- stderr (tail) ---\n"
                 f"{stderr[-4000:]}")
    return total, changed, valid, invalid, skipped


def bench(label, make_cmd, runs, files, work, check_mode):
    walls, cpus, rsss, codes, counts = [], [], [], set(), None
    for i in range(runs + 1):
        cmd = make_cmd(i)
        code, wall, cpu, rss, stderr = run_once(cmd, work)
        counts = check_run(cmd, code, stderr, files, check_mode)
        codes.add(code)
        if i == 0:
            continue  # warm-up: page cache, dynamic loader, Python's .pyc files
        walls.append(wall)
        cpus.append(cpu)
        rsss.append(rss)
    return {"label": label, "files": files, "wall": statistics.median(walls),
            "wall_min": min(walls), "wall_max": max(walls), "cpu": statistics.median(cpus),
            "rss": statistics.median(rsss), "rss_max": max(rsss), "codes": sorted(codes),
            "counts": counts}


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
    source = os.path.normpath(args.source)

    work = tempfile.mkdtemp(prefix="fib-bench-normalize-")
    print(f"machine: {platform.node()}, {platform.system()} {platform.release()}, "
          f"{os.cpu_count()} CPUs; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    try:
        dumps = os.path.join(work, "dumps")
        files = make_dumps(source, dumps, args.copies)
        size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(dumps) for n in ns)
        copies = f"{args.copies} cop{'y' if args.copies == 1 else 'ies'}"
        print(f"fib: {fib}; source: {source}; {files} dumps ({copies}, {size / 1024:.0f} KB) "
              f"in {dumps}; {args.runs} runs after one warm-up\n")

        def output_dir(i):
            return os.path.join(work, f"out-{i}")

        def normalize_cmd(i):
            if i >= 2:  # keep out-0 (the warm-up's output) for --check, drop the others
                shutil.rmtree(output_dir(i - 1))
            return [fib, "normalize", "--output-dir", output_dir(i), dumps]

        rows.append(bench("`normalize --output-dir OUT DUMPS`", normalize_cmd, args.runs, files,
                          work, check_mode=False))
        normalized = output_dir(0)
        written = sum(len(ns) for _, _, ns in os.walk(normalized))
        if written != files:
            sys.exit(f"{normalized} holds {written} files, {files} expected")
        rows.append(bench("`normalize --check OUT`", lambda i: [fib, "normalize", "--check",
                                                                normalized],
                          args.runs, files, work, check_mode=True))
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print("| command | files | wall median (min–max) | CPU median | peak RSS median (max) "
          "| files/s (wall) | exit status | changed / valid / invalid |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        _, changed, valid, invalid, _ = r["counts"]
        print(f"| {r['label']} | {r['files']} | {r['wall'] * 1000:,.1f} ms "
              f"({r['wall_min'] * 1000:,.1f}–{r['wall_max'] * 1000:,.1f}) "
              f"| {r['cpu'] * 1000:,.1f} ms | {r['rss']:.1f} MB ({r['rss_max']:.1f}) "
              f"| {r['files'] / r['wall']:,.0f} | {'/'.join(map(str, r['codes']))} "
              f"| {changed} / {valid} / {invalid} |")
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
