#!/usr/bin/env python3
"""Benchmark (not a test): what the sandbox and judging outside the untrusted process cost, fib
before and after side by side in one run (and the old tool where it has the same command).

    python3 bench/sandbox_cost.py --fib build/apps/fib/fib --fib-before OTHER/apps/fib/fib
                                  [--old-tool DIR] [--runs 5] [--workloads 20]

Contenders alternate within each round (round k starts with contender k mod n); one warm-up
round, then --runs measured rounds; wall time from spawn to reap, CPU (user+sys, fib and its
reaped children: the workers and bwrap) and peak RSS (the largest single process) from os.wait4.
Commands (everything in a temporary directory; FIB_CACHE_PATH there too, warmed by the warm-up):
  - build:  `validate --exec DEFS` on the corpus dataset's definitions (one worker, 19 build checks)
  - smoke:  `validate --smoke DEFS` (one worker, 19 build checks and smoke runs)
  - run:    `run --dataset FIXTURE --quiet --warmup 0 --iterations 3` on the fixture of
            tests/run/make_fixture.py with py_correct and baseline_py and --workloads random
            workloads (2 solutions x N evaluations)
  - old:    the old tool's `flashinfer-bench run` has no offline equivalent here (it needs a GPU),
            so only `validate --dataset` with its default reference builds is timed for it
            (`python3 -m flashinfer_bench validate --dataset CORPUS --checks definition`), beside
            fib's `validate --dataset CORPUS --checks definition --outputs json`.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from side_by_side import old_tool_env, run_once  # noqa: E402


def fixture(path, workloads):
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "run", "make_fixture.py"), path,
                    "--only", "py_correct", "baseline_py"], check=True)
    rng = random.Random(0)
    with open(os.path.join(path, "workloads", "scale", "scale_h64.jsonl"), "a") as f:
        for _ in range(workloads):
            f.write(json.dumps({"definition": "scale_h64", "solution": None, "evaluation": None,
                                "workload": {"uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                                             "axes": {"n": rng.randint(1, 64)},
                                             "inputs": {"x": {"type": "random"},
                                                        "w": {"type": "random"}}}}) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", default=os.path.join(ROOT, "build", "apps", "fib", "fib"))
    parser.add_argument("--fib-before", required=True)
    parser.add_argument("--old-tool", default=os.environ.get("FIB_OLD_TOOL", ""))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workloads", type=int, default=20)
    args = parser.parse_args()
    corpus = os.path.join(ROOT, "..", "shared", "corpus", "dataset")
    tmp = tempfile.mkdtemp(prefix="fib-sandbox-bench-")
    try:
        env = dict(os.environ, FIB_CACHE_PATH=os.path.join(tmp, "cache"))
        defs = os.path.join(corpus, "definitions")
        ds = os.path.join(tmp, "fixture")
        fixture(ds, args.workloads)
        fibs = {"after": args.fib, "before": args.fib_before}
        commands = {}
        for label, fib in fibs.items():
            commands[("build", label)] = ([fib, "validate", "--exec", defs], env)
            commands[("smoke", label)] = ([fib, "validate", "--smoke", defs], env)
            commands[("run", label)] = ([fib, "run", "--dataset", ds, "--quiet", "--warmup", "0",
                                         "--iterations", "3", "--dry-run"], env)
            out = os.path.join(tmp, "reports-" + label)
            commands[("dataset", label)] = ([fib, "validate", "--dataset", corpus, "--checks",
                                             "definition", "--outputs", "json", "--output-folder",
                                             out], env)
        if args.old_tool and os.path.isdir(args.old_tool):
            commands[("dataset", "old")] = (
                ["python3", "-m", "flashinfer_bench", "validate", "--dataset", corpus, "--checks",
                 "definition", "--outputs", "json", "--output-folder",
                 os.path.join(tmp, "reports-old")], old_tool_env(args.old_tool))
        samples = {key: [] for key in commands}
        keys = list(commands)
        for round_index in range(args.runs + 1):
            order = keys[round_index % len(keys):] + keys[:round_index % len(keys)]
            for key in order:
                for folder in ("reports-after", "reports-before", "reports-old"):
                    shutil.rmtree(os.path.join(tmp, folder), ignore_errors=True)
                result = run_once(*commands[key])
                if round_index > 0:
                    samples[key].append(result)
        print("| command | contender | wall median (min-max) ms | CPU median ms | peak RSS MB | exit |")
        print("|---|---|---|---|---|---|")
        for key in keys:
            walls = [s[1] * 1000 for s in samples[key]]
            cpus = [s[2] * 1000 for s in samples[key]]
            rss = [s[3] for s in samples[key]]
            print("| %s | %s | %.1f (%.1f-%.1f) | %.1f | %.1f | %s |" % (
                key[0], key[1], statistics.median(walls), min(walls), max(walls),
                statistics.median(cpus), statistics.median(rss),
                sorted({s[0] for s in samples[key]})))
        for name in ("build", "smoke", "run", "dataset"):
            a = statistics.median(s[1] for s in samples[(name, "after")])
            b = statistics.median(s[1] for s in samples[(name, "before")])
            print("%s: after/before wall = %.2f" % (name, a / b))
        if ("dataset", "old") in samples:
            a = statistics.median(s[1] for s in samples[("dataset", "after")])
            o = statistics.median(s[1] for s in samples[("dataset", "old")])
            print("dataset: old/after wall = %.2f" % (o / a))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
