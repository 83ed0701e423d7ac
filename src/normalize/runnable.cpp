#include "fib/normalize/runnable.hpp"

namespace fib {

std::vector<Diagnostic> blocking_diagnostics(const NormalizedFile& file) {
  std::vector<Diagnostic> out;
  if (file.verdict == NormalizeVerdict::skipped) {
    for (const auto& finding : file.findings) {
      if (finding.diagnostic.severity == Severity::error) {
        out.push_back(finding.diagnostic);
      }
    }
  }
  for (const auto& finding : file.findings) {
    if (finding.kind == FindingKind::question) {
      out.push_back(finding.diagnostic);
    }
  }
  for (const auto& d : file.validation) {
    if (d.severity == Severity::error) {
      out.push_back(d);
    }
  }
  return out;
}

RunnableCheck check_runnable(const NormalizedFile& file, ReferenceRunner& runner) {
  if (auto blocking = blocking_diagnostics(file); !blocking.empty()) {
    return RunnableCheck{classify_runnable(blocking, {}), {}};
  }
  return smoke_check_text(file.normalized_text, file.written.value_or(file.input), runner);
}

} // namespace fib
