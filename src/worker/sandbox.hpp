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

  // The greeting: {"fib_worker": 1, "torch", "python", "cuda", "float8"}.
  Json hello() const;

  // Runs one request (a job of kind "build", "smoke", "build_solution" or "evaluate") and
  // returns the reply (`id`, `outcome`, `diagnostics`). Never throws.
  Json run(const Json& request);

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

} // namespace fib::worker
