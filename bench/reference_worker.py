#!/usr/bin/env python3
"""Benchmark (not a test): reference execution through `fib-worker`.

    python3 bench/reference_worker.py [--fib build/apps/fib/fib]
                                      [--worker build/apps/fib-worker/fib-worker]
                                      [--dataset ../shared/corpus/dataset]
                                      [--dumps ../shared/corpus/dumps]
                                      [--definition DEFINITION.json]
                                      [--start-runs 7] [--runs 5]

Three measurements, each after one warm-up run (page cache, dynamic loader, .pyc files):

1. Worker start. Spawns `fib-worker --address-space 8589934592` exactly as fib does: one end of a
   socket.socketpair() is its standard input, and the worker writes its greeting line
   {"fib_worker": 1, ...} on it once Python has started and torch is imported. Times spawn →
   greeting (`--start-runs` runs; median, min, max), reads VmHWM from /proc/<pid>/status right
   after the greeting, then (after the jobs of 2.) closes the socket, times EOF → exit (the worker
   exits on EOF; fib waits up to 0.5 s for that before it kills it) and takes the worker's peak
   RSS and CPU time from os.wait4.
2. First-job latency. In the same worker, right after the greeting: one `build` job, one `smoke`
   job, then the same two again (warm). The smoke plan is made here for `--definition` (default:
   the dataset's rmsnorm_h128.json) by a minimal planner that only accepts definitions without
   constraints and with float inputs (var axes 4, every input randn, as fib's planner does for
   such definitions).
3. Whole runs through fib. `fib validate --dataset DATASET --outputs stdout` with `--smoke`, with
   nothing (the default: the build check of every reference) and with `--disable-gpu` (no
   worker), then file mode on the dumps normalized into a temporary directory (`fib normalize
   --output-dir TMP DUMPS` first; exit 1 is expected there) with `--smoke`, `--exec` and neither.
   `--runs` runs each. Wall time from spawn to reap; CPU time (user + system) and peak RSS from
   os.wait4 on the fib child: the kernel's figures for a reaped child include its own reaped
   children, so CPU counts fib *and* the worker, and peak RSS is that of the largest single
   process of the tree (the worker whenever it ran), not a sum. Derived: worker overhead =
   build-only wall - no-worker wall; smoke runs/s = references whose smoke run said "smoke run:
   ok" / (smoke wall - build-only wall).

Exit status 1 is expected from fib (the corpora have errors); 2, 3 or a signal aborts with the
child's stderr. Nothing is written into the repository (fib writes no report files with
`--outputs stdout`). Prints Markdown tables. Standard library only.
"""
import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ADDRESS_SPACE = 8 << 30


def loadavg():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ms(seconds):
    return f"{seconds * 1000:,.1f} ms"


