#pragma once
// The libtorch side of the worker: tensors built in C++ (ATen) from a smoke plan and handed to
// Python as torch.Tensor objects (THPVariable_Wrap, zero copy). The torch calls themselves are in
// torch_bridge.cpp; neither this header nor tensors.cpp includes torch.

#include <fib/exec/smoke.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

typedef struct _object PyObject; // NOLINT: Python.h's own spelling

namespace fib::worker {

// What this libtorch can do.
struct TorchCapabilities {
  std::string version; // TORCH_VERSION, e.g. "1.13.0"
  bool cuda = false;   // a CUDA build with a device present
  bool float8 = false; // float8_e4m3fn / float8_e5m2 exist
};
TorchCapabilities torch_capabilities();

// New references to one Python object per planned input, in order: torch.Tensor for tensors
// (filled as the plan says, with `seed`), int/float/bool for scalars. `import torch` must have run.
// On failure: no objects (all released) and `skip_reason` says why (a dtype this torch lacks, no
// CUDA device).
std::vector<PyObject*> make_inputs(const SmokePlan& plan, bool cuda, std::uint64_t seed,
                                   std::string& skip_reason);

} // namespace fib::worker
