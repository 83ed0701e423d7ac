#pragma once
// The runnable verdict of a normalized file (`fib normalize --smoke`): what blocks it, then its
// smoke run (fib/exec/runnable.hpp has the four verdicts).

#include <fib/exec/runnable.hpp>
#include <fib/normalize/normalize.hpp>

#include <vector>

namespace fib {

// --- Interface ---

// What stops `file` from being run before a human decides: why it was skipped, its open
// questions (the findings that ask for a decision: the actionable reason), and the errors of its
// validation, in that order. Empty for a valid file
// with no question.
std::vector<Diagnostic> blocking_diagnostics(const NormalizedFile& file);

// Needs a decision when blocking_diagnostics(file) says so (nothing runs); otherwise the smoke
// run of its normalized text through `runner` (smoke_check_text), its diagnostics stamped with
// the written file (or the input when nothing was written).
RunnableCheck check_runnable(const NormalizedFile& file, ReferenceRunner& runner);

} // namespace fib
