#!/usr/bin/env python3
"""Benchmark (not a test): `fib validate --dataset` against the old tool at growing sizes, cold and
warm, side by side in one run, with the CPython parse floor and the verdict checks.

    python3 bench/validate_scaling.py --old-tool DIR [--fib build/apps/fib/fib]
        [--fib-before OTHER_FIB] [--source DIR] [--sizes 1,10,100] [--shared-text-size 100]
        [--runs 5] [--workdir PARENT] [--keep]

DIR is the old tool's directory made by its setup script (it holds env.sh); without --old-tool,
$FIB_OLD_TOOL. Rows: for each size N of --sizes, N copies of the source dataset (default the
corpus dataset, ../shared/corpus/dataset next to the repository) made by scale_dataset.py with
--distinct-text, so that every definition's reference and constraints are its own text; plus one
row of --shared-text-size plain copies ("shared text": the copies share that text; 0 drops the
row). The copies live in a fresh temporary directory (under --workdir, default the system's
temporary directory; never inside the repository), removed at the end unless --keep.

Contenders, each run with a fresh output folder:
  old       `python3 -m flashinfer_bench validate --dataset COPY --disable-gpu --outputs json
            --output-folder OUT` in the old tool's environment (it has no cache: always cold);
  fib cold  `fib validate --dataset COPY --disable-gpu --outputs json --output-folder OUT
            --cache-dir EMPTY` with a new empty cache directory for every run;
  fib warm  the same with one cache directory per row, primed by one unmeasured run on the same
            copy before the rounds;
  before    --fib-before: like fib cold (a new empty cache directory per run) when its
            `validate --help` mentions --cache-dir, else the command without cache flags; so an
            earlier fib with a cache is timed cold, not warm from its default cache directory.
A fib whose `validate --help` does not mention --cache-dir runs without cache flags, and its warm
row reads "n/a (no cache)".

Per row: one warm-up round, then --runs timed rounds, then --sampled-runs sampled rounds; every
round runs each contender once, in the order of row k of a balanced Latin square (a Williams
design: over n rounds each contender runs right after each other one once), so drifts in load,
and what the run before left behind (a cold run or the old tool frees hundreds of megabytes, which
the hypervisor may take back, so the next run's fresh memory costs more), hit all alike. (Up to
run 18 round k started with contender k mod n in a fixed cycle, so fib warm always ran right after
fib cold or the old tool, and "before" after a warm run.) Per timed run: wall time from spawn to reap; CPU (user + system) and peak RSS from
os.wait4, which include the child's reaped descendants (ru_maxrss is then the largest single
process of the tree). Timed runs are not sampled: nothing of this script runs beside them (a
sampler reading /proc every 5 ms took 7-10% of the wall time of fib's short two-threaded warm
runs on two cores, and next to nothing of the old tool's). Per sampled run, only the tree's totals
are kept: every --sample-ms milliseconds the sum of the resident sizes (VmRSS, from
/proc/PID/statm) and the sum of the proportional set sizes (Pss, from /proc/PID/smaps_rollup) of
the child and all its descendants (/proc/PID/task/TID/children), the largest sums kept. A peak
shorter than the interval can be missed. Pages that forked processes share count once per
process in the RSS sum, so it is an upper bound of the memory in use; the PSS sum counts each
page once in all (a page n processes map counts 1/n in each), the memory the tree takes. The runs are started by a
small helper process of this script (see Spawner: a run's ru_maxrss would otherwise include this
process's own peak). Medians (min-max); MB = 2**20 bytes.

The floor of a row: CPython's own parse time of exactly the sources fib parses (every non-empty
string `reference` of the copy's definitions compiled as a module, every non-empty string
constraint as an expression, both with `compile(..., '<unknown>', MODE, _ast.PyCF_ONLY_AST)`),
measured in one /usr/bin/python3 process (--python), best of 5, divided by the number of usable
cores, plus the time to read every file of the copy (page cache warm), best of 5. Next to it,
the measured floor: the start of a CPython process (`--python -I -S -c pass`, best of 5), plus
the same sources parsed on all cores at once (one forked process per core, each parsing every
cores-th source, timed from a common start until the last exits, best of 5; the one-process
parse time instead when that is shorter), plus the read time:
what a validator that parses every source with CPython on all cores cannot beat on this machine,
where cores that share the work do not each keep their speed alone.

Verdict checks (exit status 1 when one fails): within each row, every fib report JSON (cold, warm,
the priming run, before) is byte-identical, and the old tool's status of every definition equals
fib's. The issue's targets are printed with PASS/FAIL; they do not change the exit status.
Progress goes to stderr; stdout is a markdown block for bench/README.md. Standard library only.
"""
# The measuring part comes first and imports only what it needs: it is also the whole of the
# --spawner process, which has to stay small (see Spawner below).
import os
import select
import sys
import time

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MB = 1 << 20


