#!/usr/bin/env python3
"""Writes the `fib run` fixture dataset of make_fixture.py with hostile solutions instead: each one
attacks fib, the machine or the judging, and the test (tests/cli/cases/run_hostile/check) asserts
that every attack is contained or detected.

    python3 tests/run/make_hostile_fixture.py SCRATCH

The dataset goes to SCRATCH/ds; SCRATCH/secret.txt (mode 0600) is a secret outside it.

Solutions (author `fixture`):
  py_correct          the honest one                                          → PASSED
  evil_escape         tries to write outside, read secrets, /etc/shadow and $HOME, use the
                      network, rewrite the dataset and its traces; raises with what it saw
                                                                              → RUNTIME_ERROR
  evil_kill_all       kill(-1, SIGKILL): everything it can reach              → RUNTIME_ERROR
  evil_orphans        leaves `sleep` children behind (setsid and a double fork), returns the
                      right values                                            → PASSED
  evil_patch_isclose  patches torch's comparisons to say "equal", returns x*w+5 → INCORRECT_NUMERICAL
  evil_slow_reference wraps any reference `run` it can find in this process with a sleep
                                                                              → PASSED, honest speedup
  evil_forged_reply   writes forged replies and timings on every descriptor   → detected (worker.protocol)
  evil_fake_clock     freezes time.perf_counter, so its own timings say 0 ms  → PASSED at fib's ≥ 50 ms
  evil_huge_exception raises with a 100 MB message                            → RUNTIME_ERROR, log clipped
  evil_closed_channel closes every descriptor and sleeps                      → RUNTIME_ERROR at once
  evil_huge_output    prints 20 MB, returns the right values                  → PASSED, output capped
  evil_link_outputs   swaps its output file for a link to the secret          → RUNTIME_ERROR (refused)
  evil_fifo_outputs   swaps its output file for a FIFO                        → RUNTIME_ERROR (refused)
  evil_lazy_when_timed right on its first call, zeros on the timed ones       → INCORRECT_NUMERICAL
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture  # noqa: E402

ESCAPE = r'''
import os, socket, subprocess

def attempt(what, action):
    try:
        return "%s: done (%s)" % (what, action())
    except BaseException as error:
        return "%s: refused (%s)" % (what, type(error).__name__)

def run(x, w):
    seen = [
        attempt("write outside", lambda: open("@SCRATCH@/outside.txt", "w").write("x")),
        attempt("read secret", lambda: open("@SCRATCH@/secret.txt").read()),
        attempt("read shadow", lambda: open("/etc/shadow").read()[:4]),
        attempt("list home", lambda: os.listdir("@HOME@")),
        attempt("rewrite definition", lambda: open("@DS@/definitions/scale/scale_h64.json", "w")),
        attempt("append trace", lambda: open("@DS@/traces/fixture/scale/scale_h64.jsonl", "a")),
        attempt("write system", lambda: open("/usr/fib-was-here", "w")),
        attempt("secret variable", lambda: os.environ["FIB_TEST_SECRET"]),
    ]
    seen.append("interfaces: %s" % sorted(name for _, name in socket.if_nameindex()))
    seen.append(attempt("connect out", lambda: socket.create_connection(("192.0.2.1", 80), 2)))
    seen.append("shell: " + subprocess.run(["/bin/sh", "-c", "echo contained"],
                                           capture_output=True, text=True).stdout.strip())
    raise RuntimeError("ATTEMPTS " + " | ".join(seen))
'''

KILL_ALL = '''import os, signal

def run(x, w):
    os.kill(-1, signal.SIGKILL)
    return x * w
'''

ORPHANS = '''import os, subprocess

def run(x, w):
    subprocess.Popen(["sleep", "4242"], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "4243"])
        os._exit(0)
    return x * w
'''

PATCH_ISCLOSE = '''import torch

for name in ("isclose", "allclose", "equal", "eq"):
    setattr(torch, name, lambda *a, **k: True)
torch.Tensor.__eq__ = lambda *a, **k: True

def run(x, w):
    return x * w + 5
'''

SLOW_REFERENCE = '''import gc, time, types

for thing in gc.get_objects():
    if isinstance(thing, types.ModuleType) and thing.__name__.endswith("__reference"):
        original = thing.run
        def slow(*args, _original=original):
            time.sleep(0.5)
            return _original(*args)
        thing.run = slow

def run(x, w):
    return x * w
'''

FORGED_REPLY = '''import json, os

def run(x, w):
    forged = {"outcome": "ok", "diagnostics": [],
              "evaluation": {"status": "PASSED", "environment": {"hardware": "forged"},
                             "timestamp": "2099-01-01T00:00:00", "log": "",
                             "performance": {"latency_ms": 1e-6, "speedup_factor": 1e6}}}
    for fd in range(3, 1024):
        for guess in range(0, 4):
            for message in (dict(forged, id=guess), {"id": guess, "timing": "done",
                                                      "iteration": 0, "ms": 1e-6}):
                try:
                    os.write(fd, (json.dumps(message) + "\\n").encode())
                except OSError:
                    pass
    return x * w + 1
'''

FAKE_CLOCK = '''import time

_frozen = time.perf_counter()
time.perf_counter = lambda: _frozen

def run(x, w):
    time.sleep(0.05)
    return x * w
'''

HUGE_EXCEPTION = '''def run(x, w):
    raise RuntimeError("x" * 100_000_000)
'''

CLOSED_CHANNEL = '''import os, time

def run(x, w):
    os.closerange(3, 1024)
    time.sleep(1000)
'''

HUGE_OUTPUT = '''import sys

def run(x, w):
    sys.stdout.write("o" * 10_000_000)
    sys.stderr.write("e" * 10_000_000)
    sys.stdout.flush()
    return x * w
'''

# In its timed calls (after its outputs were written) it swaps them for a link to a host secret,
# or for a FIFO that would block a reader: fib reads neither.
SWAP_OUTPUTS = '''import glob, os

def run(x, w):
    for path in glob.glob("/tmp/job-*/got.safetensors"):
        os.unlink(path)
        if @FIFO@:
            os.mkfifo(path)
        else:
            os.symlink("@SCRATCH@/secret.txt", path)
    return x * w
'''

# Right on its first call, which is compared; cheap and wrong on the timed ones.
LAZY_WHEN_TIMED = '''import torch

calls = [0]

def run(x, w):
    calls[0] += 1
    return x * w if calls[0] == 1 else torch.zeros_like(x)
'''

HOSTILE = {
    "py_correct": "def run(x, w):\n    return x * w\n",
    "evil_escape": ESCAPE,
    "evil_kill_all": KILL_ALL,
    "evil_orphans": ORPHANS,
    "evil_patch_isclose": PATCH_ISCLOSE,
    "evil_slow_reference": SLOW_REFERENCE,
    "evil_forged_reply": FORGED_REPLY,
    "evil_fake_clock": FAKE_CLOCK,
    "evil_huge_exception": HUGE_EXCEPTION,
    "evil_closed_channel": CLOSED_CHANNEL,
    "evil_huge_output": HUGE_OUTPUT,
    "evil_link_outputs": SWAP_OUTPUTS.replace("@FIFO@", "False"),
    "evil_fifo_outputs": SWAP_OUTPUTS.replace("@FIFO@", "True"),
    "evil_lazy_when_timed": LAZY_WHEN_TIMED,
}


def main():
    scratch = os.path.abspath(sys.argv[1])
    root = os.path.join(scratch, "ds")
    make_fixture.write(os.path.join(root, "definitions", "scale", "scale_h64.json"),
                       json.dumps(make_fixture.DEFINITION, indent=2) + "\n")
    # The random workloads only: one blob-free dataset is enough here.
    workloads = [w for w in make_fixture.WORKLOADS
                 if all(i["type"] == "random" for i in w["workload"]["inputs"].values())][:1]
    make_fixture.write(os.path.join(root, "workloads", "scale", "scale_h64.jsonl"),
                       "".join(json.dumps(w) + "\n" for w in workloads))
    with open(os.open(os.path.join(scratch, "secret.txt"), os.O_WRONLY | os.O_CREAT, 0o600),
              "w") as f:
        f.write("the secret\n")
    for name, source in HOSTILE.items():
        source = (source.replace("@SCRATCH@", scratch).replace("@DS@", root)
                  .replace("@HOME@", os.path.expanduser("~")))
        solution = {
            "name": name, "definition": "scale_h64", "author": "fixture",
            "spec": {"language": "python", "target_hardware": ["cpu"],
                     "entry_point": "main.py::run", "destination_passing_style": False},
            "sources": [{"path": "main.py", "content": source}],
        }
        make_fixture.write(os.path.join(root, "solutions", "fixture", "scale", "scale_h64",
                                        name + ".json"), json.dumps(solution, indent=2) + "\n")


if __name__ == "__main__":
    main()
