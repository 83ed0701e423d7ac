#!/usr/bin/env python3
"""Crash safety of every fib command that writes files: SIGKILL at random moments, then rerun.

    python3 tests/crash/kill_at_random.py --fib build/apps/fib/fib [--writers NAME ...]
                                           [--kills K] [--seed S] [--list]

For each writer (WRITERS below) the test builds a fixture in a temporary directory, records its
pre-state, and runs the command once to completion for the expected post-state and its run time
T. Then, K times: a fresh copy of the fixture (at the same path, so that absolute paths in the
outputs are the same), the command started in its own process group and SIGKILLed after a delay
drawn uniformly from [0, 1.3 T] (one seeded random generator; the seed is printed), and the checks:

  (a) right after the kill, every path of the trial directory (the fixture, the command's working
      directory and its HOME) is in its pre-state or in its post-state: a file byte for byte and
      with its permission bits (never truncated, never mixed), a directory as a directory, and a
      path that both states have is never missing. Nothing else is there except the atomic
      writer's `.fib-XXXXXX` temporaries, and those only in directories the command writes into.
      The command's process group is empty (no child outlived it).
  (b) the same command rerun to completion exits as the first run did and leaves exactly the
      post-state, with no `.fib-*` temporary anywhere.

Writers whose outputs are not the same from run to run (validate's timestamped report files, the
timings in `fib run`'s trace lines) have their own invariant, stated at the writer.

A kill "interrupted the middle" of a run when the state it left is neither the pre-state nor the
post-state, or holds a temporary. Each writer must have at least MIN_MIDDLE_FRACTION of its kills
in the middle, so that the test cannot pass with kills that all came too early or too late; when a
writer falls short after K kills it gets more (up to 3 K) and fails if it is still short.

Environment: FIB_CRASH_SEED (the seed, default: from the clock), FIB_CRASH_KILLS (K, default 6).
Exit status 0 when every check held, 1 otherwise, 77 when every writer asked for was skipped.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
import report_fixtures  # noqa: E402
import stage_fixtures  # noqa: E402

SKIPPED = 77
DELAY_FACTOR = 1.3
MIN_MIDDLE_FRACTION = 0.2
DEFAULT_KILLS = 6
TEMPORARY = re.compile(r"^\.fib-[A-Za-z0-9]{6}$")
REPORT_NAME = re.compile(r"^report-\d{8}-\d{6}\.(json|txt)$")


# --- State of a directory tree ---------------------------------------------------------------

def snapshot(root):
    """{relative path: entry}: ('dir', mode), ('file', mode, sha1, size), ('link', target)."""
    state = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            info = os.lstat(path)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                state[relative] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                state[relative] = ("dir", mode)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as f:
                    data = f.read()
                state[relative] = ("file", mode, hashlib.sha1(data).hexdigest(), len(data))
            else:
                state[relative] = ("other", mode)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return state


def temporaries(state):
    return sorted(p for p in state if TEMPORARY.match(os.path.basename(p)))


def without(state, paths):
    return {p: e for p, e in state.items() if p not in set(paths)}


def describe(entry):
    if entry is None:
        return "absent"
    if entry[0] == "file":
        return f"file of {entry[3]} bytes, mode {entry[1]:o}"
    return f"{entry[0]} {entry[1]!r}"


# --- Running the command --------------------------------------------------------------------

class Trial:
    """One directory that holds a fresh copy of the fixture, the working directory and HOME."""

    def __init__(self, base):
        self.root = os.path.join(base, "trial")
        self.cwd = os.path.join(self.root, "cwd")
        self.home = os.path.join(self.root, "home")

    def reset(self, fixture):
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        shutil.copytree(fixture, self.root, symlinks=True)
        os.makedirs(self.cwd, exist_ok=True)
        os.makedirs(self.home, exist_ok=True)


def environment(trial, extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIB_")}
    env.update({"HOME": trial.home, "FIB_CACHE_PATH": os.path.join(trial.root, "cache"),
                "TMPDIR": os.path.join(trial.root, "tmp"), "LC_ALL": "C.UTF-8"})
    env.update({k: v.replace("@TRIAL@", trial.root) for k, v in extra.items()})
    os.makedirs(env["TMPDIR"], exist_ok=True)
    return env


def start(argv, trial, writer):
    return subprocess.Popen(argv, cwd=trial.cwd, env=environment(trial, writer.env),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def run_to_end(argv, trial, writer, timeout=300):
    began = time.monotonic()
    process = start(argv, trial, writer)
    _, err = process.communicate(timeout=timeout)
    return process.returncode, time.monotonic() - began, err.decode(errors="replace")


def group_is_empty(pgid, timeout=5.0):
    """Waits until no process of the group is left; False (after killing them) when one stays."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return True
        if time.monotonic() > deadline:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
            return False
        time.sleep(0.02)


