#!/usr/bin/env python3
"""Benchmark (not a test): the recorded latency of honest CPU kernels under two fib builds, side
by side, to show what the commitment to each timed call's outputs (docs/execution.md, "Trust
model") costs once fib has subtracted it.

    python3 bench/commitment_cost.py --before OLD/fib --after NEW/fib [--rounds 5]

Two definitions of about a millisecond a call on the development machine, each with one python
solution that is the reference's own code:
  matmul_n128   y = x @ w, x [128, 512], w [512, 512] float32 (compute-bound, 256 KiB of output)
  rmsnorm_n256  y = x * rsqrt(mean(x^2) + eps) * w, x [256, 4096] float32 (memory-bound,
                4 MiB of output: the commitment hashes as many bytes as the kernel writes)
Each round runs `fib run --dataset DS --warmup 3 --iterations 30` with the before build, then the
after build (alternating), in a temporary directory (FIB_CACHE_PATH there too). Prints, per
definition and build, the median over the rounds of the solution's latency_ms, and the after /
before ratio.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

DEFINITIONS = {
    "matmul_n128": ({"n": 128}, {"x": ["n", "k"], "w": ["k", "m"]}, {"y": ["n", "m"]},
                    {"k": 512, "m": 512}, "def run(x, w):\n    return x @ w\n"),
    "rmsnorm_n256": ({"n": 256}, {"x": ["n", "h"], "w": ["h"]}, {"y": ["n", "h"]}, {"h": 4096},
                     "import torch\n\ndef run(x, w):\n"
                     "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w\n"),
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def make_dataset(root):
    for name, (var, inputs, outputs, consts, code) in DEFINITIONS.items():
        axes = {a: {"type": "var"} for a in var}
        axes.update({a: {"type": "const", "value": v} for a, v in consts.items()})
        definition = {"name": name, "op_type": "bench", "axes": axes,
                      "inputs": {i: {"shape": s, "dtype": "float32"} for i, s in inputs.items()},
                      "outputs": {o: {"shape": s, "dtype": "float32"} for o, s in outputs.items()},
                      "reference": "import torch\n\n" + code}
        write(os.path.join(root, "definitions", "bench", name + ".json"), json.dumps(definition))
        workload = {"definition": name, "solution": None, "evaluation": None,
                    "workload": {"uuid": "00000000-0000-4000-8000-%012d" % len(name), "axes": var,
                                 "inputs": {i: {"type": "random"} for i in inputs}}}
        write(os.path.join(root, "workloads", "bench", name + ".jsonl"), json.dumps(workload) + "\n")
        solution = {"name": name + "_py", "definition": name, "author": "bench",
                    "spec": {"language": "python", "target_hardware": ["cpu"],
                             "entry_point": "main.py::run", "destination_passing_style": False},
                    "sources": [{"path": "main.py", "content": "import torch\n\n" + code}]}
        write(os.path.join(root, "solutions", "bench", "bench", name, name + "_py.json"),
              json.dumps(solution))


def latencies(fib, root, env):
    subprocess.run([fib, "run", "--dataset", root, "--quiet", "--warmup", "3", "--iterations",
                    "30"], env=env, check=False, capture_output=True)
    out = {}
    folder = os.path.join(root, "traces", "bench", "bench")
    for name in DEFINITIONS:
        with open(os.path.join(folder, name + ".jsonl"), encoding="utf-8") as f:
            for line in f:
                e = json.loads(line)["evaluation"]
                out[name] = (e["performance"] or {}).get("latency_ms", float("nan"))
    os.system("rm -rf " + folder)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "ds")
        make_dataset(root)
        env = dict(os.environ, FIB_CACHE_PATH=os.path.join(tmp, "cache"))
        seen = {"before": {n: [] for n in DEFINITIONS}, "after": {n: [] for n in DEFINITIONS}}
        for _ in range(args.rounds):
            for label, fib in (("before", args.before), ("after", args.after)):
                for name, ms in latencies(fib, root, env).items():
                    seen[label][name].append(ms)
        print("| definition | before (ms) | after (ms) | after / before |")
        print("|---|---|---|---|")
        for name in DEFINITIONS:
            b = statistics.median(seen["before"][name])
            a = statistics.median(seen["after"][name])
            print("| %s | %.4f | %.4f | %.3f |" % (name, b, a, a / b))


if __name__ == "__main__":
    main()
