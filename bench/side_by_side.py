#!/usr/bin/env python3
"""Benchmark (not a test): fib and the old tool (flashinfer-bench) side by side, in one run.

    python3 bench/side_by_side.py [--fib build/apps/fib/fib] [--fib-before OTHER_FIB]
                                  [--old-tool DIR] [--sizes 1,10] [--runs 7]

For each dataset size (renamed copies of the corpus dataset made by scale_dataset.py), each round
runs every contender once, in alternating order (round k starts with contender k mod n), so that
load drifts hit all of them alike:
  - old:    `python3 -m flashinfer_bench validate --dataset COPY --disable-gpu --outputs json
             --output-folder OUT` with the old tool's environment (DIR/env.sh of its setup script;
             DIR from --old-tool or $FIB_OLD_TOOL; skipped when absent);
  - fib:    `fib validate --dataset COPY --disable-gpu --outputs json --output-folder OUT`;
  - before: the same with --fib-before (another fib build, e.g. of an earlier commit).
Plus, fib only (the old tool has no equivalent): `fib validate` on the dataset's definitions
(file mode, Python checks included) and `fib normalize --check` on the corpus dumps.
One warm-up round, then --runs measured rounds. Wall time from spawn to reap; CPU (user+sys) and
peak RSS from os.wait4 on each child alone. Prints medians (min-max) and the ratios.
"""
import argparse
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


def run_once(cmd, env):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def old_tool_env(directory):
    env = dict(os.environ)
    with open(os.path.join(directory, "env.sh"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("export PYTHONPATH="):
                env["PYTHONPATH"] = line.split("=", 1)[1].strip('"')
            elif line.startswith("export PATH="):
                env["PATH"] = line.split("=", 1)[1].strip('"').replace("$PATH", os.environ["PATH"])
    return env


def summarize(samples):
    walls = [s[1] * 1000 for s in samples]
    cpus = [s[2] * 1000 for s in samples]
    rss = [s[3] for s in samples]
    return statistics.median(walls), min(walls), max(walls), statistics.median(cpus), statistics.median(rss)


def measure(name_to_cmd, runs, out_root):
    """name -> (cmd builder(out_dir), env). Returns name -> samples."""
    names = list(name_to_cmd)
    samples = {n: [] for n in names}
    for round_index in range(runs + 1):
        order = names[round_index % len(names):] + names[:round_index % len(names)]
        for name in order:
            build, env = name_to_cmd[name]
            out = tempfile.mkdtemp(dir=out_root)
            result = run_once(build(out), env)
            shutil.rmtree(out, ignore_errors=True)
            if result[0] not in (0, 1):
                sys.exit(f"{name}: exit status {result[0]}: {' '.join(build(out))}")
            if round_index > 0:
                samples[name].append(result)
    return samples


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"))
    parser.add_argument("--fib-before")
    parser.add_argument("--old-tool", default=os.environ.get("FIB_OLD_TOOL", ""))
    parser.add_argument("--source", default=os.path.join(root, "..", "shared", "corpus", "dataset"))
    parser.add_argument("--dumps", default=os.path.join(root, "..", "shared", "corpus", "dumps"))
    parser.add_argument("--sizes", default="1,10")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fib-bench-side-")
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.runs} runs after a warm-up")
    fibs = {"fib": args.fib}
    if args.fib_before:
        fibs["before"] = args.fib_before
    env = dict(os.environ)
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            copy = os.path.join(work, f"x{size}")
            scale_dataset.scale(args.source, copy, size)
            contenders = {}
            if args.old_tool and os.path.isfile(os.path.join(args.old_tool, "env.sh")):
                contenders["old"] = (lambda out, c=copy: [
                    "python3", "-m", "flashinfer_bench", "validate", "--dataset", c, "--disable-gpu",
                    "--outputs", "json", "--output-folder", out], old_tool_env(args.old_tool))
            for name, binary in fibs.items():
                contenders[name] = (lambda out, c=copy, b=binary: [
                    b, "validate", "--dataset", c, "--disable-gpu", "--outputs", "json",
                    "--output-folder", out], env)
            samples = measure(contenders, args.runs, work)
            print(f"\nvalidate --dataset, {size}x ({19 * size} definitions)")
            print("| contender | wall median (min-max) | CPU median | peak RSS median |")
            print("|---|---|---|---|")
            medians = {}
            for name, s in samples.items():
                wall, lo, hi, cpu, rss = summarize(s)
                medians[name] = (wall, cpu, rss)
                print(f"| {name} | {wall:,.1f} ms ({lo:,.1f}-{hi:,.1f}) | {cpu:,.1f} ms | {rss:.1f} MB |")
            if "old" in medians:
                for name in fibs:
                    w, c, r = medians[name]
                    ow, oc, orss = medians["old"]
                    print(f"old / {name}: wall {ow / w:.1f}x, CPU {oc / c:.1f}x, peak RSS {orss / r:.1f}x")
            if "before" in medians:
                w, c, r = medians["fib"]
                bw, bc, br = medians["before"]
                print(f"fib / before: wall {w / bw:.3f}, CPU {c / bc:.3f}, peak RSS {r / br:.3f}")
        definitions = os.path.join(args.source, "definitions")
        fib_only = (("validate FILES (definitions)", ["validate", definitions]),
                    ("normalize --check (dumps)", ["normalize", "--check", args.dumps]))
        for label, arguments in fib_only:
            contenders = {name: (lambda out, b=binary, a=arguments: [b, *a], env)
                          for name, binary in fibs.items()}
            samples = measure(contenders, args.runs, work)
            print(f"\n{label}")
            print("| contender | wall median (min-max) | CPU median | peak RSS median |")
            print("|---|---|---|---|")
            for name, s in samples.items():
                wall, lo, hi, cpu, rss = summarize(s)
                print(f"| {name} | {wall:,.1f} ms ({lo:,.1f}-{hi:,.1f}) | {cpu:,.1f} ms | {rss:.1f} MB |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