def vm_hwm_mib(pid):
    """The VmHWM (peak resident set) of a live process, in MiB; None if unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Worker:
    """One fib-worker, spawned like fib spawns it (socketpair end as stdin)."""

    def __init__(self, path):
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.buffer = b""
        self.next_id = 0
        self.stderr = tempfile.TemporaryFile()  # a file, not a pipe: it never blocks the worker
        self.start = time.perf_counter()
        self.proc = subprocess.Popen([path, "--address-space", str(ADDRESS_SPACE)],
                                     stdin=child.fileno(), stdout=subprocess.DEVNULL,
                                     stderr=self.stderr)
        child.close()
        line = self.read_line(timeout=120)
        self.greeting_s = time.perf_counter() - self.start
        if line is None:
            self.sock.close()
            self.proc.wait()
            self.stderr.seek(0)
            err = self.stderr.read().decode("utf-8", "replace")
            sys.exit(f"fib-worker sent no greeting (status {self.proc.returncode})\n{err}")
        self.hello = json.loads(line)
        if self.hello.get("fib_worker") != 1:
            sys.exit(f"unexpected greeting: {line!r}")
        self.hwm_after_greeting = vm_hwm_mib(self.proc.pid)

    def read_line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return None
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8")

    def job(self, request, timeout=60):
        """(seconds, reply) of one request."""
        self.next_id += 1
        request = dict(request, id=self.next_id, device="cpu", seed=0)
        start = time.perf_counter()
        self.sock.sendall((json.dumps(request) + "\n").encode("utf-8"))
        line = self.read_line(timeout)
        seconds = time.perf_counter() - start
        if line is None:
            sys.exit(f"no reply to job {request['job']} within {timeout} s")
        reply = json.loads(line)
        if reply.get("id") != self.next_id:
            sys.exit(f"unexpected reply: {line!r}")
        return seconds, reply

    def close(self):
        """Closes the channel (EOF: the worker exits); (exit status, CPU s, peak RSS MiB,
        seconds from EOF to its exit)."""
        start = time.perf_counter()
        self.sock.close()
        _, status, usage = os.wait4(self.proc.pid, 0)
        exit_s = time.perf_counter() - start
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.stderr.close()
        return (self.proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                exit_s)


def simple_plan(definition):
    """The smoke plan of a definition without constraints and with float inputs only, as fib's
    planner (src/smoke.cpp) makes it for such a definition; exits on anything else."""
    if definition.get("constraints"):
        sys.exit(f"{definition['name']}: has constraints; pick a simpler --definition")
    axes = {}
    for name, axis in definition["axes"].items():
        axes[name] = axis["value"] if axis["type"] == "const" else 4
    float_types = {"float32", "float16", "bfloat16"}
    inputs, outputs, input_bytes, output_bytes = [], [], 0, 0
    size = {"float32": 4, "float16": 2, "bfloat16": 2}
    for name, spec in definition["inputs"].items():
        if spec["dtype"] not in float_types or spec.get("shape") is None:
            sys.exit(f"{definition['name']}: input {name} is not a float tensor")
        shape = [axes[a] for a in spec["shape"]]
        elements = 1
        for dim in shape:
            elements *= dim
        input_bytes += elements * size[spec["dtype"]]
        inputs.append({"name": name, "shape": shape, "axis_names": spec["shape"],
                       "scalar": False, "dtype": spec["dtype"],
                       "fill": "random_normal", "total": 0, "bound": 1, "value": 0.0})
    for name, spec in definition["outputs"].items():
        if spec["dtype"] not in float_types or spec.get("shape") is None:
            sys.exit(f"{definition['name']}: output {name} is not a float tensor")
        shape = [axes[a] for a in spec["shape"]]
        elements = 1
        for dim in shape:
            elements *= dim
        output_bytes += elements * size[spec["dtype"]]
        outputs.append({"name": name, "shape": shape, "axis_names": spec["shape"],
                        "scalar": False, "dtype": spec["dtype"]})
    return {"axes": axes, "inputs": inputs, "outputs": outputs, "input_bytes": input_bytes,
            "output_bytes": output_bytes}


def bench_worker(path, definition, runs):
    """Worker start (runs + 1 warm-up) and, in the last run's worker, the job latencies."""
    base = {"name": definition["name"], "reference": definition["reference"],
            "inputs": list(definition["inputs"]), "outputs": list(definition["outputs"])}
    smoke = dict(base, job="smoke", plan=simple_plan(definition))
    starts, hwms, rsss, cpus, jobs, exits = [], [], [], [], [], []
    hello = None
    for i in range(runs + 1):
        worker = Worker(path)
        hello = worker.hello
        this_jobs = []
        for request in (dict(base, job="build"), smoke, dict(base, job="build"), smoke):
            seconds, reply = worker.job(request)
            if reply["outcome"] != "ok":
                sys.exit(f"job {request['job']} of {definition['name']}: {reply}")
            this_jobs.append(seconds)
        hwm_after_jobs = vm_hwm_mib(worker.proc.pid)
        code, cpu, rss, exit_s = worker.close()
        if code != 0:
            sys.exit(f"fib-worker exited with {code} on EOF")
        if i == 0:
            continue
        starts.append(worker.greeting_s)
        hwms.append((worker.hwm_after_greeting, hwm_after_jobs))
        rsss.append(rss)
        cpus.append(cpu)
        jobs.append(this_jobs)
        exits.append(exit_s)
    return {"hello": hello, "starts": starts, "hwms": hwms, "rss": rsss, "cpu": cpus,
            "jobs": jobs, "exits": exits}


