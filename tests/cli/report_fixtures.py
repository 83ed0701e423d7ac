"""A small scored dataset for the `fib report` golden cases.

d1 has a baseline solution (2.0 ms on w1 and w2), alice's (1.0 ms: speedup 2.0 on both) and
bob's (4.0 ms and 0.8 ms: speedups 0.5 and 2.5, mean 1.5); carol's solution fails on w1. d2 has no
solutions and no traces. Setup scripts import this module with `sys.path.insert(0, "../..")`.
"""
import json
import os


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def definition(name, description="A copy."):
    return {
        "name": name, "op_type": "op", "description": description,
        "axes": {"M": {"type": "var"}},
        "inputs": {"A": {"shape": ["M"], "dtype": "float32"}},
        "outputs": {"B": {"shape": ["M"], "dtype": "float32"}},
        "reference": "def run(A):\n    return A\n",
    }


def solution(name, author, definition_name="d1"):
    return {
        "name": name, "definition": definition_name, "author": author,
        "spec": {"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"},
        "sources": [{"path": "main.py", "content": "def run(A):\n    return A\n"}],
    }


def trace(solution_name, uuid, latency_ms, reference_ms=2.0):
    """One d1 trace line: PASSED with this latency, or RUNTIME_ERROR when latency_ms is None."""
    if latency_ms is None:
        evaluation = {"status": "RUNTIME_ERROR", "environment": {"hardware": "cpu"},
                      "timestamp": "2026-01-01T00:00:00Z", "log": "boom"}
    else:
        evaluation = {
            "status": "PASSED", "environment": {"hardware": "cpu"},
            "timestamp": "2026-01-01T00:00:00Z",
            "correctness": {"max_relative_error": 0.0, "max_absolute_error": 0.0},
            "performance": {"latency_ms": latency_ms, "reference_latency_ms": reference_ms,
                            "speedup_factor": reference_ms / latency_ms},
        }
    return json.dumps({"definition": "d1",
                       "workload": {"axes": {"M": 2}, "inputs": {"A": {"type": "random"}},
                                    "uuid": uuid},
                       "solution": solution_name, "evaluation": evaluation})


def write_dataset(root, with_baseline=True):
    _write(f"{root}/definitions/op/d1.json", json.dumps(definition("d1"), indent=2))
    _write(f"{root}/definitions/op/d2.json", json.dumps(definition("d2"), indent=2))
    authors = [("alice", "fast"), ("bob", "mixed"), ("carol", "broken")]
    if with_baseline:
        authors.insert(0, ("baseline", "base"))
    for author, name in authors:
        _write(f"{root}/solutions/{author}/op/d1/{name}.json",
               json.dumps(solution(name, author), indent=2))
    runs = {"base": [("w1", 2.0), ("w2", 2.0)], "fast": [("w1", 1.0), ("w2", 1.0)],
            "mixed": [("w1", 4.0), ("w2", 0.8)], "broken": [("w1", None)]}
    for author, name in authors:
        lines = [trace(name, uuid, latency) for uuid, latency in runs[name]]
        _write(f"{root}/traces/{author}/op/d1.jsonl", "\n".join(lines) + "\n")
    _write(f"{root}/workloads/op/d1.jsonl", json.dumps(
        {"definition": "d1", "workload": {"axes": {"M": 2}, "inputs": {"A": {"type": "random"}},
                                          "uuid": "w1"}, "solution": None, "evaluation": None})
        + "\n")


def tree(root):
    """Every entry below root, relative, sorted; links marked with ' -> target'."""
    out = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            out.append(rel + (" -> " + os.readlink(path) if os.path.islink(path) else ""))
    return sorted(out)