# --- Writers ----------------------------------------------------------------------------------

class Writer:
    """A fib command that writes files, with its fixture.

    build(fixture)      writes the fixture below `fixture` (the trial root)
    argv(root)          the command line (fib first), for a trial rooted at `root`
    env                 extra environment ("@TRIAL@" is replaced by the trial root)
    canonical(state)    maps a snapshot to what is compared (default: the snapshot itself); for
                        outputs that differ from run to run
    check_rerun         an extra check of the state after the rerun (returns a list of problems)
    needs_worker        the writer needs fib's torch worker
    """

    def __init__(self, name, summary, build, argv, env=None, canonical=None, check_killed=None,
                 check_rerun=None, before_rerun=None, needs_worker=False):
        self.name = name
        self.summary = summary
        self.build = build
        self.argv = argv
        self.env = env or {}
        self.canonical = canonical or (lambda state, root: state)
        self.check_killed = check_killed
        self.check_rerun = check_rerun
        self.before_rerun = before_rerun
        self.needs_worker = needs_worker


FILES = 160  # inputs per fixture: enough that writing them takes a good part of a run


def dumps_fixture(folder, count=FILES, prefix="rmsnorm_h"):
    """`count` raw dumps (the dumper's format: no final newline, which normalize adds)."""
    for i in range(count):
        name = f"{prefix}{128 + i}"
        stage_fixtures.write_dump(folder, name + ".json", stage_fixtures.definition(name))


def staged_fixture(root, count=FILES):
    for i in range(count):
        op_type = "rmsnorm" if i % 2 else "layernorm"
        stage_fixtures.write_staged(root, stage_fixtures.definition(f"{op_type}_h{128 + i}",
                                                                    op_type))