def _has_children_files():
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


CHILDREN_FILES = _has_children_files()


def _children(pid):
    """The direct children of `pid`, from its threads' children files (or a scan of /proc)."""
    kids = []
    if CHILDREN_FILES:
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    kids.extend(int(x) for x in f.read().split())
        except OSError:
            pass
        return kids
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 1 and int(fields[1]) == pid:
                kids.append(int(entry))
    return kids


def _pss_bytes(pid):
    """The proportional set size of `pid` (Pss of /proc/PID/smaps_rollup): each page it maps
    counted as 1/n of a page when n processes map it; 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def tree_memory_bytes(pid):
    """(sum of VmRSS, sum of Pss) of `pid` and all its descendants now (processes that vanish
    count 0)."""
    rss, pss, stack, seen = 0, 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm", "rb") as f:
                rss += int(f.read().split()[1]) * PAGE_BYTES
        except (OSError, IndexError, ValueError):
            continue
        pss += _pss_bytes(p)
        stack.extend(_children(p))
    return rss, pss


def run_measured(argv, env, stderr_path, interval):
    """Runs argv[0] (an absolute path) with stdin and stdout on /dev/null and stderr into
    `stderr_path`. Returns (exit status, wall s, CPU s, ru_maxrss KiB, peak tree RSS bytes, peak
    tree PSS bytes): wall from spawn to reap, CPU and ru_maxrss from wait4, the tree's RSS and PSS
    sampled every `interval` s while it runs (a pidfd wakes the loop as soon as the child exits);
    with `interval` <= 0 the run is not sampled (both read 0)."""
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                0o644)]
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    peak, peak_pss = 0, 0
    while True:
        if interval <= 0:  # not sampled: nothing runs beside the child
            poller.poll()
            break
        rss, pss = tree_memory_bytes(pid)
        peak, peak_pss = max(peak, rss), max(peak_pss, pss)
        if poller.poll(interval * 1000):
            break
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    os.close(pidfd)
    return (os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss, peak, peak_pss)


def spawner_loop():
    """--spawner: reads requests from stdin until it closes, answers one line each on stdout.
    A request is a decimal length and a newline, then that many bytes: NUL-separated stderr
    path, interval, argument count, the arguments, then NAME=VALUE environment entries."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = stdin.readline()
        if not header:
            return
        fields = [os.fsdecode(f) for f in stdin.read(int(header)).split(b"\0")]
        count = int(fields[2])
        argv = fields[3:3 + count]
        env = dict(item.split("=", 1) for item in fields[3 + count:])
        result = run_measured(argv, env, fields[0], float(fields[1]))
        stdout.write((" ".join(repr(x) for x in result) + "\n").encode())
        stdout.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--spawner"]:
    spawner_loop()
    sys.exit(0)

import argparse  # noqa: E402  (everything below is the benchmark process's alone)
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale_dataset  # noqa: E402
import side_by_side  # noqa: E402  (old_tool_env: the old tool's environment from its env.sh)

COLD_TARGET_AT_1X = 30.0       # old / fib cold wall at x1
COLD_TARGET = 12.0             # old / fib cold wall at x10 and larger
WARM_TARGET = 60.0             # old / fib warm wall at every size
RSS_FRACTION_TARGET = 5.0      # fib's peak RSS at most 1/5 of the old tool's
RSS_MB_TARGET_AT_100X = 60.0   # fib's peak RSS at x100 and larger
FLOOR_TARGET = 1.5             # fib cold wall / floor at x10 and larger
NO_CACHE = "n/a (no cache)"


def log(text):
    print(text, file=sys.stderr, flush=True)


