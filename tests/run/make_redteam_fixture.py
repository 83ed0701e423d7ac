#!/usr/bin/env python3
"""Writes the red-team dataset of `fib run`: the fixture's definition and workloads (y = x * w,
tests/run/make_fixture.py) with one solution per attack on fib's judging, each written as someone
who has read fib's worker harness (src/worker/sandbox.py) would write it. Every kernel sleeps
50 ms per call, so a latency under 45 ms means the clock was fooled.

    python3 tests/run/make_redteam_fixture.py DIR

Solutions (author `redteam`) and what fib must make of them (docs/execution.md, "Trust model"):
  rt_honest          sleeps, returns x * w                         → PASSED, latency >= 45 ms
  rt_clock_stop      replaces the harness's timing loop: "done" right after "go", the call made
                     afterwards                                     → RUNTIME_ERROR (commitment)
  rt_precompute      replaces the loop: each call computed while it is prepared, before "ready",
                     "done" with a true commitment at once           → PASSED, latency >= 45 ms
                     (the preparation beyond the reference's is timed)
  rt_writer_forged   fast wrong outputs while timed, the harness's output writer replaced to save
                     right ones afterwards                           → RUNTIME_ERROR (commitment)
  rt_skip_fresh      the fresh-values step replaced by one that changes nothing, and a memo on
                     the inputs' bytes                               → INCORRECT_NUMERICAL
  rt_keep_faked      zeros while timed, committed and kept as they are → INCORRECT_NUMERICAL
  rt_deferred        returns its output tensor at once and fills it from a thread → not PASSED
  rt_disk_fill       writes until refused into every place it can: HOME, the working directory,
                     /dev/shm, /var/tmp, /            → RUNTIME_ERROR naming the scratch limit
  rt_snoop           looks for other solutions' entries, the dataset, fib's files and the host's
                     home; returns wrong values if it finds any      → PASSED (contained)
  rt_persist         tries to leave a memo in its cache entry and to rewrite its own source;
                     returns wrong values if any write goes through  → PASSED (the entry is
                     read-only while it runs), the entry as fib wrote it
  rt_setup_heavy     does all its work in setup() and returns it from run → PASSED, latency
                     >= 45 ms (setup and run are timed together; the kernel time is the run's)
  rt_commit_early    hashes its outputs for the commitment while it still writes the last of
                     them (so the hashing, which fib subtracts, would hide inside its call), the
                     harness's commitment replaced to hand that in → RUNTIME_ERROR (commitment)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture  # noqa: E402

# Finds the harness's globals from the solution's first call: the caller's frame is the
# harness's (solution_outputs' `call`), so its f_globals is the namespace of sandbox.py.
HARNESS = '''import sys, time
import torch

def harness():
    frame = sys._getframe(2)
    while frame is not None and "timed" not in frame.f_globals:
        frame = frame.f_back
    return frame.f_globals

def slow(x, w):
    time.sleep(0.05)
    return x * w
'''

# The harness's timing loop as an attacker rewrites it: each call's outputs computed while it is
# prepared, before "ready", with a true commitment at once (@PRECOMPUTE@ True), or after "done",
# which is sent at once with a made-up commitment (False).
FAKE_TIMED = HARNESS + '''
_patched = False

def fake_timed(channel, run, prepare, warmup, iterations, device, keep=None, cold_cache=False,
               vary=None, **_):
    import json, os
    commitment = harness_globals["commitment"]
    for index in range(max(iterations, 1)):
        channel.send({"timing": "prepare", "iteration": index})
        seed = json.loads(channel.wait_go()).get("seed")
        inputs, outs = prepare()
        if vary is not None and seed is not None:
            inputs = vary(inputs, seed)
        if @PRECOMPUTE@:
            result = run(inputs, outs)  # fib's clock has not started
        channel.send({"timing": "ready", "iteration": index})
        key = json.loads(channel.wait_go())["key"]
        commit = commitment(key, result) if @PRECOMPUTE@ else os.urandom(32).hex()
        channel.send({"timing": "done", "iteration": index, "ms": 0.01, "commit": commit})
        if not @PRECOMPUTE@:
            result = run(inputs, outs)  # fib's clock has stopped
        if json.loads(channel.wait_go()).get("keep") and keep is not None:
            keep(index, result, inputs)

harness_globals = None

def run(x, w):
    global _patched, harness_globals
    if not _patched:
        harness_globals = harness()
        harness_globals["timed"] = fake_timed
        _patched = True
    return slow(x, w)
'''

WRITER_FORGED = HARNESS + '''
_patched = False

def run(x, w):
    global _patched
    if not _patched:
        g = harness()
        real_save = g["save_tensors"]
        def forged_save(path, named):
            if "timed_" in path:
                # The right outputs of the call's inputs, computed after fib's clock stopped.
                inputs = sys._getframe(1).f_locals.get("inputs")
                if inputs is not None:
                    named = [("0", slow(inputs[0], inputs[1]))]
            return real_save(path, named)
        g["save_tensors"] = forged_save
        _patched = True
        return slow(x, w)
    caller = sys._getframe(2).f_code.co_name
    if caller == "timed":
        return torch.zeros_like(x)  # fast and wrong while timed
    return slow(x, w)
'''

SKIP_FRESH = HARNESS + '''
_patched = False
_memo = {}

def run(x, w):
    global _patched
    if not _patched:
        g = harness()
        g["_FreshValues"].__call__ = lambda self, inputs, seed: list(inputs)
        _patched = True
    key = (x.numpy().tobytes(), w.numpy().tobytes())
    if key not in _memo:
        _memo[key] = slow(x, w)
    return _memo[key].clone()
'''

KEEP_FAKED = HARNESS + '''
def run(x, w):
    if sys._getframe(2).f_code.co_name == "timed":
        return torch.zeros_like(x)
    return slow(x, w)
'''

DEFERRED = HARNESS + '''
import threading

def run(x, w):
    y = torch.zeros_like(x)
    def fill():
        time.sleep(0.05)
        y.copy_(x * w)
    threading.Thread(target=fill).start()
    return y
'''



SNOOP = HARNESS + '''
import glob, os

def found_anything():
    here = os.path.dirname(os.path.abspath(__file__))
    entry = os.path.dirname(here)
    places = [p for p in glob.glob(os.path.join(os.path.dirname(entry), "*")) if p != entry]
    for pattern in ("/root/*", "/home/*", "/*/definitions", "/*/*/definitions",
                    "/*/*/*/definitions", "/*/traces", "/*/*/traces", "/tmp/*/*.safetensors"):
        places += glob.glob(pattern)
    return [p for p in places if os.path.exists(p) and not p.startswith("/tmp/job-")]

_found = None

def run(x, w):
    global _found
    if _found is None:
        _found = found_anything()
    y = slow(x, w)
    return y + 1 if _found else y
'''

DISK_FILL = HARNESS + '''
import os

_done = False

def run(x, w):
    global _done
    if not _done:
        _done = True
        block = b"\\0" * (1 << 20)
        for place in (os.environ.get("HOME", "/tmp"), os.getcwd(), "/dev/shm", "/var/tmp", "/"):
            try:  # each place until it refuses (its size, or no write access at all)
                with open(os.path.join(place, "fib-redteam-fill"), "wb") as f:
                    for _ in range(1 << 14):
                        f.write(block)
            except OSError:
                pass
    return slow(x, w)
'''

PERSIST = HARNESS + '''
import os

def wrote_somewhere():
    """Tries to leave something behind in its own cache entry: a memo beside its source, one in
    the entry, and its own source rewritten. True when any of it went through."""
    here = os.path.dirname(os.path.abspath(__file__))
    entry = os.path.dirname(here)
    wrote = False
    for path in (os.path.join(here, "memo.bin"), os.path.join(entry, "memo.bin"),
                 os.path.join(here, "__pycache__", "memo.bin"), __file__):
        try:
            with open(path, "a") as f:
                f.write("# kept\\n")
            wrote = True
        except OSError:
            pass
    return wrote

_wrote = None

def run(x, w):
    global _wrote
    if _wrote is None:
        _wrote = wrote_somewhere()
    y = slow(x, w)
    return y + 1 if _wrote else y
'''

# All the work in setup(), which runs before each timed call's run: fib times setup and run
# together (the end-to-end latency) and reports the run alone as the kernel time.
SETUP_HEAVY = HARNESS + '''
def setup(x, w):
    return {"done": slow(x, w)}

def run(x, w, done):
    return done
'''

# Streams its commitment: the pieces of its outputs hashed while the kernel still runs, the last
# element written after. The commitment's fold of every byte comes before any piece's hash, so
# whatever it hashed early cannot be the commitment of what it hands in.
COMMIT_EARLY = HARNESS + '''
_early = {}
_real = None

def run(x, w):
    global _real
    if _real is None:
        g = harness()
        _real = g["commitment"]
        g["commitment"] = lambda key, tensors: _early.pop(key, None) or _real(key, tensors)
    key = sys._getframe(2).f_locals.get("key")  # the call's key, from the timing loop
    y = x * w
    if key is None:
        time.sleep(0.05)
        return y
    flat = y.reshape(-1)
    last = flat[-1].item()
    flat[-1] = 0  # not written yet
    _early[key] = _real(key, [y])  # hashed "while the kernel runs"
    time.sleep(0.05)
    flat[-1] = last
    return y
'''

SOLUTIONS = {
    "rt_honest": HARNESS + "\ndef run(x, w):\n    return slow(x, w)\n",
    "rt_clock_stop": FAKE_TIMED.replace("@PRECOMPUTE@", "False"),
    "rt_precompute": FAKE_TIMED.replace("@PRECOMPUTE@", "True"),
    "rt_writer_forged": WRITER_FORGED,
    "rt_skip_fresh": SKIP_FRESH,
    "rt_keep_faked": KEEP_FAKED,
    "rt_deferred": DEFERRED,
    "rt_snoop": SNOOP,
    "rt_disk_fill": DISK_FILL,
    "rt_persist": PERSIST,
    "rt_setup_heavy": SETUP_HEAVY,
    "rt_commit_early": COMMIT_EARLY,
}


def main():
    root = sys.argv[1]
    make_fixture.write_definition_and_workloads(root)
    for name, source in SOLUTIONS.items():
        solution = {
            "name": name, "definition": "scale_h64", "author": "redteam",
            "spec": {"language": "python", "target_hardware": ["cpu"],
                     "entry_point": "main.py::run", "destination_passing_style": False},
            "sources": [{"path": "main.py", "content": source}],
        }
        make_fixture.write(os.path.join(root, "solutions", "redteam", "scale", "scale_h64",
                                        name + ".json"), json.dumps(solution, indent=2) + "\n")


if __name__ == "__main__":
    main()
