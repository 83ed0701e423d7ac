#pragma once
// The Python side of the worker: one embedded interpreter with torch, in which each job gets a
// fresh module namespace for the reference (its source registered with linecache, so tracebacks
// show reference lines). Jobs are the protocol's requests (include/fib/exec/worker_client.hpp);
// replies are built here. No torch headers.

#include <fib/io/json_io.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace fib::worker {

class Sandbox {
public:
  Sandbox();
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Starts Python (`python` is the interpreter whose torch this worker links) and imports torch.
  // The error text when that fails.
  std::optional<std::string> start(const std::filesystem::path& python);

  // The greeting: {"fib_worker": 1, "torch", "python", "cuda", "float8"}, and "device_name" (of
  // CUDA device 0) when included and CUDA is there. Said before any untrusted code has run.
  enum class DeviceName { included, omitted };
  Json hello(DeviceName device_name) const;

  // Runs one request (a job of kind "build", "smoke", "build_solution", "load_solution",
  // "reference_outputs", "solution_outputs" or "solution_samples") and returns the reply (`id`,
  // `outcome`, `diagnostics`, and the kind's own fields). `channel` is the protocol descriptor: the
  // timed calls of "reference_outputs" and "solution_outputs" speak on it before the reply. Never
  // throws.
  Json run(const Json& request, int channel);

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

} // namespace fib::worker
