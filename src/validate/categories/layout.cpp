// The layout category: every file's place in the tree agrees with what it says (names, op_type
// directories, definitions), and the blobs the workloads name exist.

#include "validate/dataset_job.hpp"

#include "util/strings.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

namespace fib::dataset_checks {
namespace {

void check_definition_file(const LoadedDefinition& d, CheckResult& r) {
  if (!d.loaded()) {
    return;
  }
  if (d.entry->file.name != d.definition.name) {
    r.add(codes::k_dataset_definition_name_mismatch,
          fmt::format("definition name mismatch: path says '{}', JSON says '{}'",
                      d.entry->file.name, d.definition.name))
        .where.pointer = "/name";
  }
  if (d.entry->file.op_type != d.definition.op_type) {
    r.add(codes::k_dataset_definition_op_type_mismatch,
          fmt::format("definition op_type mismatch: path says '{}', JSON says '{}'",
                      d.entry->file.op_type, d.definition.op_type))
        .where.pointer = "/op_type";
  }
}

// The first line whose definition is not `name`, or null.
const TraceLine* first_foreign_line(const LoadedTraceFile& file, const std::string& name) {
  if (!file.parsed) {
    return nullptr;
  }
  for (const TraceLine& line : file.lines) {
    if (line.trace.definition != name) {
      return &line;
    }
  }
  return nullptr;
}

void check_workload_file(const DefinitionJob& job, const std::string& def_dir,
                         const std::filesystem::path& root, CheckResult& r) {
  if (job.workload == nullptr) {
    return;
  }
  if (job.workload->file->op_type != def_dir) {
    r.add(codes::k_dataset_workload_op_type_mismatch,
          fmt::format("workload op_type mismatch: expected '{}', got '{}'", def_dir,
                      job.workload->file->op_type))
        .where = location_in(*job.workload->file, root);
  }
  if (const TraceLine* line = first_foreign_line(*job.workload, job.name)) {
    r.add(codes::k_dataset_workload_definition_mismatch,
          fmt::format("workload trace definition mismatch: expected '{}', got '{}'", job.name,
                      line->trace.definition))
        .where = location_in(*job.workload->file, root, line->line, "/definition");
  }
}

void check_solution_files(const DefinitionJob& job, const std::string& def_dir,
                          const std::filesystem::path& root, CheckResult& r) {
  for (const LoadedSolution* s : job.solutions) {
    if (!s->parsed) {
      continue;
    }
    const ScannedFile& f = *s->file;
    if (f.author != s->solution.author) {
      r.add(codes::k_dataset_solution_author_mismatch,
            fmt::format("solution '{}' author mismatch: path '{}', JSON '{}'", f.name, f.author,
                        s->solution.author))
          .where = location_in(f, root, 0, "/author");
    }
    if (job.name != s->solution.definition) {
      r.add(codes::k_dataset_solution_definition_mismatch,
            fmt::format("solution '{}' definition mismatch: path '{}', JSON '{}'", f.name, job.name,
                        s->solution.definition))
          .where = location_in(f, root, 0, "/definition");
    }
    if (f.name != s->solution.name) {
      r.add(codes::k_dataset_solution_name_mismatch,
            fmt::format("solution name mismatch: path '{}', JSON '{}'", f.name, s->solution.name))
          .where = location_in(f, root, 0, "/name");
    }
    if (f.op_type != def_dir) {
      r.add(codes::k_dataset_solution_op_type_mismatch,
            fmt::format("solution '{}' op_type mismatch: expected '{}', got '{}'", f.name, def_dir,
                        f.op_type))
          .where = location_in(f, root);
    }
  }
}

void check_trace_files(const DefinitionJob& job, const std::string& def_dir,
                       const std::filesystem::path& root, CheckResult& r) {
  for (const LoadedTraceFile* t : job.traces) {
    if (t->file->op_type != def_dir) {
      r.add(codes::k_dataset_trace_op_type_mismatch,
            fmt::format("trace file op_type mismatch for author '{}': expected '{}', got '{}'",
                        t->file->author, def_dir, t->file->op_type))
          .where = location_in(*t->file, root);
    }
    if (const TraceLine* line = first_foreign_line(*t, job.name)) {
      r.add(codes::k_dataset_trace_definition_mismatch,
            fmt::format("trace definition mismatch for author '{}': expected '{}', got '{}'",
                        t->file->author, job.name, line->trace.definition))
          .where = location_in(*t->file, root, line->line, "/definition");
    }
  }
}

// Every safetensors input of every line, including inputs the definition lacks.
void check_blobs_exist(const DefinitionJob& job, const CategoryContext& context, CheckResult& r) {
  if (job.workload == nullptr || !job.workload->parsed || !job.definition->loaded()) {
    return;
  }
  std::set<std::string> reported;
  for (const TraceLine& line : job.workload->lines) {
    for (const auto& [input, spec] : line.trace.workload.inputs) {
      const auto* blob = std::get_if<SafetensorsInput>(&spec);
      if (blob == nullptr ||
          context.blobs->exists(detail::joined_path_text(context.root.native(), blob->path))) {
        continue;
      }
      // The old tool repeats this once per input; fib reports each missing blob once.
      std::string message =
          fmt::format("workload {}: blob missing at {}", line.trace.workload.uuid, blob->path);
      if (reported.insert(message).second) {
        r.add(codes::k_blob_not_found, std::move(message)).where =
            location_in(*job.workload->file, context.root, line.line,
                        pointer_append("/workload/inputs", input) + "/path");
      }
    }
  }
}

} // namespace

std::optional<CheckResult> check_layout(const DefinitionJob& job, const CategoryContext& context) {
  CheckResult r;
  const LoadedDefinition& d = *job.definition;
  if (d.entry->duplicate_error) {
    r.add(codes::k_dataset_definition_duplicate, *d.entry->duplicate_error);
    return r;
  }
  const std::string& def_dir = d.entry->file.op_type;
  check_definition_file(d, r);
  check_workload_file(job, def_dir, context.root, r);
  check_solution_files(job, def_dir, context.root, r);
  check_trace_files(job, def_dir, context.root, r);
  check_blobs_exist(job, context, r);
  locate_unplaced(r, d.entry->file, context.root);
  return r;
}

} // namespace fib::dataset_checks