def high_water_mb(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Spawner:
    """A small process of its own (`python3 -S THIS --spawner`) that starts, samples and reaps
    every measured run.

    At exec the kernel carries the high-water RSS of the memory image being replaced into the
    process's ru_maxrss, so a child spawned by this benchmark process (which grows: it writes the
    copies and reads the reports) would report at least the benchmark's own peak. The spawner is
    a fresh interpreter that imports only the measuring part of this file and never grows; its
    peak (printed with the results) is the lowest peak RSS (wait4) a run can report."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-S", os.path.abspath(__file__),
                                      "--spawner"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def run(self, cmd, env, stderr_path, interval):
        """dict of exit, wall s, cpu s, maxrss MB (wait4), tree and tree_pss MB (sampled) of one
        run."""
        program = shutil.which(cmd[0], path=env.get("PATH", os.defpath))
        if program is None:
            sys.exit(f"{cmd[0]}: not found on the contender's PATH")
        fields = [stderr_path, repr(interval), str(len(cmd)), os.path.abspath(program), *cmd[1:]]
        fields += [f"{k}={v}" for k, v in env.items()]
        payload = b"\0".join(os.fsencode(f) for f in fields)
        self.proc.stdin.write(b"%d\n" % len(payload) + payload)
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("the spawner process ended unexpectedly")
        code, wall, cpu, maxrss_kib, tree_bytes, pss_bytes = line.split()
        return {"exit": int(code), "wall": float(wall), "cpu": float(cpu),
                "maxrss": int(maxrss_kib) / 1024, "tree": int(tree_bytes) / MB,
                "tree_pss": int(pss_bytes) / MB}

    def high_water_mb(self):
        return high_water_mb(self.proc.pid)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


# --- Contenders ---

def supports_cache(fib):
    done = subprocess.run([fib, "validate", "--help"], capture_output=True, text=True)
    return "--cache-dir" in done.stdout + done.stderr


class Contender:
    """One command line per run; `kind` is "old" or "fib"; `cache` is None, "cold" or "warm"."""

    def __init__(self, name, kind, program, env, cache=None):
        self.name, self.kind, self.program, self.env, self.cache = name, kind, program, env, cache
        self.warm_dir = None
        self._run_cache = None

    def arguments(self, copy, out, cache_dir):
        if self.kind == "old":
            head = ["python3", "-m", "flashinfer_bench"]
        else:
            head = [self.program]
        cmd = head + ["validate", "--dataset", copy, "--disable-gpu", "--outputs", "json",
                      "--output-folder", out]
        return cmd + (["--cache-dir", cache_dir] if self.cache else [])

    def command(self, copy, out, work):
        """The command of one run; a cold contender gets a new empty cache directory."""
        if self.cache == "cold":
            self._run_cache = tempfile.mkdtemp(prefix="cache-cold-", dir=work)
            return self.arguments(copy, out, self._run_cache)
        return self.arguments(copy, out, self.warm_dir)

    def after_run(self):
        if self._run_cache:
            shutil.rmtree(self._run_cache, ignore_errors=True)
            self._run_cache = None

    def template(self):
        """The command with placeholders, for the printed method."""
        cache = "NEW_EMPTY_DIR" if self.cache == "cold" else "PRIMED_DIR"
        text = " ".join(self.arguments("COPY", "OUT", cache))
        if self.kind == "old":
            return ". OLD_TOOL/env.sh; " + text
        return text.replace(self.program, "FIB" if self.name.startswith("fib") else "FIB_BEFORE")


def make_contenders(args, fib_has_cache):
    env = dict(os.environ)
    contenders = [Contender("old", "old", "python3", side_by_side.old_tool_env(args.old_tool))]
    if fib_has_cache:
        contenders += [Contender("fib cold", "fib", args.fib, env, "cold"),
                       Contender("fib warm", "fib", args.fib, env, "warm")]
    else:
        contenders.append(Contender("fib cold", "fib", args.fib, env))
    if args.fib_before:
        before_cache = "cold" if supports_cache(args.fib_before) else None
        contenders.append(Contender("before", "fib", args.fib_before, env, before_cache))
    return contenders


# --- One row ---

def read_report(out):
    names = [n for n in os.listdir(out) if n.endswith(".json")]
    if len(names) != 1:
        raise RuntimeError(f"expected one report JSON in {out}, found {names}")
    with open(os.path.join(out, names[0]), "rb") as f:
        return f.read()


def statuses(report_bytes):
    return {name: entry.get("status")
            for name, entry in json.loads(report_bytes)["definitions"].items()}


class RowRecord:
    """What a row collects: samples per contender, fib report digests, statuses."""

    def __init__(self, contenders):
        self.samples = {c.name: [] for c in contenders}       # timed (unsampled) runs
        self.tree_samples = {c.name: [] for c in contenders}  # tree RSS peaks of sampled runs
        self.pss_samples = {c.name: [] for c in contenders}   # tree PSS peaks of sampled runs
        self.digests = {}           # sha256 -> [contender names that produced it]
        self.fib_statuses = None
        self.old_statuses = []      # one dict per old run

    def record_report(self, contender, data):
        if contender.kind == "old":
            self.old_statuses.append(statuses(data))
            return
        digest = hashlib.sha256(data).hexdigest()
        self.digests.setdefault(digest, []).append(contender.name)
        if self.fib_statuses is None:
            self.fib_statuses = statuses(data)


def one_run(spawner, contender, copy, work, record, sample_interval, measured):
    out = tempfile.mkdtemp(prefix="out-", dir=work)
    cmd = contender.command(copy, out, work)
    stderr_path = os.path.join(work, "stderr.txt")
    sample = spawner.run(cmd, contender.env, stderr_path, sample_interval)
    contender.after_run()
    if sample["exit"] not in (0, 1):
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-3000:]
        sys.exit(f"{contender.name}: exit status {sample['exit']}: {' '.join(cmd)}\n{tail}")
    record.record_report(contender, read_report(out))
    shutil.rmtree(out, ignore_errors=True)
    if measured == "timed":
        record.samples[contender.name].append(sample)
    elif measured == "sampled":
        record.tree_samples[contender.name].append(sample["tree"])
        record.pss_samples[contender.name].append(sample["tree_pss"])


def balanced_orders(n):
    """The rows of a Williams design for n items: across the rows each item comes right after
    each other item equally often (once for even n; twice, over 2n rows, for odd n)."""
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(item + shift) % n for item in first] for shift in range(n)]
    if n % 2 == 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


def measure_row(spawner, copy, contenders, runs, sampled_runs, work, sample_interval):
    record = RowRecord(contenders)
    for c in contenders:
        if c.cache == "warm":
            c.warm_dir = tempfile.mkdtemp(prefix="cache-warm-", dir=work)
            log("  priming the warm cache")
            one_run(spawner, c, copy, work, record, 0, measured="no")
    # The timed rounds run unsampled: sampling reads /proc every few milliseconds from a process
    # beside the run, which on two cores takes CPU from a run that uses both. The tree RSS comes
    # from the sampled rounds after them, whose times are not used.
    orders = balanced_orders(len(contenders))
    for round_index in range(runs + 1 + sampled_runs):
        # The warm-up round takes the first row; the timed rounds start the square again.
        row = orders[(round_index - 1 if round_index > 0 else 0) % len(orders)]
        order = [contenders[i] for i in row]
        kind = "no" if round_index == 0 else "timed" if round_index <= runs else "sampled"
        label = {"no": " (warm-up)", "timed": "", "sampled": " (sampled)"}[kind]
        log(f"  round {round_index}{label}: {', '.join(c.name for c in order)}")
        for c in order:
            one_run(spawner, c, copy, work, record,
                    sample_interval if kind == "sampled" else 0, measured=kind)
    for c in contenders:
        if c.warm_dir:
            shutil.rmtree(c.warm_dir, ignore_errors=True)
            c.warm_dir = None
    return record


# --- The floor ---

def floor_probe(directory):
    """Runs in --python: prints the parse and read times of `directory` as JSON."""
    import _ast
    references, constraints = [], []
    for dirpath, _, filenames in os.walk(os.path.join(directory, "definitions")):
        for name in filenames:
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    obj = json.load(f)
            except (ValueError, OSError):
                continue
            if not isinstance(obj, dict):
                continue
            if isinstance(obj.get("reference"), str) and obj["reference"]:
                references.append(obj["reference"])
            if isinstance(obj.get("constraints"), list):
                constraints += [c for c in obj["constraints"] if isinstance(c, str) and c]

    sources = [(r, "exec") for r in references] + [(c, "eval") for c in constraints]

    def parse(share):
        for source, mode in share:
            try:
                compile(source, "<unknown>", mode, _ast.PyCF_ONLY_AST)
            except (SyntaxError, ValueError):
                pass

    def parse_all():
        parse(sources)

    cores = len(os.sched_getaffinity(0))

    def parse_on_all_cores():
        # One forked process per core, each parsing every cores-th source; they start together
        # (a byte on a pipe each) and the time runs until the last one has exited.
        starts, children = [], []
        for index in range(cores):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(write_end)
                os.read(read_end, 1)
                parse(sources[index::cores])
                os._exit(0)
            os.close(read_end)
            starts.append(write_end)
            children.append(pid)
        begin = time.perf_counter()
        for write_end in starts:
            os.write(write_end, b"x")
            os.close(write_end)
        for pid in children:
            os.waitpid(pid, 0)
        return time.perf_counter() - begin

    files = [os.path.join(d, n) for d, _, names in os.walk(directory) for n in names]

    def read_all():
        total = 0
        for path in files:
            with open(path, "rb") as f:
                total += len(f.read())
        return total

    size = read_all()  # warms the page cache
    print(json.dumps({"parse_s": _best_of(5, parse_all), "read_s": _best_of(5, read_all),
                      "parallel_parse_s": min(parse_on_all_cores() for _ in range(5)),
                      "references": len(references), "constraints": len(constraints),
                      "files": len(files), "bytes": size}))


def _best_of(n, fn):
    best = None
    for _ in range(n):
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return best


def measure_floor(python, copy):
    done = subprocess.run([python, os.path.abspath(__file__), "--floor-probe", copy],
                          capture_output=True, text=True, check=True)
    floor = json.loads(done.stdout)
    floor["cores"] = len(os.sched_getaffinity(0))
    floor["floor_s"] = floor["parse_s"] / floor["cores"] + floor["read_s"]
    floor["start_s"] = interpreter_start_s(python)
    # Parsing on one core is what a validator would do where that is faster (a small row).
    floor["measured_parse_s"] = min(floor["parse_s"], floor["parallel_parse_s"])
    floor["measured_floor_s"] = floor["start_s"] + floor["measured_parse_s"] + floor["read_s"]
    return floor


def interpreter_start_s(python):
    """Best of 5: the wall time of `python -I -S -c pass` (a CPython process started, nothing
    imported), the least a validator pays to have CPython parse anything."""
    def start():
        subprocess.run([python, "-I", "-S", "-c", "pass"], check=True)
    return _best_of(5, start)


# --- Summaries ---

def summary(samples, trees, psses):
    """Medians (and spreads) of a contender's timed samples and sampled tree RSS and PSS peaks, in
    ms and MB; None when it did not run."""
    if not samples or not trees:
        return None
    walls = [s["wall"] * 1000 for s in samples]
    return {"wall": statistics.median(walls), "wall_min": min(walls), "wall_max": max(walls),
            "cpu": statistics.median(s["cpu"] * 1000 for s in samples),
            "maxrss": statistics.median(s["maxrss"] for s in samples),
            "tree": statistics.median(trees), "tree_max": max(trees),
            "pss": statistics.median(psses), "pss_max": max(psses)}


def ratio_text(value):
    return "–" if value is None else f"{value:,.1f}×"


def old_over(row, name, key):
    old, fib = row["medians"].get("old"), row["medians"].get(name)
    if not old or not fib or not fib[key]:
        return None
    return old[key] / fib[key]


def results_table(rows, contenders):
    lines = ["| row | definitions | contender | wall median (min–max) | CPU median "
             "| peak RSS (wait4) median | tree RSS (sampled) median (max) "
             "| tree PSS (sampled) median (max) |",
             "|---|---|---|---|---|---|---|---|"]
    names = [c.name for c in contenders]
    if "fib warm" not in names:
        names.insert(names.index("fib cold") + 1, "fib warm")
    for row in rows:
        for name in names:
            m = row["medians"].get(name)
            if m is None:
                lines.append(f"| {row['label']} | {row['definitions']:,} | {name} | {NO_CACHE} "
                             "| | | | |")
                continue
            lines.append(f"| {row['label']} | {row['definitions']:,} | {name} "
                         f"| {m['wall']:,.1f} ms ({m['wall_min']:,.1f}–{m['wall_max']:,.1f}) "
                         f"| {m['cpu']:,.1f} ms | {m['maxrss']:.1f} MB "
                         f"| {m['tree']:.1f} MB ({m['tree_max']:.1f}) "
                         f"| {m['pss']:.1f} MB ({m['pss_max']:.1f}) |")
    return lines


def ratios_table(rows):
    lines = ["| row | old / fib cold: wall | CPU | peak RSS | old / fib warm: wall | CPU "
             "| peak RSS | floor (parse / cores + read) | fib cold wall / floor "
             "| measured floor (start + parse on all cores + read) | fib cold wall / measured |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        cells = [ratio_text(old_over(row, "fib cold", k)) for k in ("wall", "cpu", "maxrss")]
        if "fib warm" in row["medians"]:
            cells += [ratio_text(old_over(row, "fib warm", k)) for k in ("wall", "cpu", "maxrss")]
        else:
            cells += [NO_CACHE, "", ""]
        floor = row["floor"]
        floor_text = (f"{floor['floor_s'] * 1000:,.1f} ms ({floor['parse_s'] * 1000:,.1f} / "
                      f"{floor['cores']} + {floor['read_s'] * 1000:,.1f})")
        measured_text = (f"{floor['measured_floor_s'] * 1000:,.1f} ms ("
                         f"{floor['start_s'] * 1000:,.1f} + {floor['measured_parse_s'] * 1000:,.1f}"
                         f" + {floor['read_s'] * 1000:,.1f})")
        cold = row["medians"]["fib cold"]["wall"]
        lines.append(f"| {row['label']} | {' | '.join(cells)} | {floor_text} "
                     f"| {cold / (floor['floor_s'] * 1000):.2f}× | {measured_text} "
                     f"| {cold / (floor['measured_floor_s'] * 1000):.2f}× |")
    return lines


def verdict(ok):
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def _speed_targets(row):
    size, out = row["size"], []
    need = COLD_TARGET_AT_1X if size == 1 else COLD_TARGET
    cold = old_over(row, "fib cold", "wall")
    out.append((f"wall old / fib cold ≥ {need:g}×", ratio_text(cold), cold >= need))
    if "fib warm" in row["medians"]:
        warm = old_over(row, "fib warm", "wall")
        out.append((f"wall old / fib warm ≥ {WARM_TARGET:g}×", ratio_text(warm),
                    warm >= WARM_TARGET))
    else:
        out.append((f"wall old / fib warm ≥ {WARM_TARGET:g}×", NO_CACHE, None))
    if size >= 10:
        ratio = row["medians"]["fib cold"]["wall"] / (row["floor"]["floor_s"] * 1000)
        out.append((f"fib cold wall / floor ≤ {FLOOR_TARGET:g}×", f"{ratio:.2f}×",
                    ratio <= FLOOR_TARGET))
    return out


def _memory_targets(row):
    out = []
    for name in ("fib cold", "fib warm"):
        if name not in row["medians"]:
            continue
        for key, what in (("maxrss", "peak RSS (wait4)"), ("tree", "tree RSS (sampled)"),
                          ("pss", "tree PSS (sampled)")):
            fraction = old_over(row, name, key)
            out.append((f"{what} of {name} ≤ 1/{RSS_FRACTION_TARGET:g} of old's",
                        f"1/{fraction:.1f}", fraction >= RSS_FRACTION_TARGET))
            if row["size"] >= 100:
                value = row["medians"][name][key]
                out.append((f"{what} of {name} ≤ {RSS_MB_TARGET_AT_100X:g} MB", f"{value:.1f} MB",
                            value <= RSS_MB_TARGET_AT_100X))
    return out


def targets_table(rows):
    lines = ["| target | row | measured | verdict |", "|---|---|---|---|"]
    for row in rows:
        if not row["distinct"]:
            continue  # shared text: informative only, a content-keyed cache may serve the copies
        for target, measured, ok in _speed_targets(row) + _memory_targets(row):
            lines.append(f"| {target} | {row['label']} | {measured} | {verdict(ok)} |")
    return lines


def marginal_lines(rows, contenders):
    distinct = sorted((r for r in rows if r["distinct"]), key=lambda r: r["size"])
    if len(distinct) < 2:
        return ["(needs two distinct-text sizes)"]
    lo, hi = distinct[-2], distinct[-1]
    extra = hi["definitions"] - lo["definitions"]
    lines = [f"Between {lo['label']} and {hi['label']} ({extra:,} more definitions): "
             "(median at the larger − median at the smaller) / extra definitions.", "",
             "| contender | wall per definition | CPU per definition |", "|---|---|---|"]
    for c in contenders:
        a, b = lo["medians"].get(c.name), hi["medians"].get(c.name)
        if a and b and extra:
            lines.append(f"| {c.name} | {(b['wall'] - a['wall']) / extra * 1000:,.1f} µs "
                         f"| {(b['cpu'] - a['cpu']) / extra * 1000:,.1f} µs |")
    return lines


# --- Verdict checks ---

def row_checks(row):
    """(lines, failed) for one row: identical fib reports; old statuses equal to fib's."""
    record, label, lines, failed = row["record"], row["label"], [], False
    if len(record.digests) == 1:
        (names,) = record.digests.values()
        counts = {n: names.count(n) for n in dict.fromkeys(names)}
        lines.append(f"- {label}: fib report JSON byte-identical across "
                     f"{', '.join(f'{n} ×{k}' for n, k in counts.items())}: OK")
    else:
        failed = True
        lines.append(f"- {label}: **FAIL**: fib report JSON differs between runs:")
        for digest, names in record.digests.items():
            lines.append(f"  - sha256 {digest[:16]}: {', '.join(sorted(set(names)))}")
    fib = record.fib_statuses
    if len(fib) != row["definitions"]:
        failed = True
        lines.append(f"- {label}: **FAIL**: the fib report has {len(fib)} definitions, the copy "
                     f"{row['definitions']}")
    mismatches = []
    for i, old in enumerate(record.old_statuses):
        for name in sorted(set(old) | set(fib)):
            if old.get(name) != fib.get(name):
                mismatches.append(f"  - old run {i}: {name}: old {old.get(name)}, "
                                  f"fib {fib.get(name)}")
    if mismatches:
        failed = True
        lines.append(f"- {label}: **FAIL**: {len(mismatches)} status mismatches, old tool vs fib:")
        lines += mismatches[:40] + (["  - ..."] if len(mismatches) > 40 else [])
    else:
        lines.append(f"- {label}: old tool's status equals fib's for all {len(fib):,} "
                     f"definitions in each of {len(record.old_statuses)} old runs: OK")
    return lines, failed


# --- Machine state, commands, output ---

def _output(cmd, cwd=None):
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=30)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _tree_head(path):
    """The HEAD of the git work tree holding `path`, as words."""
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    head = _output(["git", "-C", directory, "rev-parse", "--short", "HEAD"])
    if head is None:
        return "not in a git work tree"
    dirty = _output(["git", "-C", directory, "status", "--porcelain", "--untracked-files=no"])
    return f"in a work tree at {head}" + (" with uncommitted changes" if dirty else "")


