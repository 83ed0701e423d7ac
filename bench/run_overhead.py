#!/usr/bin/env python3
"""Benchmark (not a test): what `fib run` costs around the kernels, and what the build cache saves.

    python3 bench/run_overhead.py [--fib build/apps/fib/fib]
                                  [--worker build/apps/fib-worker/fib-worker]
                                  [--workloads 40] [--runs 5] [--warm-runs 3] [--keep]

Everything happens in a temporary directory (the datasets and FIB_CACHE_PATH); nothing is written
into the repository.

1. Overhead per evaluation. The fixture of tests/run/make_fixture.py with `py_correct` and
   `baseline_py` (two python solutions of y = x * w) gets --workloads more random workloads (n in
   1..64, distinct uuids) beside its own. `fib run --dataset DS --quiet --warmup 0 --iterations 1`
   runs once to warm up, then --runs times (DS/traces removed before each). The worker's start
   (spawn fib-worker with one end of a socketpair as its standard input, until its greeting line)
   is timed on its own, 5 times; per-evaluation wall = (wall - worker start) / evaluations. The
   kernels' own time is read off the traces: latency_ms + reference_latency_ms of each evaluation
   (one timed call each with --iterations 1), so "fib outside the kernels" is the rest.
2. Build cache. The fixture with `cpp_correct` (a torch C++ extension) and `baseline_py`: one run
   with an empty cache (the extension is compiled), then --warm-runs with the same cache (it is
   loaded). Prints both walls, the difference (the compile) and the cache's size on disk.
"""
import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid


