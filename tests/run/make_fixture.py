#!/usr/bin/env python3
"""Writes the `fib run` fixture dataset: one definition (y = x * w, bfloat16 → float32 here so the
CPU of torch 1.13 can run everything), two random workloads, and one solution per outcome.

    python3 tests/run/make_fixture.py DIR [--only NAME ...]

Solutions (author `fixture` unless noted):
  py_correct        python, returns x * w                                   → PASSED
  py_dps            python, destination-passing style, writes into out      → PASSED
  cpp_correct       cpp, binding torch, returns x * w                        → PASSED
  py_wrong_values   python, returns x * w + 1                               → INCORRECT_NUMERICAL
  py_wrong_shape    python, returns (x * w)[:, :4]                          → INCORRECT_SHAPE
  py_wrong_dtype    python, returns (x * w).double()                        → INCORRECT_DTYPE
  cpp_broken        cpp, binding torch, does not compile                    → COMPILE_ERROR
  py_raises         python, raises ValueError                               → RUNTIME_ERROR
  py_segfault       python, dereferences NULL through ctypes (kills worker) → RUNTIME_ERROR
  py_hangs          python, loops forever                                   → TIMEOUT
  py_sleeps_n32     python, sleeps 10 minutes on the n=32 workload, else x * w → PASSED, and
                    TIMEOUT there (what a run can be killed in the middle of)
  py_reuses_result  python, returns the first result it made for each shape again → PASSED on
                    the workload's inputs, INCORRECT_NUMERICAL on fib's perturbed inputs
  py_memo_pointer   python, memoizes x * w on the inputs' data pointers   → the same, when
                    the allocator hands the perturbed inputs the addresses of earlier ones
  py_memo_contents  python, memoizes x * w on the inputs' bytes and sleeps 50 ms on every miss
                    → PASSED, with a latency of at least 50 ms because every timed call's
                    random inputs get new values (a memo hit would take microseconds)
  cuda_scale        cuda, binding torch: kernel.cu (nvcc) + main.cpp           → compiles here;
                    without a GPU its launch fails                          → RUNTIME_ERROR
  py_off_by_few     python, returns x * w with every 50th value off by 1  → INCORRECT_NUMERICAL,
                    PASSED under the low-bit evaluator (98% of the values match)
  py_sign_guess     python, right only where x.sum() > 0 (which new orders of the values of a
                    timed call keep)                                     → fails on the trial
                    (inputs of another seed) where the sum is not positive
  cpp_tvm_ffi       cpp, binding tvm-ffi                                    → COMPILE_ERROR naming
                    the missing tvm_ffi package where the worker's Python lacks it
  baseline_py       author `baseline`, python, returns x * w                → PASSED
"""
import argparse
import json
import os

DEFINITION = {
    "name": "scale_h64", "op_type": "scale", "description": "y = x * w",
    "axes": {"n": {"type": "var", "description": "rows"},
             "h": {"type": "const", "value": 64, "description": "columns"}},
    "inputs": {"x": {"shape": ["n", "h"], "dtype": "float32", "description": "x"},
               "w": {"shape": ["h"], "dtype": "float32", "description": "w"}},
    "outputs": {"y": {"shape": ["n", "h"], "dtype": "float32", "description": "y"}},
    "reference": "import torch\n\ndef run(x, w):\n    return x * w\n",
}

WORKLOADS = [
    {"definition": "scale_h64", "solution": None, "evaluation": None,
     "workload": {"uuid": "11111111-aaaa-4000-8000-000000000001", "axes": {"n": 8},
                  "inputs": {"x": {"type": "random"}, "w": {"type": "random"}}}},
    {"definition": "scale_h64", "solution": None, "evaluation": None,
     "workload": {"uuid": "22222222-bbbb-4000-8000-000000000002", "axes": {"n": 32},
                  "inputs": {"x": {"type": "random"}, "w": {"type": "random"}}}},
    # w read from a safetensors blob by fib's own reader (no Python involved).
    {"definition": "scale_h64", "solution": None, "evaluation": None,
     "workload": {"uuid": "33333333-cccc-4000-8000-000000000003", "axes": {"n": 4},
                  "inputs": {"x": {"type": "random"},
                             "w": {"type": "safetensors",
                                   "path": "blob/workloads/scale/scale_h64/w.safetensors",
                                   "tensor_key": "w"}}}},
]


def safetensors_bytes(name, values):
    """A safetensors file holding one float32 vector, written by hand (no library needed)."""
    import struct
    data = struct.pack("<%df" % len(values), *values)
    header = json.dumps({name: {"dtype": "F32", "shape": [len(values)],
                                "data_offsets": [0, len(data)]}}).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + data

CPP_CORRECT = """#include <torch/extension.h>

torch::Tensor run(torch::Tensor x, torch::Tensor w) {
  return x * w;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("run", &run, "y = x * w");
}
"""

CUDA_KERNEL = """#include "kernel.h"

__global__ void scale_kernel(const float* x, const float* w, float* y, long n, long h) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n * h) {
    y[i] = x[i] * w[i % h];
  }
}

int scale_launch(const float* x, const float* w, float* y, long n, long h) {
  const long total = n * h;
  scale_kernel<<<static_cast<unsigned>((total + 255) / 256), 256>>>(x, w, y, n, h);
  return static_cast<int>(cudaDeviceSynchronize());
}
"""

CUDA_HEADER = """#pragma once
#include <cuda_runtime.h>
int scale_launch(const float* x, const float* w, float* y, long n, long h);
"""

