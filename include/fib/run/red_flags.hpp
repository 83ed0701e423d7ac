#pragma once
// Static red flags in a solution's sources (docs/run.md, "Red flags in the sources"): constructs
// that let a kernel look faster or more correct than it is, found by reading the text, before
// anything runs. They are warnings, never verdicts: the evaluation still decides the status.

#include <fib/base/diagnostic.hpp>
#include <fib/model/solution.hpp>

#include <vector>

namespace fib {

// --- Interface ---

// One `run.red-flag` warning per (source file, kind of flag), at the first line that shows it,
// `file` set to SOLUTION_NAME/SOURCE_PATH and `line` to that line:
//   * work on a side stream or another thread, which fib's timer (the call's return, then a
//     device synchronize) does not wait for: `torch.cuda.Stream(`, `torch.cuda.stream(`,
//     `cudaStreamCreate`, `threading.Thread(`, `multiprocessing`, `concurrent.futures`,
//     `std::thread`, `std::async`;
//   * a fallback to torch's own ops inside a compiled or Triton kernel's sources (not for
//     `python` solutions, which are torch code by definition): `torch.matmul(`, `torch.mm(`,
//     `torch.bmm(`, `torch.einsum(`, `torch.nn.functional.`, `F.softmax(`, `at::matmul(`,
//     `at::mm(`, `at::bmm(`, `torch::matmul(`, `torch::mm(`, `at::softmax(`, `torch::softmax(`;
//   * the reference itself: a source that names the reference module fib builds
//     (`<definition>__reference`, `__reference`);
//   * a try/except (Python) or try/catch (C++) that can hide a failing kernel behind a fallback.
// Lines that are comments (after `#` in Python, `//` in C++ and CUDA) are not read. Never throws.
std::vector<Diagnostic> solution_red_flags(const Solution& solution);

} // namespace fib
