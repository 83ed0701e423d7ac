#include "fib/stage/runnable.hpp"

#include <fib/normalize/normalize.hpp>

namespace fib {
namespace {

// Open normalize questions (staging keeps only the questions of normalize's findings among an
// entry's diagnostics: any normalize rule code is one), then errors.
std::vector<Diagnostic> blocking_diagnostics(const StageEntry& entry) {
  std::vector<Diagnostic> out;
  for (const auto& d : entry.diagnostics) {
    if (rule_of_code(d.code) != nullptr) {
      out.push_back(d);
    }
  }
  for (const auto& d : entry.diagnostics) {
    if (d.severity == Severity::error && rule_of_code(d.code) == nullptr) {
      out.push_back(d);
    }
  }
  return out;
}

std::optional<RunnableCheck> check_entry(const StageEntry& entry,
                                         const std::filesystem::path& dataset,
                                         ReferenceRunner& runner) {
  switch (entry.action) {
  case StageAction::duplicate:
  case StageAction::failed:
  case StageAction::excluded:
    return std::nullopt;
  case StageAction::conflict:
  case StageAction::skipped:
  case StageAction::rejected:
    return RunnableCheck{classify_runnable(entry.diagnostics, {}), {}};
  case StageAction::added:
  case StageAction::unchanged:
  case StageAction::overwritten:
    break;
  }
  if (auto blocking = blocking_diagnostics(entry); !blocking.empty()) {
    return RunnableCheck{classify_runnable(blocking, {}), {}};
  }
  return smoke_check_text(entry.incoming_text, dataset / entry.target, runner);
}

} // namespace

StagedRunnable check_staged_runnable(const StageResult& result,
                                     const std::filesystem::path& dataset,
                                     ReferenceRunner& runner) {
  StagedRunnable out;
  for (const auto& entry : result.entries) {
    auto check = check_entry(entry, dataset, runner);
    if (check) {
      out.counts.add(check->verdict.runnability);
    }
    out.checks.push_back(std::move(check));
  }
  return out;
}

} // namespace fib