def machine_state(root, binaries):
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    parts = [time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
             f"nproc {len(os.sched_getaffinity(0))}", f"load average {load}",
             f"kernel {platform.release()}", f"this script {_tree_head(root)}"]
    for name, binary in binaries:
        version = _output([binary, "--version"]) or "no --version"
        parts.append(f"{name} `{version}` ({_tree_head(binary)})")
    return "; ".join(parts)


def invocation(args):
    cmd = ["python3", "bench/validate_scaling.py", "--old-tool", "OLD_TOOL", "--fib", args.fib]
    if args.fib_before:
        cmd += ["--fib-before", args.fib_before]
    cmd += ["--sizes", args.sizes, "--shared-text-size", str(args.shared_text_size),
            "--runs", str(args.runs), "--sampled-runs", str(args.sampled_runs)]
    return " ".join(cmd)


def markdown(args, rows, contenders, states, fib_has_cache, spawner_peak):
    cores = rows[0]["floor"]["cores"] if rows else len(os.sched_getaffinity(0))
    lines = ["```sh", invocation(args), "```", "",
             f"Machine at the start: {states[0]}.", "", f"Machine at the end: {states[1]}.", "",
             "Commands (COPY the row's copy, OUT a fresh folder per run, NEW_EMPTY_DIR a new "
             "empty cache directory per run, PRIMED_DIR the row's primed cache directory):", ""]
    lines += [f"- {c.name}: `{c.template()}`" for c in contenders]
    if not fib_has_cache:
        lines.append(f"- fib warm: {NO_CACHE}: this fib's `validate --help` has no --cache-dir")
    rounds = f"{args.runs} round{'' if args.runs == 1 else 's'}"
    sampled = f"{args.sampled_runs} round{'' if args.sampled_runs == 1 else 's'}"
    lines += ["", f"{rounds} timed after one warm-up round per row, contenders in a balanced "
              f"order (each runs right after each other one equally often), none of them sampled; then {sampled} whose runs' tree RSS and PSS are sampled "
              f"every {args.sample_ms:g} ms (their times are not used); {cores} usable cores; "
              f"runs spawned by a helper process whose own peak RSS, {spawner_peak:.1f} MB, is "
              "the lowest peak (wait4) a run can show.", ""]
    lines += results_table(rows, contenders) + [""] + ratios_table(rows) + [""]
    lines += ["What the floor covers:", ""] + [
        f"- {r['label']}: {r['floor']['references']:,} references and "
        f"{r['floor']['constraints']:,} constraints parsed; {r['floor']['files']:,} files, "
        f"{r['floor']['bytes'] / MB:,.1f} MB read" for r in rows] + [""]
    lines += ["Targets (the shared-text row is informative only):", ""] + targets_table(rows)
    lines += ["", "Marginal cost per definition:", ""] + marginal_lines(rows, contenders)
    lines += ["", "Verdict checks:", ""]
    failed = False
    for row in rows:
        row_lines, row_failed = row_checks(row)
        lines += row_lines
        failed = failed or row_failed
    return lines, failed