CUDA_MAIN = """#include <torch/extension.h>
#include "kernel.h"

torch::Tensor run(torch::Tensor x, torch::Tensor w) {
  auto y = torch::empty_like(x);
  const int status = scale_launch(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(),
                                  x.size(0), x.size(1));
  TORCH_CHECK(status == 0, "CUDA error ", status, ": ", cudaGetErrorString(static_cast<cudaError_t>(status)));
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("run", &run, "y = x * w on the GPU");
}
"""

TVM_FFI_MAIN = """#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

void run(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y) {
  const float* xs = static_cast<const float*>(x.data_ptr());
  const float* ws = static_cast<const float*>(w.data_ptr());
  float* ys = static_cast<float*>(y.data_ptr());
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      ys[i * cols + j] = xs[i * cols + j] * ws[j];
    }
  }
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);
"""

SOLUTIONS = {
    "py_correct": ("python", None, False, {"main.py": "def run(x, w):\n    return x * w\n"}),
    "py_dps": ("python", None, True,
               {"main.py": "def run(x, w, y):\n    y.copy_(x * w)\n"}),
    "cpp_correct": ("cpp", "torch", False, {"main.cpp": CPP_CORRECT}),
    "py_wrong_values": ("python", None, False,
                        {"main.py": "def run(x, w):\n    return x * w + 1\n"}),
    "py_wrong_shape": ("python", None, False,
                       {"main.py": "def run(x, w):\n    return (x * w)[:, :4]\n"}),
    "py_wrong_dtype": ("python", None, False,
                       {"main.py": "def run(x, w):\n    return (x * w).double()\n"}),
    "cpp_broken": ("cpp", "torch", False,
                   {"main.cpp": "#include <torch/extension.h>\n\nthis is not C++;\n"}),
    "py_raises": ("python", None, False,
                  {"main.py": "def run(x, w):\n    raise ValueError('no kernel for you')\n"}),
    "py_segfault": ("python", None, False,
                    {"main.py": "import ctypes\n\ndef run(x, w):\n    return ctypes.string_at(0)\n"}),
    "py_hangs": ("python", None, False,
                 {"main.py": "def run(x, w):\n    while True:\n        pass\n"}),
    "py_sleeps_n32": ("python", None, False,
                      {"main.py": "import time\n\ndef run(x, w):\n    if x.shape[0] == 32:\n"
                                  "        time.sleep(600)\n    return x * w\n"}),
    "py_reuses_result": ("python", None, False,
                         {"main.py": "_first = {}\n\ndef run(x, w):\n"
                                     "    key = tuple(x.shape)\n"
                                     "    if key not in _first:\n"
                                     "        _first[key] = x * w\n"
                                     "    return _first[key].clone()\n"}),
    "py_memo_pointer": ("python", None, False,
                        {"main.py": "_memo = {}\n\ndef run(x, w):\n"
                                    "    key = (x.data_ptr(), w.data_ptr(), tuple(x.shape))\n"
                                    "    if key not in _memo:\n"
                                    "        _memo[key] = x * w\n"
                                    "    return _memo[key].clone()\n"}),
    "py_memo_contents": ("python", None, False,
                         {"main.py": "import time\n\n_memo = {}\n\ndef run(x, w):\n"
                                     "    key = (x.numpy().tobytes(), w.numpy().tobytes())\n"
                                     "    if key not in _memo:\n"
                                     "        time.sleep(0.05)\n"
                                     "        _memo[key] = x * w\n"
                                     "    return _memo[key].clone()\n"}),
    "cuda_scale": ("cuda", "torch", False,
                   {"main.cpp": CUDA_MAIN, "kernel.h": CUDA_HEADER, "kernel.cu": CUDA_KERNEL}),
    "py_off_by_few": ("python", None, False,
                      {"main.py": "def run(x, w):\n    y = x * w\n"
                                  "    y.view(-1)[::50] += 1\n    return y\n"}),
    "py_sign_guess": ("python", None, False,
                      {"main.py": "def run(x, w):\n"
                                  "    return x * w if x.sum() > 0 else x * w + 1\n"}),
    "cpp_tvm_ffi": ("cpp", "tvm-ffi", True, {"main.cpp": TVM_FFI_MAIN}),
    "baseline_py": ("python", None, False, {"main.py": "def run(x, w):\n    return w * x\n"}),
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_definition_and_workloads(root):
    """The definition, its workloads and the blob one of them reads, below `root`."""
    write(os.path.join(root, "definitions", "scale", "scale_h64.json"),
          json.dumps(DEFINITION, indent=2) + "\n")
    write(os.path.join(root, "workloads", "scale", "scale_h64.jsonl"),
          "".join(json.dumps(w) + "\n" for w in WORKLOADS))
    blob = os.path.join(root, "blob", "workloads", "scale", "scale_h64", "w.safetensors")
    os.makedirs(os.path.dirname(blob), exist_ok=True)
    with open(blob, "wb") as f:
        f.write(safetensors_bytes("w", [0.5 + i / 64 for i in range(64)]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    root = args.root
    write_definition_and_workloads(root)
    for name, (language, binding, dps, files) in SOLUTIONS.items():
        if args.only is not None and name not in args.only:
            continue
        author = "baseline" if name.startswith("baseline") else "fixture"
        entry = next(iter(files))
        solution = {
            "name": name, "definition": "scale_h64", "author": author,
            "spec": {"language": language, "target_hardware": ["cpu"],
                     "entry_point": entry + "::run", "destination_passing_style": dps,
                     "binding": binding},
            "sources": [{"path": p, "content": c} for p, c in files.items()],
        }
        write(os.path.join(root, "solutions", author, "scale", "scale_h64", name + ".json"),
              json.dumps(solution, indent=2) + "\n")


if __name__ == "__main__":
    main()