def build_normalize_in_place(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"))
    # Permission bits other than the atomic writer's default: in place keeps them.
    for name in os.listdir(os.path.join(fixture, "dumps")):
        os.chmod(os.path.join(fixture, "dumps", name), 0o640)


def build_normalize_output_dir(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"))
    os.makedirs(os.path.join(fixture, "out"))


def build_stage(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"), FILES // 2, "rmsnorm_h")
    dumps_fixture(os.path.join(fixture, "dumps"), FILES // 2, "layernorm_h")
    os.makedirs(os.path.join(fixture, "ds"))
    # One definition already staged with other content: stage overwrites it.
    stage_fixtures.write_staged(os.path.join(fixture, "ds"), {
        **stage_fixtures.definition("rmsnorm_h128"), "description": "older"})


def build_tag_dataset(fixture):
    staged_fixture(os.path.join(fixture, "ds"))


def build_tag_manifest(fixture, fib):
    build_tag_dataset(fixture)
    # A manifest of half of the definitions, written by `fib stage` itself.
    dumps = os.path.join(fixture, "manifest-dumps")
    for i in range(0, FILES, 2):
        name = f"layernorm_h{128 + i}"
        stage_fixtures.write_dump(dumps, name + ".json", stage_fixtures.definition(name,
                                                                                   "layernorm"))
    subprocess.run([fib, "stage", dumps, "--dataset", os.path.join(fixture, "ds"), "--manifest",
                    os.path.join(fixture, "staged.json"), "--on-conflict", "overwrite"],
                   check=True, capture_output=True)
    shutil.rmtree(dumps)
    # Tags for `tag remove` to take away.
    subprocess.run([fib, "tag", "add", "model:llama-3.1-8b", "tp:2", "--dataset",
                    os.path.join(fixture, "ds")], check=True, capture_output=True)


def build_report_merge(fixture):
    for k, (first, last) in enumerate([(0, FILES // 2 + 20), (FILES // 2 - 20, FILES)]):
        root = os.path.join(fixture, f"in{k}")
        for i in range(first, last):
            name = f"d{i}"
            path = os.path.join(root, "definitions", "op", name + ".json")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(report_fixtures.definition(name), f, indent=2)
            trace = os.path.join(root, "traces", "alice", "op", name + ".jsonl")
            os.makedirs(os.path.dirname(trace), exist_ok=True)
            with open(trace, "w", encoding="utf-8") as f:
                for w in range(3):
                    line = json.loads(report_fixtures.trace("fast", f"w{w}", 1.0 + k + w))
                    line["definition"] = name
                    f.write(json.dumps(line) + "\n")
    os.makedirs(os.path.join(fixture, "out", "definitions", "op"))
    with open(os.path.join(fixture, "out", "README.md"), "w") as f:
        f.write("kept\n")


def build_validate(fixture):
    staged_fixture(os.path.join(fixture, "ds"), FILES * 2)


def build_validate_shards(fixture, fib):
    build_validate(fixture)
    for k in (1, 2):
        folder = os.path.join(fixture, f"s{k}")
        subprocess.run([fib, "validate", "--dataset", os.path.join(fixture, "ds"),
                        "--disable-gpu", "--checks", "layout,definition", "--shard", f"{k}/2",
                        "--outputs", "json", "--output-folder", folder],
                       capture_output=True, check=False)
        (name,) = os.listdir(folder)
        os.rename(os.path.join(folder, name), os.path.join(fixture, f"shard{k}.json"))
        os.rmdir(folder)
    shutil.rmtree(os.path.join(fixture, "ds"))
    os.makedirs(os.path.join(fixture, "out"))


def build_dump(fixture):
    dumps_fixture(os.path.join(fixture, "dumps"), 20, "old_h")  # --clean removes these
    os.makedirs(os.path.join(fixture, "ds"))
    with open(os.path.join(fixture, "harness.py"), "w", encoding="utf-8") as f:
        f.write(DUMP_HARNESS)


# A stand-in for a traced program: writes dumps the way FlashInfer's dumper does (straight into
# the dump directory, no temporary file).
DUMP_HARNESS = f'''import json, os, sys
sys.path.insert(0, {os.path.join(HERE, "..", "cli")!r})
from stage_fixtures import definition
folder = os.environ["FLASHINFER_TRACE_DUMP_DIR"]
for i in range({FILES}):
    name = "rmsnorm_h%d" % (1024 + i)
    with open(os.path.join(folder, name + ".json"), "w") as f:
        f.write(json.dumps(definition(name), indent=2))
'''


def validate_canonical(state, root):
    """Report files are named by the second they were written in: compared by kind and content."""
    out = {}
    for path, entry in state.items():
        folder, name = os.path.split(path)
        if REPORT_NAME.match(name):
            kind = name.rsplit(".", 1)[1]
            out.setdefault(os.path.join(folder, "report-*." + kind), set()).add(entry)
        else:
            out[path] = entry
    return {p: (tuple(sorted(e)) if isinstance(e, set) else e) for p, e in out.items()}


def validate_reports(state):
    return sorted(p for p in state if REPORT_NAME.match(os.path.basename(p)))


def validate_check_rerun(killed, rerun, expected):
    """The rerun adds one complete json+txt pair; what the killed run wrote stays as it was."""
    problems = []
    new = [p for p in validate_reports(rerun) if p not in killed]
    stems = {p.rsplit(".", 1)[0] for p in new}
    if len(new) != 2 or len(stems) != 1:
        problems.append(f"the rerun wrote {new}, not one report-*.json and report-*.txt pair")
    for path in validate_reports(killed):
        if rerun.get(path) != killed[path]:
            problems.append(f"{path}: changed by the rerun")
    return problems


def validate_before_rerun(killed):
    """A report left by the killed run blocks a rerun in the same second (`report.exists`)."""
    if validate_reports(killed):
        now = time.time()
        time.sleep(1.05 - (now - int(now)))


def writers(fib, worker):
    fixtures_with_fib = {
        "tag.remove_manifest": lambda d: build_tag_manifest(d, fib),
        "validate_merge": lambda d: build_validate_shards(d, fib),
    }
    listed = [
        Writer("normalize.in_place", f"normalize --in-place DIR ({FILES} dumps, mode 640 kept)",
               build_normalize_in_place, lambda r: [fib, "normalize", "--in-place", f"{r}/dumps"]),
        Writer("normalize.output_dir",
               f"normalize --output-dir OUT --report FILE ({FILES} dumps)",
               build_normalize_output_dir,
               lambda r: [fib, "normalize", f"{r}/dumps", "--output-dir", f"{r}/out",
                          "--report", f"{r}/normalize-report.json"]),
        Writer("stage", f"stage DUMPS --dataset DS --manifest FILE ({FILES} dumps, 1 overwritten)",
               build_stage,
               lambda r: [fib, "stage", f"{r}/dumps", "--dataset", f"{r}/ds", "--manifest",
                          f"{r}/staged.json", "--on-conflict", "overwrite", "--quiet"]),
        Writer("tag.add", f"tag add TAGS --dataset DS ({FILES} definitions)", build_tag_dataset,
               lambda r: [fib, "tag", "add", "model:llama-3.1-8b", "tp:2", "--dataset",
                          f"{r}/ds"]),
        Writer("tag.remove_manifest",
               f"tag remove 'model:*' --manifest FILE ({FILES // 2} of {FILES} definitions)",
               fixtures_with_fib["tag.remove_manifest"],
               lambda r: [fib, "tag", "remove", "model:*", "--manifest", f"{r}/staged.json"]),
        Writer("report.merge", f"report merge OUT IN0 IN1 ({FILES} definitions and traces)",
               build_report_merge,
               lambda r: [fib, "report", "merge", f"{r}/out", f"{r}/in0", f"{r}/in1"]),
        Writer("validate.report_files",
               f"validate --dataset DS --output-folder DIR ({FILES * 2} definitions)",
               build_validate,
               lambda r: [fib, "validate", "--dataset", f"{r}/ds", "--disable-gpu", "--checks",
                          "layout,definition", "--output-folder", f"{r}/reports"],
               canonical=validate_canonical, check_rerun=validate_check_rerun,
               before_rerun=validate_before_rerun),
        Writer("validate_merge", "validate-merge SHARDS --output FILE --text FILE",
               fixtures_with_fib["validate_merge"],
               lambda r: [fib, "validate-merge", f"{r}/shard1.json", f"{r}/shard2.json",
                          "--output", f"{r}/out/merged.json", "--text", f"{r}/out/merged.txt"]),
        Writer("validate_render", "validate-render REPORT --output FILE",
               fixtures_with_fib["validate_merge"],
               lambda r: [fib, "validate-render", f"{r}/shard1.json", "--output",
                          f"{r}/out/rendered.txt"]),
        Writer("dump", f"dump --out DIR --clean --stage DS --tag T -- harness ({FILES} dumps)",
               build_dump,
               lambda r: [fib, "dump", "--out", f"{r}/dumps", "--clean", "--stage", f"{r}/ds",
                          "--tag", "status:verified", "--", sys.executable, f"{r}/harness.py"],
               check_killed=dump_check_killed),
    ]
    listed.append(run_writer(fib, worker))
    return listed


def dump_check_killed(killed, pre, post):
    """The traced program's own dumps may be cut short by the kill (its dumper writes them in
    place, as FlashInfer's does; the dump's collection reports such a file): a dump smaller than
    its post-state is accepted there, nowhere else."""
    return [p for p, e in killed.items()
            if p.startswith("dumps/") and e[0] == "file" and post.get(p, ("",))[0] == "file"
            and e[3] < post[p][3]]


# --- fib run: traces appended ------------------------------------------------------------------

RUN_SOLUTIONS = 8


def build_run(fixture):
    import make_fixture  # tests/run/make_fixture.py
    root = os.path.join(fixture, "ds")
    subprocess.run([sys.executable, make_fixture.__file__, root, "--only", "py_correct"],
                   check=True)
    folder = os.path.join(root, "solutions", "fixture", "scale", "scale_h64")
    with open(os.path.join(folder, "py_correct.json"), encoding="utf-8") as f:
        solution = json.load(f)
    for i in range(RUN_SOLUTIONS):
        solution["name"] = f"py_copy_{i}"
        solution["sources"][0]["content"] = f"def run(x, w):\n    return x * w  # copy {i}\n"
        with open(os.path.join(folder, solution["name"] + ".json"), "w", encoding="utf-8") as f:
            json.dump(solution, f, indent=2)
    # A trace file with a line already in it (and no final newline): kept by every append.
    trace = os.path.join(root, "traces", "fixture", "scale", "scale_h64.jsonl")
    os.makedirs(os.path.dirname(trace))
    with open(trace, "w", encoding="utf-8") as f:
        f.write(json.dumps({"definition": "scale_h64", "solution": "old", "workload": {},
                            "evaluation": {"status": "PASSED"}}))


def trace_lines(state, root):
    """{trace file: [lines]} of the trial's dataset (split on newlines: the last is "" when the
    file ends with one)."""
    out = {}
    for path, entry in state.items():
        if path.startswith("ds/traces/") and path.endswith(".jsonl") and entry[0] == "file":
            with open(os.path.join(root, path), encoding="utf-8") as f:
                out[path] = f.read().split("\n")
    return out


def trace_key(line):
    document = json.loads(line)
    return (document.get("solution"), (document.get("workload") or {}).get("uuid"))


def run_canonical(state, root):
    """A trace file stands for the solutions its lines are of (their timings differ from run to
    run; RunTraces checks the lines themselves); the build cache is fib's own scratch, checked
    only for temporaries."""
    out = {}
    for path, entry in state.items():
        if path == "cache" or path.startswith("cache/"):
            continue
        if path.startswith("ds/traces/") and path.endswith(".jsonl") and entry[0] == "file":
            with open(os.path.join(root, path), encoding="utf-8") as f:
                solutions = set()
                for line in f.read().split("\n"):
                    try:
                        solutions.add(trace_key(line)[0] if line else None)
                    except json.JSONDecodeError:
                        solutions.add("(torn line)")
            entry = ("trace", entry[1], tuple(sorted(s for s in solutions if s)))
        out[path] = entry
    return out


class RunTraces:
    """The invariant of `fib run`'s trace files. fib appends the lines of one (solution,
    definition) in one atomic rewrite of the file, and running twice appends twice. So a trace
    file holds the pre-state's lines (all kept; the last one now ends with a newline), then whole
    appends: for each solution either none or all of its workloads' lines, each once. After the
    rerun, the killed run's whole appends are followed by one more line for every (solution,
    workload) of a full run; no line is torn, lost or duplicated otherwise."""

    def __init__(self):
        self.pre_lines = {}
        self.expected_keys = {}

    def learn(self, pre_state, post_state, root):
        for path, lines in trace_lines(pre_state, root).items():
            self.pre_lines[path] = [line for line in lines if line != ""]

    def learn_post(self, post_state, root):
        for path, lines in trace_lines(post_state, root).items():
            old = len(self.pre_lines.get(path, []))
            self.expected_keys[path] = {trace_key(line) for line in lines[old:] if line != ""}

    def problems(self, state, root, complete):
        lines = trace_lines(state, root)
        out = []
        for path in sorted(set(lines) | set(self.pre_lines)):
            if path not in lines:
                out.append(f"{path}: missing")
                continue
            out += [f"{path}: {p}" for p in self.file_problems(
                lines[path], self.pre_lines.get(path, []), self.expected_keys.get(path, set()),
                complete)]
        if complete and set(lines) != set(self.expected_keys) | set(self.pre_lines):
            out.append(f"trace files {sorted(lines)}, expected {sorted(self.expected_keys)}")
        return out

    @staticmethod
    def file_problems(lines, pre_lines, expected_keys, complete):
        problems = []
        if lines[-1] != "":
            problems.append("does not end with a newline")
        body = lines[:-1]
        if body[:len(pre_lines)] != pre_lines:
            return problems + ["lost or changed the lines it had before"]
        try:
            keys = [trace_key(line) for line in body[len(pre_lines):]]
        except json.JSONDecodeError as error:
            return problems + [f"holds a line that is not JSON (torn?): {error}"]
        counts = {}
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
        if complete:
            for key in expected_keys:
                counts[key] = counts.get(key, 0) - 1
                if counts[key] < 0:
                    problems.append(f"the rerun's append misses {key}")
        by_solution = {}
        for key in expected_keys:
            by_solution.setdefault(key[0], set()).add(key)
        for solution, solution_keys in sorted(by_solution.items()):
            numbers = {counts.get(key, 0) for key in solution_keys}
            if len(numbers) != 1 or max(numbers) > 1:
                problems.append(f"{solution}: a partial or duplicated append ({sorted(numbers)})")
        unknown = [key for key in counts if key not in expected_keys]
        if unknown:
            problems.append(f"lines of unknown (solution, workload): {unknown[:3]}")
        return problems


def run_writer(fib, worker):
    writer = Writer("run", f"run --dataset DS ({RUN_SOLUTIONS + 1} solutions x 3 workloads)",
                    build_run,
                    lambda r: [fib, "run", "--dataset", f"{r}/ds", "--quiet", "--warmup", "0",
                               "--iterations", "1", "--timeout", "60"],
                    canonical=run_canonical, needs_worker=True)
    writer.traces = RunTraces()
    writer.worker = worker
    return writer


# --- The test ---------------------------------------------------------------------------------

def compare(killed, pre, post, tolerated=()):
    """Problems of check (a): a path in neither state."""
    problems = []
    for path in sorted(set(killed) | set(pre) | set(post)):
        now = killed.get(path)
        if now in (pre.get(path), post.get(path)) or path in tolerated:
            continue
        problems.append(f"{path}: {describe(now)}; pre-state {describe(pre.get(path))}, "
                        f"post-state {describe(post.get(path))}")
    return problems


class Outcome:
    def __init__(self):
        self.kills = 0
        self.middle = 0
        self.problems = []


LITTER = re.compile(r"\.fib-")  # the atomic writer's `.fib-XXXXXX`, the worker's `<name>.fib-<pid>`


class WriterTest:
    """The calibration run and the kills of one writer, in one trial directory below `base`."""

    def __init__(self, writer, base):
        self.writer = writer
        self.fixture = os.path.join(base, "fixture")
        self.trial = Trial(base)
        self.outcome = Outcome()
        self.traces = getattr(writer, "traces", None)

    def fresh_trial(self):
        self.trial.reset(self.fixture)
        os.makedirs(os.path.join(self.trial.root, "tmp"), exist_ok=True)

    def canonical(self, state):
        return self.writer.canonical(state, self.trial.root)

    def calibrate(self):
        """Builds the fixture and runs the command once to its end: False when that failed."""
        if os.path.exists(self.fixture):
            shutil.rmtree(self.fixture)
        os.makedirs(self.fixture)
        self.writer.build(self.fixture)
        self.fresh_trial()
        self.pre = snapshot(self.trial.root)
        if self.traces:
            self.traces.learn(self.pre, None, self.trial.root)
        self.argv = self.writer.argv(self.trial.root)
        self.status, self.seconds, err = run_to_end(self.argv, self.trial, self.writer)
        self.post = snapshot(self.trial.root)
        if self.traces:
            self.traces.learn_post(self.post, self.trial.root)
        litter = sorted(p for p in self.post if LITTER.search(os.path.basename(p)))
        if litter:
            self.outcome.problems.append(f"a run to completion left {litter}")
        if self.post == self.pre:
            self.outcome.problems.append(
                f"a run to completion wrote nothing (exit {self.status}): {err[-500:]}")
            return False
        self.canonical_pre = self.canonical(self.pre)
        self.canonical_post = self.canonical(self.post)
        self.post_dirs = {p for p, e in self.post.items() if e[0] == "dir"} | {"."}
        return True

    def kill_once(self, delay):
        """One kill after `delay` seconds and its checks; True when it hit the middle."""
        self.fresh_trial()
        process = start(self.argv, self.trial, self.writer)
        time.sleep(delay)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        self.outcome.kills += 1
        label = f"kill {self.outcome.kills} at {delay:.3f} s"
        problems = []
        if not group_is_empty(process.pid):
            problems.append("processes of the command outlived the kill")
        killed = snapshot(self.trial.root)
        temps = temporaries(killed)
        problems += [f"temporary {t} outside the directories written" for t in temps
                     if (os.path.dirname(t) or ".") not in self.post_dirs]
        killed_plain = without(killed, temps)
        tolerated = (self.writer.check_killed(killed_plain, self.pre, self.post)
                     if self.writer.check_killed else ())
        canonical_killed = self.canonical(killed_plain)
        problems += compare(canonical_killed, self.canonical_pre, self.canonical_post, tolerated)
        if self.traces:
            problems += self.traces.problems(killed_plain, self.trial.root, complete=False)
        middle = bool(temps) or canonical_killed not in (self.canonical_pre, self.canonical_post)
        problems += self.rerun(killed)
        self.outcome.problems += [f"{label}: {p}" for p in problems]
        where = ("middle" if middle else "pre-state" if canonical_killed == self.canonical_pre
                 else "post-state")
        print(f"  {label}: {where}{f' ({len(temps)} temporaries)' if temps else ''}"
              f"{'; PROBLEMS' if problems else ''}", flush=True)
        return middle

    def rerun(self, killed):
        """Check (b): the rerun after the kill."""
        if self.writer.before_rerun:
            self.writer.before_rerun(killed)
        status, _, err = run_to_end(self.argv, self.trial, self.writer)
        rerun = snapshot(self.trial.root)
        problems = []
        if status != self.status:
            problems.append(f"the rerun exited {status}, the first run {self.status}: "
                            f"{err[-500:]}")
        litter = sorted(p for p in rerun if LITTER.search(os.path.basename(p)))
        if litter:
            problems.append(f"the rerun left {litter}")
        canonical_rerun = self.canonical(rerun)
        if canonical_rerun != self.canonical_post:
            problems += [f"after the rerun {p}" for p in compare(
                canonical_rerun, self.canonical_post, self.canonical_post)] or [
                "after the rerun the state differs from the post-state"]
        if self.traces:
            problems += [f"after the rerun {p}"
                         for p in self.traces.problems(rerun, self.trial.root, complete=True)]
        if self.writer.check_rerun:
            problems += self.writer.check_rerun(killed, rerun, self.post)
        return problems

    def run(self, rng, kills):
        if not self.calibrate():
            return self.outcome
        limit = kills
        while self.outcome.kills < limit:
            self.outcome.middle += self.kill_once(rng.uniform(0, DELAY_FACTOR * self.seconds))
            short = self.outcome.middle < MIN_MIDDLE_FRACTION * self.outcome.kills
            if self.outcome.kills == limit and short and limit < 3 * kills:
                limit += 1
        if self.outcome.middle < MIN_MIDDLE_FRACTION * self.outcome.kills:
            self.outcome.problems.append(
                f"only {self.outcome.middle} of {self.outcome.kills} kills interrupted a run in "
                f"the middle (at least {MIN_MIDDLE_FRACTION:.0%} must): the fixture writes too "
                f"little for its run time")
        return self.outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fib", required=True)
    parser.add_argument("--worker", default="",
                        help="fib's worker binary; `fib run` is skipped when it does not exist")
    parser.add_argument("--writers", nargs="*", default=None, help="only these writers")
    parser.add_argument("--skip", nargs="*", default=[], help="all writers but these")
    parser.add_argument("--kills", type=int,
                        default=int(os.environ.get("FIB_CRASH_KILLS", DEFAULT_KILLS)))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--list", action="store_true", help="list the writers and exit")
    args = parser.parse_args()
    fib = os.path.abspath(args.fib)
    everything = writers(fib, args.worker)
    if args.list:
        for writer in everything:
            print(f"{writer.name:24} {writer.summary}")
        return 0
    seed = args.seed
    if seed is None:
        seed = int(os.environ.get("FIB_CRASH_SEED", "0") or 0) or int(time.time() * 1000) % 10**9
    rng = random.Random(seed)
    chosen = [w for w in everything
              if (args.writers is None or w.name in args.writers) and w.name not in args.skip]
    if args.writers:
        unknown = set(args.writers) - {w.name for w in everything}
        if unknown:
            print(f"unknown writers: {sorted(unknown)}")
            return 2
    print(f"seed {seed} (FIB_CRASH_SEED={seed} reproduces the delays), {args.kills} kills per "
          f"writer (FIB_CRASH_KILLS)", flush=True)
    failed = []
    tested = 0
    began = time.monotonic()
    base = tempfile.mkdtemp(prefix="fib-crash-")
    try:
        for writer in chosen:
            if writer.needs_worker and not os.path.exists(writer.worker):
                print(f"{writer.name}: skipped: fib's worker was not built (FIB_WITH_TORCH=OFF), "
                      f"so `fib run` cannot run", flush=True)
                continue
            print(f"{writer.name}: {writer.summary}", flush=True)
            test = WriterTest(writer, base)
            outcome = test.run(rng, args.kills)
            tested += 1
            print(f"{writer.name}: run time {getattr(test, 'seconds', 0):.2f} s; {outcome.kills} kills, "
                  f"{outcome.middle} in the middle; "
                  f"{'FAILED' if outcome.problems else 'ok'}", flush=True)
            for problem in outcome.problems[:20]:
                print(f"  problem: {problem}")
            if outcome.problems:
                failed.append(writer.name)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{tested} writers, {time.monotonic() - began:.1f} s; seed {seed}")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    return 0 if tested else SKIPPED


if __name__ == "__main__":
    sys.exit(main())
