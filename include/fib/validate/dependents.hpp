#pragma once
// What depends on a staged definition: the workloads, solutions and traces of a dataset that name
// it, checked against a replacement before `fib stage --on-conflict overwrite` writes it.

#include <fib/base/diagnostic.hpp>
#include <fib/model/definition.hpp>

#include <cstddef>
#include <filesystem>
#include <vector>

namespace fib {

// --- Interface ---

struct DependentCounts {
  std::size_t workloads = 0; // workload lines (`workloads/<op_type>/<name>.jsonl`)
  std::size_t solutions = 0; // solution files (`solutions/<author>/<op_type>/<name>/*.json`)
  std::size_t traces = 0;    // trace lines (`traces/<op_type>/<name>.jsonl` and per author)
};

struct DependentsCheck {
  DependentCounts total;  // what names the definition
  DependentCounts broken; // what is valid against the staged copy and not against the incoming one
  // One per broken line or file, in path and line order: the validator's code and message for
  // the first problem the incoming definition causes, with `file` and `line` (0 for a solution).
  std::vector<Diagnostic> breakages;
};

// Checks every workload and trace line that names `staged.name` with the dataset validator's
// workload checks (axes, inputs, blob shapes, constraints), once against `staged` and once against
// `incoming`; a line breaks when the incoming definition gives it a problem the staged one does
// not. A solution breaks when the incoming definition changes the names or order of the inputs or
// outputs (the arguments its entry point takes). Files that do not parse are not counted. Reads
// only; never throws.
DependentsCheck check_dependents(const std::filesystem::path& root, const Definition& staged,
                                 const Definition& incoming);

} // namespace fib
