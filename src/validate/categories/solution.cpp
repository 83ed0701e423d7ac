// The solution category: every solution file of the definition parses, and its fields agree with
// its path.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

namespace fib::dataset_checks {

std::optional<CheckResult> check_solution(const DefinitionJob& job,
                                          const CategoryContext& context) {
  CheckResult r;
  if (job.solutions.empty()) {
    r.add(codes::k_dataset_solution_none, "no solutions");
    return r;
  }
  std::size_t parsed = 0;
  for (const LoadedSolution* s : job.solutions) {
    const ScannedFile& f = *s->file;
    if (!s->parsed) {
      r.add(CheckLevel::error, s->error.code,
            fmt::format("{}: parse error: {}", f.name, s->error.text))
          .where = location_in(f, context.root, s->error.line, s->error.pointer);
      continue;
    }
    ++parsed;
    if (s->solution.definition != job.name) {
      r.add(codes::k_dataset_solution_definition_mismatch,
            fmt::format("{}: definition field '{}' != '{}'", f.name, s->solution.definition,
                        job.name))
          .where = location_in(f, context.root, 0, "/definition");
    }
    if (s->solution.author != f.author) {
      r.add(codes::k_dataset_solution_author_mismatch,
            fmt::format("{}: author field '{}' != path '{}'", f.name, s->solution.author, f.author))
          .where = location_in(f, context.root, 0, "/author");
    }
    if (s->solution.name != f.name) {
      r.add(codes::k_dataset_solution_name_mismatch,
            fmt::format("{}: name field '{}' != path '{}'", f.name, s->solution.name, f.name))
          .where = location_in(f, context.root, 0, "/name");
    }
  }
  r.add_front(codes::k_dataset_solution_count, fmt::format("{} solutions", parsed));
  return r;
}

} // namespace fib::dataset_checks
