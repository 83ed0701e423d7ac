#!/usr/bin/env python3
"""Benchmark (not a test): what the sampling evaluator of `fib run` costs at a real vocabulary.

    python3 bench/sampling_cost.py --definition PATH/top_k_top_p_sampling_from_probs_v128256.json
                                   [--fib build/apps/fib/fib] [--samples 5000,20000,50000]
                                   [--batch 1] [--runs 3] [--timeout 1800] [--keep]

PATH is a top-k/top-p sampling definition over probs [batch_size, vocab_size], top_k and top_p
[batch_size] (the dataset's top_k_top_p_sampling_from_probs_v128256, Llama 3's vocabulary of
128,256 tokens). Everything happens in a temporary directory: a dataset with that definition, one
workload of --batch rows (random probabilities; top_k 50 and top_p 0.9 for every row from a
blob) and one vectorized torch solution (sort, top-k, renormalize, top-p, torch.multinomial).
For each count of --samples, `fib run --sampling-samples N --warmup 1 --iterations 3` runs
--runs times (traces removed before each); the script prints the median wall, the peak resident
memory of fib with its workers (their RSS summed over the process tree, sampled every 0.2 s from
/proc), the status, the TVD, the noise floor and the
samples drawn per row, read off the trace. The old tool's sampling evaluator needs a CUDA device,
so it has no CPU figure to set beside these.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

SOLUTION = '''import torch

def run(probs, top_k, top_p):
    vocab = probs.shape[-1]
    ranked, order = torch.sort(probs.float(), dim=-1, descending=True)
    k = top_k.to(torch.int64)
    k = torch.where((k > 0) & (k < vocab), k, torch.full_like(k, vocab))
    positions = torch.arange(vocab).expand_as(ranked)
    ranked = torch.where(positions < k.unsqueeze(1), ranked, torch.zeros_like(ranked))
    ranked = ranked / ranked.sum(dim=-1, keepdim=True)
    before = torch.cumsum(ranked, dim=-1) - ranked
    p = top_p.float().unsqueeze(1)
    keep = (before <= p) | (p >= 1.0)
    keep[:, 0] = True
    ranked = torch.where(keep, ranked, torch.zeros_like(ranked))
    picked = torch.multinomial(ranked, 1)
    return order.gather(1, picked).squeeze(1)
'''


def blob(batch):
    tensors = [("top_k", "I32", "i", [50] * batch), ("top_p", "F32", "f", [0.9] * batch)]
    header, data = {}, b""
    for key, dtype, code, values in tensors:
        packed = struct.pack("<%d%s" % (len(values), code), *values)
        header[key] = {"dtype": dtype, "shape": [batch],
                       "data_offsets": [len(data), len(data) + len(packed)]}
        data += packed
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def make_dataset(root, definition_path, batch):
    with open(definition_path, encoding="utf-8") as f:
        definition = json.load(f)
    name, op_type = definition["name"], definition["op_type"]
    for sub in ("definitions", "workloads", "solutions/bench"):
        os.makedirs(os.path.join(root, sub, op_type), exist_ok=True)
    shutil.copy(definition_path, os.path.join(root, "definitions", op_type, name + ".json"))
    blob_path = "blob/workloads/%s/%s/filters.safetensors" % (op_type, name)
    os.makedirs(os.path.dirname(os.path.join(root, blob_path)), exist_ok=True)
    with open(os.path.join(root, blob_path), "wb") as f:
        f.write(blob(batch))
    workload = {"definition": name, "solution": None, "evaluation": None,
                "workload": {"uuid": "66666666-ffff-4000-8000-000000000006",
                             "axes": {"batch_size": batch},
                             "inputs": {"probs": {"type": "random"},
                                        "top_k": {"type": "safetensors", "path": blob_path,
                                                  "tensor_key": "top_k"},
                                        "top_p": {"type": "safetensors", "path": blob_path,
                                                  "tensor_key": "top_p"}}}}
    with open(os.path.join(root, "workloads", op_type, name + ".jsonl"), "w") as f:
        f.write(json.dumps(workload) + "\n")
    solution = {"name": "torch_sampler", "definition": name, "author": "bench",
                "spec": {"language": "python", "target_hardware": ["cpu"],
                         "entry_point": "main.py::run", "destination_passing_style": False,
                         "binding": None},
                "sources": [{"path": "main.py", "content": SOLUTION}]}
    os.makedirs(os.path.join(root, "solutions", "bench", op_type, name), exist_ok=True)
    with open(os.path.join(root, "solutions", "bench", op_type, name, "torch_sampler.json"),
              "w") as f:
        json.dump(solution, f)
    return name, op_type


def tree_rss_mb(root_pid):
    """The resident memory of `root_pid` and all its descendants, in MB, from /proc."""
    parents, rss = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(child for child, parent in parents.items() if parent == pid)
    return total / 1e6


def timed_run(cmd, env):
    """(wall s, peak MB of the process tree, sampled every 0.2 s) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.2)
    return time.perf_counter() - start, peak


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--definition", required=True)
    parser.add_argument("--fib", default="build/apps/fib/fib")
    parser.add_argument("--samples", default="5000,20000,50000")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    fib = os.path.abspath(args.fib)
    tmp = tempfile.mkdtemp(prefix="fib-sampling-bench-")
    root = os.path.join(tmp, "ds")
    name, op_type = make_dataset(root, args.definition, args.batch)
    env = dict(os.environ, FIB_CACHE_PATH=os.path.join(tmp, "cache"))
    print("machine: %s, %d cores, python %s" % (platform.platform(), os.cpu_count(),
                                                platform.python_version()))
    print("| samples per row | wall (median of %d) | peak RSS | status | TVD | noise floor | "
          "drawn per row |" % args.runs)
    print("|---|---|---|---|---|---|---|")
    for count in [int(n) for n in args.samples.split(",")]:
        walls, peaks, trace = [], [], None
        for _ in range(args.runs):
            shutil.rmtree(os.path.join(root, "traces"), ignore_errors=True)
            wall, peak = timed_run([fib, "run", "--dataset", root, "--quiet", "--warmup", "1",
                                    "--iterations", "3", "--sampling-samples", str(count),
                                    "--timeout", str(args.timeout)], env)
            walls.append(wall)
            peaks.append(peak)
            path = os.path.join(root, "traces", "bench", op_type, name + ".jsonl")
            with open(path, encoding="utf-8") as f:
                trace = json.loads(f.readline())
        peak = max(peaks)
        e = trace["evaluation"]
        extra = (e.get("correctness") or {}).get("extra") or {}
        print("| %d | %.1f s | %.0f MB | %s | %s | %s | %s |" % (
            count, statistics.median(walls), peak, e["status"],
            "%.4f" % extra["tvd"] if "tvd" in extra else "-",
            "%.4f" % extra["tvd_noise_floor"] if "tvd_noise_floor" in extra else "-",
            extra.get("samples_per_row", "-")))
        sys.stdout.flush()
    if args.keep:
        print("kept:", tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
