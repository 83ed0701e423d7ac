#!/usr/bin/env python3
"""Benchmark (not a test): what an honest timed call pays for its commitment beyond what fib
subtracts, measured inside one process with the worker's own harness code (src/worker/sandbox.py),
so without the noise of whole `fib run` processes (bench/commitment_cost.py measures those).

    /usr/bin/python3 bench/commitment_residual.py [--calls 200]

For the two kernels of bench/commitment_cost.py, each call: the kernel, then the commitment to
its outputs under a fresh key, each timed with time.perf_counter. Prints the kernel's median, the
commitment's median, what the greeting's table (commitment_cost, measured first, as the worker
does before any untrusted code) says fib subtracts for that many bytes, and the residual: the
commitment's median less that figure, also as a share of the kernel.
"""
import argparse
import importlib.util
import os
import statistics
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "sandbox", os.path.join(HERE, "..", "src", "worker", "sandbox.py"))
sandbox = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sandbox)


def subtracted(table, size):
    """commitment_seconds of src/exec/timed_calls.cpp, in Python."""
    if size <= table[0][0]:
        return table[0][1]
    upper = 1
    while upper + 1 < len(table) and table[upper][0] < size:
        upper += 1
    (b0, s0), (b1, s1) = table[upper - 1], table[upper]
    return max(s0 + (s1 - s0) / (b1 - b0) * (size - b0), 0.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    table = sandbox.commitment_cost("cpu")
    x, w = torch.randn(128, 512), torch.randn(512, 512)
    xr, wr = torch.randn(256, 4096), torch.randn(4096)
    kernels = {
        "matmul_n128": lambda: x @ w,
        "rmsnorm_n256": lambda: xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-6) * wr,
    }
    print("| kernel | output | kernel (ms) | commitment (ms) | subtracted (ms) | residual (ms) "
          "| residual / kernel |")
    print("|---|---|---|---|---|---|---|")
    for name, kernel in kernels.items():
        kernel_ms, commit_ms = [], []
        for _ in range(calls + 10):
            start = time.perf_counter()
            y = kernel()
            middle = time.perf_counter()
            sandbox.commitment(os.urandom(16).hex(), [y])
            end = time.perf_counter()
            kernel_ms.append((middle - start) * 1e3)
            commit_ms.append((end - middle) * 1e3)
        k, c = statistics.median(kernel_ms[10:]), statistics.median(commit_ms[10:])
        s = subtracted(table, y.numel() * y.element_size()) * 1e3
        print(f"| {name} | {y.numel() * y.element_size() >> 10} KiB | {k:.3f} | {c:.3f} | {s:.3f} "
              f"| {c - s:.3f} | {(c - s) / k:.1%} |")


if __name__ == "__main__":
    main()