def run_once(cmd, work):
    """(exit status, wall s, CPU s, peak RSS MiB, stdout text, stderr text) of one fib run."""
    out_path, err_path = os.path.join(work, "stdout"), os.path.join(work, "stderr")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    with open(out_path, encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    with open(err_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, \
        stdout, stderr


def count(text, needle):
    return sum(1 for line in text.splitlines() if needle in line)


def bench_fib(label, cmd, runs, work):
    walls, cpus, rsss, codes, counts = [], [], [], set(), set()
    for i in range(runs + 1):
        code, wall, cpu, rss, stdout, stderr = run_once(cmd, work)
        if code not in (0, 1):
            what = f"signal {-code}" if code < 0 else f"exit status {code}"
            sys.exit(f"fib failed ({what}): {' '.join(cmd)}\n--- stderr ---\n{stderr[-4000:]}")
        counts.add((count(stdout, "reference build: ok"), count(stdout, "smoke run: ok"),
                    count(stdout, "smoke run skipped"), count(stdout, "[smoke.") +
                    count(stdout, "reference build failed")))
        codes.add(code)
        if i == 0:
            continue
        walls.append(wall)
        cpus.append(cpu)
        rsss.append(rss)
    if len(counts) != 1:
        sys.exit(f"{label}: outcome counts differ between runs: {sorted(counts)}")
    return {"label": label, "wall": statistics.median(walls), "wall_min": min(walls),
            "wall_max": max(walls), "cpu": statistics.median(cpus),
            "rss": statistics.median(rsss), "rss_max": max(rsss), "codes": sorted(codes),
            "counts": counts.pop()}


def print_fib_table(title, rows):
    print(f"\n{title}\n")
    print("| command | wall median (min–max) | CPU median (fib + worker) | peak RSS median "
          "(max), largest process | exit status | builds ok / smoke ok / smoke skipped |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        built, ok, skipped, _ = r["counts"]
        print(f"| {r['label']} | {ms(r['wall'])} ({r['wall_min'] * 1000:,.1f}–"
              f"{r['wall_max'] * 1000:,.1f}) | {ms(r['cpu'])} | {r['rss']:.1f} MB "
              f"({r['rss_max']:.1f}) | {'/'.join(map(str, r['codes']))} | {built} / {ok} / "
              f"{skipped} |")


def print_derived(smoke, build, none):
    overhead = build["wall"] - none["wall"]
    smoke_ok = smoke["counts"][1]
    extra = smoke["wall"] - build["wall"]
    rate = smoke_ok / extra if extra > 0 else float("nan")
    print(f"\nworker overhead (build-only − no worker): {ms(overhead)} wall, "
          f"{ms(build['cpu'] - none['cpu'])} CPU; smoke runs (− build-only): {ms(extra)} wall "
          f"for {smoke_ok} smoke runs ok ({smoke['counts'][2]} skipped) → "
          f"{rate:,.1f} smoke runs/s, {extra / max(smoke_ok, 1) * 1000:,.1f} ms each")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    corpus = os.path.join(root, "..", "shared", "corpus")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"))
    parser.add_argument("--worker",
                        default=os.path.join(root, "build", "apps", "fib-worker", "fib-worker"))
    parser.add_argument("--dataset", default=os.path.join(corpus, "dataset"))
    parser.add_argument("--dumps", default=os.path.join(corpus, "dumps"))
    parser.add_argument("--definition", default=None,
                        help="for the job latencies (default: DATASET's rmsnorm_h128.json)")
    parser.add_argument("--start-runs", type=int, default=7)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if args.start_runs < 1 or args.runs < 1:
        parser.error("--start-runs and --runs must be at least 1")
    fib, worker = os.path.abspath(args.fib), os.path.abspath(args.worker)
    dataset, dumps = os.path.normpath(args.dataset), os.path.normpath(args.dumps)
    definition_path = args.definition or os.path.join(dataset, "definitions", "rmsnorm",
                                                      "rmsnorm_h128.json")
    with open(definition_path, encoding="utf-8") as f:
        definition = json.load(f)

    print(f"machine: {platform.node()}, {platform.system()} {platform.release()}, "
          f"{os.cpu_count()} CPUs; load average at start {loadavg()}")
    print(f"fib: {fib}\nworker: {worker}")

    # 1 + 2: the worker alone.
    w = bench_worker(worker, definition, args.start_runs)
    hello = w["hello"]
    print(f"worker greeting: torch {hello.get('torch')}, Python {hello.get('python')}, "
          f"cuda {hello.get('cuda')}, float8 {hello.get('float8')}")
    print(f"\n### Worker start and job latency ({args.start_runs} runs after a warm-up; jobs on "
          f"{definition['name']})\n")
    print("| what | median | min | max |")
    print("|---|---|---|---|")

    def row(label, values, unit="ms"):
        if unit == "ms":
            print(f"| {label} | {ms(statistics.median(values))} | {ms(min(values))} "
                  f"| {ms(max(values))} |")
        else:
            print(f"| {label} | {statistics.median(values):.1f} MB | {min(values):.1f} MB "
                  f"| {max(values):.1f} MB |")

    row("spawn → greeting (Python started, torch imported)", w["starts"])
    for k, label in enumerate(["first `build` job", "first `smoke` job", "second `build` job",
                               "second `smoke` job"]):
        row(label, [jobs[k] for jobs in w["jobs"]])
    row("EOF → worker exited (reaped)", w["exits"])
    row("CPU of the whole worker life (start, 4 jobs, exit)", w["cpu"])
    row("VmHWM right after the greeting", [h[0] for h in w["hwms"]], unit="MB")
    row("VmHWM after the 4 jobs", [h[1] for h in w["hwms"]], unit="MB")
    row("peak RSS from wait4 (whole life)", w["rss"], unit="MB")

    # 3: whole runs through fib.
    work = tempfile.mkdtemp(prefix="fib-bench-worker-")
    try:
        base = [fib, "validate", "--dataset", dataset, "--outputs", "stdout"]
        rows = [bench_fib("`validate --dataset D --smoke`", base + ["--smoke"], args.runs, work),
                bench_fib("`validate --dataset D` (build check)", base, args.runs, work),
                bench_fib("`validate --dataset D --disable-gpu` (no worker)",
                          base + ["--disable-gpu"], args.runs, work)]
        print_fib_table(f"### Dataset mode: {dataset} ({args.runs} runs after a warm-up)", rows)
        print_derived(*rows)

        normalized = os.path.join(work, "normalized")
        code, *_ = run_once([fib, "normalize", "--output-dir", normalized, dumps], work)
        if code not in (0, 1):
            sys.exit(f"fib normalize failed with {code}")
        files = sum(len([n for n in ns if n.endswith(".json")]) for _, _, ns in os.walk(normalized))
        rows = [bench_fib("`validate --smoke DUMPS`", [fib, "validate", "--smoke", normalized],
                          args.runs, work),
                bench_fib("`validate --exec DUMPS`", [fib, "validate", "--exec", normalized],
                          args.runs, work),
                bench_fib("`validate DUMPS` (no worker)", [fib, "validate", normalized],
                          args.runs, work)]
        print_fib_table(f"### File mode: {files} normalized dumps of {dumps} "
                        f"({args.runs} runs after a warm-up)", rows)
        print_derived(*rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nload average at end {loadavg()}")


if __name__ == "__main__":
    main()