def run_fib(cmd, env):
    """(exit status, wall s, CPU s of fib and its worker) of one `fib run`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    return proc.returncode, wall, err.decode("utf-8", "replace")


def worker_start(worker, env):
    """Seconds from spawning fib-worker to its greeting line."""
    ours, theirs = socket.socketpair()
    start = time.perf_counter()
    proc = subprocess.Popen([worker, "--address-space", "8589934592"], stdin=theirs, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    theirs.close()
    buffer = b""
    while b"\n" not in buffer:
        chunk = ours.recv(65536)
        if not chunk:
            raise RuntimeError("fib-worker ended before its greeting")
        buffer += chunk
    elapsed = time.perf_counter() - start
    greeting = json.loads(buffer.split(b"\n", 1)[0])
    ours.shutdown(socket.SHUT_WR)  # EOF: the worker exits on its own
    ours.close()
    proc.wait(timeout=60)
    return elapsed, greeting


def make_fixture(root, here, only, extra_workloads, seed=1):
    subprocess.run([sys.executable, os.path.join(here, "tests", "run", "make_fixture.py"), root,
                    "--only", *only], check=True)
    path = os.path.join(root, "workloads", "scale", "scale_h64.jsonl")
    rng = random.Random(seed)
    with open(path, "a", encoding="utf-8") as f:
        for _ in range(extra_workloads):
            line = {"definition": "scale_h64", "solution": None, "evaluation": None,
                    "workload": {"uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                 "axes": {"n": rng.randint(1, 64)},
                                 "inputs": {"x": {"type": "random"}, "w": {"type": "random"}}}}
            f.write(json.dumps(line) + "\n")
    with open(path, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def read_traces(root):
    out = []
    for base, _, files in os.walk(os.path.join(root, "traces")):
        for name in files:
            if name.endswith(".jsonl"):
                with open(os.path.join(base, name), encoding="utf-8") as f:
                    out.extend(json.loads(line) for line in f if line.strip())
    return out


def disk_usage(path):
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_blocks * 512
            except OSError:
                pass
    return total


def median_ms(values):
    return statistics.median(values) * 1000.0


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--fib", default=os.path.join(here, "build", "apps", "fib", "fib"))
    parser.add_argument("--worker",
                        default=os.path.join(here, "build", "apps", "fib-worker", "fib-worker"))
    parser.add_argument("--workloads", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="fib-bench-run-")
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        # --- 1. overhead per evaluation ---
        env = dict(os.environ, FIB_CACHE_PATH=os.path.join(work, "cache-overhead"))
        ds = os.path.join(work, "overhead")
        workloads = make_fixture(ds, here, ["py_correct", "baseline_py"], args.workloads)
        starts = []
        greeting = None
        for _ in range(5):
            elapsed, greeting = worker_start(args.worker, env)
            starts.append(elapsed)
        start_s = statistics.median(starts)
        print(f"worker: {greeting}")
        print(f"worker start (spawn to greeting), median of 5: {start_s * 1000:.0f} ms "
              f"(min {min(starts) * 1000:.0f}, max {max(starts) * 1000:.0f})")
        cmd = [args.fib, "run", "--dataset", ds, "--quiet", "--warmup", "0", "--iterations", "1"]
        walls, kernel_ms, evaluations = [], [], None
        for index in range(args.runs + 1):
            shutil.rmtree(os.path.join(ds, "traces"), ignore_errors=True)
            status, wall, err = run_fib(cmd, env)
            if status != 0:
                raise RuntimeError(f"fib run exited {status}:\n{err}")
            traces = read_traces(ds)
            if index == 0:
                continue  # warm-up
            evaluations = len(traces)
            walls.append(wall)
            kernel_ms.append(sum(t["evaluation"]["performance"]["latency_ms"] +
                                 t["evaluation"]["performance"]["reference_latency_ms"]
                                 for t in traces))
        wall_s = statistics.median(walls)
        per_eval_ms = (wall_s - start_s) * 1000.0 / evaluations
        kernels = statistics.median(kernel_ms)
        print(f"\n1. {workloads} workloads x 2 python solutions = {evaluations} evaluations, "
              f"--warmup 0 --iterations 1, {args.runs} runs after 1 warm-up")
        print(f"   wall: median {wall_s * 1000:.0f} ms (min {min(walls) * 1000:.0f}, "
              f"max {max(walls) * 1000:.0f})")
        print(f"   wall - worker start: {(wall_s - start_s) * 1000:.0f} ms; "
              f"per evaluation {per_eval_ms:.2f} ms")
        print(f"   kernels (solution + reference, timed calls, all evaluations): {kernels:.2f} ms "
              f"= {kernels / evaluations:.3f} ms per evaluation")
        print(f"   fib outside the kernels: {per_eval_ms - kernels / evaluations:.2f} ms "
              f"per evaluation")

        # --- 2. build cache ---
        cache = os.path.join(work, "cache-build")
        env = dict(os.environ, FIB_CACHE_PATH=cache)
        ds = os.path.join(work, "build")
        build_workloads = make_fixture(ds, here, ["cpp_correct", "baseline_py"], 0)
        cmd = [args.fib, "run", "--dataset", ds, "--quiet", "--warmup", "0", "--iterations", "1"]
        cold = warm = None
        warm_walls = []
        for index in range(args.warm_runs + 1):
            shutil.rmtree(os.path.join(ds, "traces"), ignore_errors=True)
            status, wall, err = run_fib(cmd, env)
            if status != 0:
                raise RuntimeError(f"fib run exited {status}:\n{err}")
            statuses = sorted({t["evaluation"]["status"] for t in read_traces(ds)})
            if statuses != ["PASSED"]:
                raise RuntimeError(f"unexpected statuses {statuses}")
            if index == 0:
                cold = wall
            else:
                warm_walls.append(wall)
        warm = statistics.median(warm_walls)
        print(f"\n2. cpp_correct + baseline_py, {build_workloads} workloads each")
        print(f"   cold cache (compiles the extension): {cold * 1000:.0f} ms")
        print(f"   warm cache, median of {args.warm_runs}: {warm * 1000:.0f} ms "
              f"(min {min(warm_walls) * 1000:.0f}, max {max(warm_walls) * 1000:.0f})")
        print(f"   difference (the compile saved by the cache): {(cold - warm) * 1000:.0f} ms")
        print(f"   cache on disk: {disk_usage(cache) / 1024:.0f} KiB "
              f"({len(os.listdir(os.path.join(cache, 'solutions')))} entries in solutions/)")
    finally:
        if args.keep:
            print(f"\nkept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
