#pragma once
// The runnable verdicts of a staging run (`fib stage --smoke`, `fib dump --stage … --smoke`):
// what blocks each staged definition, then its smoke run (fib/exec/runnable.hpp).

#include <fib/exec/runnable.hpp>
#include <fib/stage/stage.hpp>

#include <optional>
#include <vector>

namespace fib {

// --- Interface ---

struct StagedRunnable {
  // One per entry of the result, in its order; nullopt for entries no verdict is about: a
  // duplicate (the input it stands for has the verdict) and a failed write.
  std::vector<std::optional<RunnableCheck>> checks;
  RunnableCounts counts; // of the verdicts in `checks`
};

// The verdict of every entry of `result` (a dry run's too: the text that would be staged runs):
//   added, unchanged, overwritten  errors and open normalize questions among the entry's
//                                  diagnostics need a decision; otherwise the smoke run of its
//                                  text (its diagnostics stamped with `dataset` / its target);
//   conflict, skipped, rejected    need a decision (the first diagnostic: the conflict or the
//                                  reason it was rejected); nothing runs.
StagedRunnable check_staged_runnable(const StageResult& result,
                                     const std::filesystem::path& dataset, ReferenceRunner& runner);

} // namespace fib