def row_specs(args):
    specs = [(f"×{n}", n, True) for n in args.size_list]
    if args.shared_text_size:
        specs.append((f"×{args.shared_text_size} shared text", args.shared_text_size, False))
    return specs


def run_rows(args, spawner, contenders, work):
    rows = []
    for label, size, distinct in row_specs(args):
        copy = os.path.join(work, f"x{size}" + ("" if distinct else "-shared"))
        log(f"{label}: writing {size} copies")
        definitions = scale_dataset.scale(args.source, copy, size, distinct)
        log(f"{label}: {definitions} definitions; measuring the floor")
        floor = measure_floor(args.python, copy)
        record = measure_row(spawner, copy, contenders, args.runs, args.sampled_runs, work,
                             args.sample_ms / 1000)
        rows.append({"label": label, "size": size, "distinct": distinct,
                     "definitions": definitions, "floor": floor, "record": record,
                     "medians": {n: summary(s, record.tree_samples[n], record.pss_samples[n])
                                 for n, s in record.samples.items()}})
        if not args.keep:
            shutil.rmtree(copy, ignore_errors=True)
    return rows


def parse_arguments(root):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fib", default=os.path.join(root, "build", "apps", "fib", "fib"))
    parser.add_argument("--fib-before",
                        help="another fib binary, run cold (without cache flags if it has no cache)")
    parser.add_argument("--old-tool", default=os.environ.get("FIB_OLD_TOOL", ""),
                        help="the old tool's directory with env.sh (default $FIB_OLD_TOOL)")
    parser.add_argument("--source", default=os.path.join(root, "..", "shared", "corpus",
                                                         "dataset"))
    parser.add_argument("--sizes", default="1,10,100")
    parser.add_argument("--shared-text-size", type=int, default=100,
                        help="copies of the plain (shared-text) row; 0: no such row")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", help="parent of the temporary directory (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the interpreter of the floor (fib's embedded Python's)")
    parser.add_argument("--sample-ms", type=float, default=5.0)
    parser.add_argument("--sampled-runs", type=int, default=2,
                        help="rounds after the timed ones whose runs are sampled for tree RSS")
    parser.add_argument("--floor-probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_probe:
        return args
    try:
        args.size_list = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes takes comma-separated whole numbers")
    if any(n < 1 for n in args.size_list) or args.runs < 1 or args.shared_text_size < 0:
        parser.error("sizes and --runs must be at least 1, --shared-text-size at least 0")
    if args.sampled_runs < 1 or args.sample_ms <= 0:
        parser.error("--sampled-runs must be at least 1 and --sample-ms above 0 (the tree RSS "
                     "columns and targets come from the sampled rounds)")
    if not args.old_tool or not os.path.isfile(os.path.join(args.old_tool, "env.sh")):
        parser.error("the old tool is needed: --old-tool DIR or $FIB_OLD_TOOL, DIR with env.sh")
    for binary in filter(None, (args.fib, args.fib_before)):
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary} is not an executable")
    args.source = os.path.normpath(args.source)
    return args


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = parse_arguments(root)
    if args.floor_probe:
        floor_probe(args.floor_probe)
        return 0
    parent = os.path.realpath(args.workdir or tempfile.gettempdir())
    if (parent + os.sep).startswith(os.path.realpath(root) + os.sep):
        sys.exit(f"--workdir must be outside the repository ({root})")
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fib-validate-scaling-", dir=parent)
    fib_has_cache = supports_cache(args.fib)
    if args.fib_before and supports_cache(args.fib_before):
        log("note: the before binary has --cache-dir; it runs cold, with a new empty one per run")
    contenders = make_contenders(args, fib_has_cache)
    binaries = [("fib", args.fib)] + ([("before", args.fib_before)] if args.fib_before else [])
    states = [machine_state(root, binaries)]
    log(f"machine: {states[0]}\nworking in {work}")
    for c in contenders:
        log(f"{c.name}: {c.template()}")
    spawner = Spawner()
    try:
        rows = run_rows(args, spawner, contenders, work)
        spawner_peak = spawner.high_water_mb()
    finally:
        spawner.close()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    states.append(machine_state(root, binaries))
    lines, failed = markdown(args, rows, contenders, states, fib_has_cache, spawner_peak)
    print("\n".join(lines))
    if failed:
        log("verdict checks FAILED (see above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
