#!/usr/bin/env python3
"""Benchmark (not a test): peak RSS and time of small hostile files, fib before/after and the old tool.

    python3 bench/hostile_inputs.py --after build/apps/fib/fib [--before OTHER_FIB]
                                    [--old-tool DIR] [--runs 3] [--limit-gb 4] [--only NAME,...]

Writes these inputs into a temporary directory (the sizes of the audit that found the blow-ups):
  nested20   19.9 MB: 199 objects nested in one another, each key 100 kB long
  nested60   59.7 MB: the same with 300 kB keys
  arrays100  100 MB:  one line `[{},{},...]`, 33 million empty objects
  dups       6 MB:    one object, 1 million repeats of "a":1 (rendered with --format json)
  many_defs  a definition whose reference has 20,000 top-level defs plus run (fib normalize)
For each JSON input, `fib validate --kind definition --format json FILE` (before, after) and, when
--old-tool DIR is given (DIR as its setup script made it), the old tool's
`validate --dataset D --disable-gpu` on a dataset holding that file as its one definition, next to
`fib validate --dataset D --disable-gpu` (after). Each round runs every contender once, alternating
the order; every child runs under RLIMIT_AS = --limit-gb (the audit's 4 GB) and a 300 s timeout.
Wall time from spawn to reap, peak RSS from os.wait4. Prints a Markdown table of medians.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import old_tool_env  # noqa: E402

TIMEOUT_S = 300


def write_inputs(directory):
    def nested(name, key_length):
        key = "k" * key_length
        with open(os.path.join(directory, name), "w") as f:
            f.write(('{"%s": ' % key) * 199 + "{}" + "}" * 199)

    nested("nested20.json", 100_000)
    nested("nested60.json", 300_000)
    with open(os.path.join(directory, "arrays100.json"), "w") as f:
        f.write("[" + ",".join(["{}"] * 33_333_333) + "]")
    with open(os.path.join(directory, "dups.json"), "w") as f:
        f.write("{" + ",".join(['"a":1'] * 1_000_000) + "}")
    body = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(20_000))
    definition = {
        "name": "many_defs", "op_type": "elementwise",
        "axes": {"n": {"type": "var"}},
        "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
        "reference": "import torch\n" + body + "def run(x):\n    return f0(x)\n",
    }
    with open(os.path.join(directory, "many_defs.json"), "w") as f:
        json.dump(definition, f)


def as_dataset(directory, file_name):
    root = os.path.join(directory, "ds-" + file_name.split(".")[0])
    os.makedirs(os.path.join(root, "definitions", "hostile"), exist_ok=True)
    target = os.path.join(root, "definitions", "hostile", file_name)
    if not os.path.exists(target):
        os.link(os.path.join(directory, file_name), target)
    return root


def run_once(cmd, env, limit_bytes):
    """Returns (exit code, wall s, peak RSS MB, timed out, stderr tail)."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env,
                                preexec_fn=limit)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.perf_counter() - start > TIMEOUT_S:
                proc.kill()
                timed_out = True
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0, os.SEEK_END)
        stderr.seek(max(0, stderr.tell() - 300))
        tail = stderr.read().decode(errors="replace")
    return proc.returncode, wall, usage.ru_maxrss / 1024, timed_out, tail


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", required=True)
    parser.add_argument("--before")
    parser.add_argument("--old-tool")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit-gb", type=float, default=4)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    limit = int(args.limit_gb * (1 << 30))
    only = set(filter(None, args.only.split(",")))
    work = tempfile.mkdtemp(prefix="fib-hostile-")
    try:
        write_inputs(work)
        cases = []  # (case label, contender, cmd, env)
        env = dict(os.environ)
        fibs = [("after", args.after)] + ([("before", args.before)] if args.before else [])
        for name in ("nested20", "nested60", "arrays100", "dups"):
            if only and name not in only:
                continue
            path = os.path.join(work, name + ".json")
            for label, binary in fibs:
                cases.append((f"{name}: validate FILE", label,
                              [binary, "validate", "--kind", "definition", "--format", "json", path], env))
            if args.old_tool:
                root = as_dataset(work, name + ".json")
                out = os.path.join(work, "old-out")
                cases.append((f"{name}: validate --dataset", "old",
                              ["python3", "-m", "flashinfer_bench", "validate",
                               "--dataset", root, "--disable-gpu", "--output-folder", out],
                              old_tool_env(args.old_tool)))
                cases.append((f"{name}: validate --dataset", "after",
                              [args.after, "validate", "--dataset", root, "--disable-gpu"], env))
        if not only or "many_defs" in only:
            for label, binary in fibs:
                out = os.path.join(work, "normalized-" + label)
                cases.append(("many_defs: normalize", label,
                              [binary, "normalize", "--output-dir", out,
                               os.path.join(work, "many_defs.json")], env))
        samples = {}
        for round_index in range(args.runs):
            order = cases[round_index % len(cases):] + cases[:round_index % len(cases)]
            for case, contender, cmd, case_env in order:
                for leftover in ("normalized-after", "normalized-before", "old-out"):
                    shutil.rmtree(os.path.join(work, leftover), ignore_errors=True)
                result = run_once(cmd, case_env, limit)
                samples.setdefault((case, contender), []).append(result)
                print(f"round {round_index + 1} {case} [{contender}]: exit {result[0]}, "
                      f"{result[1]:.2f} s, {result[2]:.0f} MB" + (" (timed out)" if result[3] else ""),
                      file=sys.stderr)
        print(f"| input | contender | exit | wall s (median) | peak RSS MB (median) |")
        print("|---|---|---|---|---|")
        for (case, contender), runs in samples.items():
            exits = sorted({r[0] for r in runs})
            note = " (timed out)" if any(r[3] for r in runs) else ""
            print(f"| {case} | {contender} | {','.join(map(str, exits))}{note} | "
                  f"{statistics.median(r[1] for r in runs):.2f} | "
                  f"{statistics.median(r[2] for r in runs):.0f} |")
            failures = [r[4] for r in runs if r[0] not in (0, 1)]
            if failures:
                print(f"  {case} [{contender}] stderr tail: {failures[0]!r}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
