#!/usr/bin/env python3
"""Crash safety of every fib command that writes files: SIGKILL at random moments, then rerun.

    python3 tests/crash/kill_at_random.py --fib build/apps/fib/fib [--worker WORKER]
        [--writers NAME ...] [--skip NAME ...] [--kills K] [--seed S]
        [--middle-not-required NAME ...] [--list]

For each writer (crash_writers.py) the test builds a fixture in a temporary directory, records
its pre-state, and runs the command once to completion for the expected post-state and its run
time T. Then, K times: a fresh copy of the fixture (at the same path, so that absolute paths in
the outputs are the same), the command started in its own process group, that group SIGKILLed
after a delay drawn uniformly from [0, 1.3 T] (one seeded random generator; the seed is
printed), and the checks:

  (a) right after the kill, every path of the trial directory (the fixture, the command's working
      directory and its HOME) is in its pre-state or in its post-state: a file byte for byte and
      with its permission bits (never truncated, never mixed), a directory as a directory, and a
      path that both states have is never missing. Nothing else is there except the atomic
      writer's `.fib-XXXXXX` temporaries, and those only in directories the command writes into.
      No process of the command's group outlives the kill.
  (b) the same command rerun to completion exits as the first run did and leaves exactly the
      post-state, no `.fib-*` file anywhere (the atomic writer's, the worker's `<name>.fib-<pid>`)
      and nothing in its TMPDIR (what the killed run left there, too, is gone).

Writers whose outputs differ from run to run (validate's timestamped report files, the timings in
`fib run`'s trace lines) or whose outputs name what their own run did (stage's manifest) have
their own invariant, stated at the writer.

A kill "interrupted the middle" of a run when the state it left is neither the pre-state nor the
post-state, or holds a temporary. Each writer must have at least MIN_MIDDLE_FRACTION of its kills
in the middle, and so must all kills together, so that the test cannot pass with kills that all
came too early or too late; a writer short of it after K kills gets more (up to 3 K), drawn from
the window its kills so far bracket (after the latest pre-state kill, before the earliest
post-state one), and fails if it is still short. Validate writes its two files in about the last tenth of its run: its middle
kills are counted, not required (and --middle-not-required does the same for a short run).

Environment: FIB_CRASH_SEED (the seed, default: from the clock), FIB_CRASH_KILLS (K, default 4),
FIB_CRASH_FILES (inputs per fixture, default 40), FIB_CRASH_RUN_SOLUTIONS (copies of the run
fixture's solution, default 2). Exit status 0 when every check held, 1 otherwise, 77 when every
writer asked for was skipped (`fib run` without the worker).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crash_writers import MIN_MIDDLE_FRACTION, outside_tmp, writers  # noqa: E402

SKIPPED = 77
DELAY_FACTOR = 1.3
DEFAULT_KILLS = 4
TEMPORARY = re.compile(r"^\.fib-[A-Za-z0-9]{6}$")
# A pack of fib's result cache: named and stamped by the run that wrote it, so a snapshot records
# whether it is whole (header and trailer magic in place) instead of its bytes.
CACHE_PACK = re.compile(r"^pack-[0-9a-f]{8}-[0-9a-f]{16}-[0-9a-f]{16}\.bin$")


def pack_digest(data):
    whole = len(data) >= 56 and data[:8] == b"fibcache" and data[-8:] == b"fibindex"
    return "whole cache pack" if whole else "torn cache pack"


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
                if CACHE_PACK.match(name):
                    state[relative] = ("file", mode, pack_digest(data), 0)
                else:
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
    env.update({"HOME": trial.home, "FIB_CACHE_DIR": os.path.join(trial.root, "cache"),
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


def tmpdir_litter(state):
    return sorted(p[len("tmp/"):] for p in state if p.startswith("tmp/") and p.count("/") == 1)


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
        # Built where the trials run, so that absolute paths in it (a manifest's dataset) hold.
        for folder in (self.fixture, self.trial.root):
            if os.path.exists(folder):
                shutil.rmtree(folder)
        os.makedirs(self.trial.root)
        self.writer.build(self.trial.root)
        shutil.copytree(self.trial.root, self.fixture, symlinks=True)
        self.fresh_trial()
        self.pre = snapshot(self.trial.root)
        if self.traces:
            self.traces.learn(self.pre, None, self.trial.root)
        self.argv = self.writer.argv(self.trial.root)
        self.status, self.seconds, err = run_to_end(self.argv, self.trial, self.writer)
        self.post = snapshot(self.trial.root)
        if tmpdir_litter(self.post):
            self.outcome.problems.append(f"a run to completion left {tmpdir_litter(self.post)} "
                                         f"in TMPDIR")
        self.pre, self.post = outside_tmp(self.pre), outside_tmp(self.post)
        if self.traces:
            self.traces.learn_post(self.post, self.trial.root)
        if self.writer.learn_post and self.status == 0:
            self.writer.learn_post(self.post, self.trial.root)
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
        """One kill after `delay` seconds and its checks: "pre-state", "middle" or "post-state"."""
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
        killed = outside_tmp(snapshot(self.trial.root))
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
        if middle and not temps:
            changed = sorted(p for p in set(canonical_killed) | set(self.canonical_pre)
                             if canonical_killed.get(p) != self.canonical_pre.get(p))
            label += f" ({len(changed)} paths written, e.g. {changed[:2]})"
        problems += self.rerun(killed)
        self.outcome.problems += [f"{label}: {p}" for p in problems]
        where = ("middle" if middle else "pre-state" if canonical_killed == self.canonical_pre
                 else "post-state")
        print(f"  {label}: {where}{f' ({len(temps)} temporaries)' if temps else ''}"
              f"{'; PROBLEMS' if problems else ''}", flush=True)
        return where

    def rerun(self, killed):
        """Check (b): the rerun after the kill."""
        if self.writer.before_rerun:
            self.writer.before_rerun(killed)
        status, _, err = run_to_end(self.argv, self.trial, self.writer)
        rerun = snapshot(self.trial.root)
        problems = []
        # What the killed run left in TMPDIR (the sandbox's scratch directories) the rerun removes.
        if tmpdir_litter(rerun):
            problems.append(f"TMPDIR holds {tmpdir_litter(rerun)} after the rerun")
        rerun = outside_tmp(rerun)
        if status != self.status:
            problems.append(f"the rerun exited {status}, the first run {self.status}: "
                            f"{err[-500:]}")
        litter = sorted(p for p in rerun if LITTER.search(os.path.basename(p)))
        if litter:
            problems.append(f"the rerun left {litter}")
        exempt = self.writer.rerun_exempt
        canonical_rerun = without(self.canonical(rerun), exempt)
        canonical_post = without(self.canonical_post, exempt)
        if canonical_rerun != canonical_post:
            problems += [f"after the rerun {p}" for p in compare(
                canonical_rerun, canonical_post, canonical_post)] or [
                "after the rerun the state differs from the post-state"]
        if self.traces:
            problems += [f"after the rerun {p}"
                         for p in self.traces.problems(rerun, self.trial.root, complete=True)]
        if self.writer.check_rerun:
            problems += self.writer.check_rerun(killed, rerun, self.post, self.trial.root)
        return problems

    def run(self, rng, kills):
        if not self.calibrate():
            return self.outcome
        limit = kills
        minimum = self.writer.min_middle
        # The first K delays are drawn from [0, 1.3 T]. A writer still short of middle kills gets
        # its extra ones from the window the kills so far have bracketed: after the latest kill
        # that left the pre-state and before the earliest that left the post-state. A loaded
        # machine can make the calibration run slower than the trials (or the reverse), and the
        # extra kills then still land where the command writes.
        latest_pre, earliest_post = 0.0, DELAY_FACTOR * self.seconds
        while self.outcome.kills < limit:
            if self.outcome.kills < kills or latest_pre >= earliest_post:
                delay = rng.uniform(0, DELAY_FACTOR * self.seconds)
            else:
                delay = rng.uniform(latest_pre, earliest_post)
            where = self.kill_once(delay)
            self.outcome.middle += where == "middle"
            if where == "pre-state":
                latest_pre = max(latest_pre, delay)
            elif where == "post-state":
                earliest_post = min(earliest_post, delay)
            short = self.outcome.middle < minimum * self.outcome.kills
            if self.outcome.kills == limit and short and limit < 3 * kills:
                limit += 1
        if self.outcome.middle < minimum * self.outcome.kills:
            self.outcome.problems.append(
                f"only {self.outcome.middle} of {self.outcome.kills} kills interrupted a run in "
                f"the middle (at least {minimum:.0%} must): the fixture writes too little for "
                f"its run time")
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
    parser.add_argument("--middle-not-required", nargs="*", default=[], metavar="NAME",
                        help="writers whose kills in the middle are counted, not required (for "
                             "a short run with few kills)")
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
    total_kills = total_middle = 0
    began = time.monotonic()
    base = tempfile.mkdtemp(prefix="fib-crash-")
    try:
        for writer in chosen:
            if writer.needs_worker and not os.path.exists(writer.worker):
                print(f"{writer.name}: skipped: fib's worker was not built (FIB_WITH_TORCH=OFF), "
                      f"so `fib run` cannot run", flush=True)
                continue
            if writer.name in args.middle_not_required:
                writer.min_middle = 0.0
            print(f"{writer.name}: {writer.summary}", flush=True)
            writer_began = time.monotonic()
            test = WriterTest(writer, base)
            outcome = test.run(rng, args.kills)
            tested += 1
            if writer.name not in args.middle_not_required:
                total_kills += outcome.kills
                total_middle += outcome.middle
            print(f"{writer.name}: run time {getattr(test, 'seconds', 0):.2f} s; "
                  f"{outcome.kills} kills, "
                  f"{outcome.middle} in the middle; {time.monotonic() - writer_began:.1f} s; "
                  f"{'FAILED' if outcome.problems else 'ok'}", flush=True)
            for problem in outcome.problems[:20]:
                print(f"  problem: {problem}")
            if outcome.problems:
                failed.append(writer.name)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{tested} writers, {total_kills} kills, {total_middle} in the middle, "
          f"{time.monotonic() - began:.1f} s; seed {seed}")
    if total_kills and total_middle < MIN_MIDDLE_FRACTION * total_kills:
        print(f"FAILED: only {total_middle} of {total_kills} kills interrupted a run in the "
              f"middle (at least {MIN_MIDDLE_FRACTION:.0%} must)")
        return 1
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    return 0 if tested else SKIPPED


if __name__ == "__main__":
    sys.exit(main())
