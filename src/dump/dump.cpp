// dump: the trace-dump pass (a child with the dumper's variables), its collection, and the
// staging, tagging and validation of what it dumped through the library entry points of those
// commands.

#include "fib/dump/dump.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/validate/dataset.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <system_error>
#include <unistd.h>

namespace fib {
namespace {

constexpr std::size_t k_listed_offenders = 5;

// Whether `directory` holds only what FlashInfer's Level-10 logging writes: call directories
// (`<ts>_pid<pid>_<name>_call<NNNN>`, real directories) and session.jsonl.
bool holds_only_level10_calls(const std::filesystem::path& directory) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code inner;
    if (name == "session.jsonl" && it->is_regular_file(inner) && !it->is_symlink(inner)) {
      continue;
    }
    const bool call_name =
        name.size() > 24 && name.find("_pid") == 19 && name.rfind("_call") != std::string::npos &&
        name.find_first_not_of("0123456789", name.rfind("_call") + 5) == std::string::npos;
    if (!call_name || !it->is_directory(inner) || it->is_symlink(inner)) {
      return false;
    }
  }
  return !ec;
}

Diagnostic io_diagnostic(std::string_view code, const std::filesystem::path& file,
                         std::string message) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = file;
  return d;
}

DumpSnapshot snapshot(const std::filesystem::path& directory, std::error_code& ec) {
  DumpSnapshot out;
  for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code inner;
    if (it->path().extension() != ".json" || !it->is_regular_file(inner)) {
      continue;
    }
    out[it->path().filename().string()] =
        FileStamp{it->file_size(inner), it->last_write_time(inner)};
  }
  return out;
}

// The likely causes of an empty dump.
std::string nothing_dumped_hint(DumpSource source) {
  std::string hint =
      "likely causes: the variables were removed or changed after start-up (they must be "
      "FLASHINFER_TRACE_DUMP=1 and FLASHINFER_TRACE_DUMP_DIR at every traced call); the run never "
      "reached an API decorated with @flashinfer_api(trace=...)";
  if (source == DumpSource::sglang) {
    hint += "; SGLang did not use attention_backend=\"flashinfer\" or replayed CUDA graphs (the "
            "harness disables them; check the model's own overrides); the model's kernels have "
            "no trace template yet (FlashInfer needs one written for them first)";
  } else {
    hint += "; an SGLang engine with another attention backend or with CUDA graphs enabled; "
            "the installed FlashInfer predates the trace dumper";
  }
  hint += ". To check the decorator: python3 -c 'import flashinfer; "
          "print(flashinfer.norm.rmsnorm.fi_trace.__doc__)'";
  return hint;
}

std::filesystem::path absolute_path(const std::filesystem::path& path) {
  std::error_code ec;
  auto out = std::filesystem::absolute(path, ec);
  return ec ? path : out.lexically_normal();
}

// A temporary file holding `text`, removed when the object dies.
class TemporaryScript {
public:
  explicit TemporaryScript(const std::string& text) {
    std::error_code ec;
    auto directory = std::filesystem::temp_directory_path(ec);
    if (ec) {
      directory = "/tmp";
    }
    std::string name = (directory / "fib-harness-XXXXXX.py").string();
    const int fd = ::mkstemps(name.data(), 3);
    if (fd < 0) {
      return;
    }
    std::size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
      if (n <= 0) {
        break;
      }
      written += static_cast<std::size_t>(n);
    }
    ::close(fd);
    m_path = name;
    m_ok = written == text.size();
  }
  ~TemporaryScript() {
    if (!m_path.empty()) {
      std::error_code ec;
      std::filesystem::remove(m_path, ec);
    }
  }
  TemporaryScript(const TemporaryScript&) = delete;
  TemporaryScript& operator=(const TemporaryScript&) = delete;
  bool ok() const { return m_ok; }
  const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
  bool m_ok = false;
};

// `the traced command` for a command, `the harness run (serve, page size 16)` for --sglang.
std::string run_subject(const DumpRun& run) {
  return run.label.empty() ? std::string("the traced command")
                           : fmt::format("the harness run ({})", run.label);
}

void report_child(const DumpOptions& options, const DumpRun& run, DumpResult& result) {
  const auto& child = run.child;
  if (child.launch_error) {
    result.diagnostics.push_back(*child.launch_error);
    return;
  }
  if (child.timed_out) {
    Diagnostic d = make_diagnostic(codes::k_dump_timeout,
                                   fmt::format("{} was {}; what it dumped before that is kept",
                                               run_subject(run), describe_outcome(child)));
    d.hint = "raise --timeout, or make the run shorter (fewer prompts, fewer new tokens)";
    result.diagnostics.push_back(std::move(d));
  } else if (child.signal || (child.exit_code && *child.exit_code != 0)) {
    Diagnostic d = make_diagnostic(codes::k_dump_child_failed,
                                   fmt::format("{} ended with {}; what it dumped before is kept",
                                               run_subject(run), describe_outcome(child)));
    d.hint = options.source == DumpSource::sglang
                 ? "read its output above (GPU out of memory: lower --mem-fraction or raise --tp)"
                 : "read its output above";
    result.diagnostics.push_back(std::move(d));
  }
  if (child.left_processes) {
    result.diagnostics.push_back(make_diagnostic(
        codes::k_dump_left_processes,
        fmt::format("{} left processes in its group; they were sent SIGTERM (then SIGKILL)",
                    run_subject(run))));
  }
}

// Whether the staged entry's definition is in the dataset after staging: added or overwritten
// (and actually written: a conflict blocks every write), or found unchanged there.
bool now_in_dataset(const StageEntry& entry) {
  if (entry.action == StageAction::unchanged) {
    return true;
  }
  return (entry.action == StageAction::added || entry.action == StageAction::overwritten) &&
         entry.written;
}

// Stages, tags and validates the files this run created or rewrote.
void harvest(const DumpOptions& options, PythonFrontend& python, const DumpProgress& progress,
             const Level10Dump* evidence, DumpResult& result) {
  StageOptions stage;
  for (const auto& file : result.files) {
    if (file.state != DumpFileState::kept && !file.problem) {
      stage.sources.push_back(file.file);
    }
  }
  if (stage.sources.empty()) {
    return;
  }
  stage.dataset = options.dataset;
  stage.normalize = options.normalize;
  stage.normalize_options = options.normalize_options;
  stage.normalize_options.evidence = evidence; // --workloads: rules R1-R3 (normalize.hpp)
  stage.on_conflict = options.on_conflict;
  stage.exclude = options.exclude;
  stage.overwrite_breaking = options.overwrite_breaking;
  stage.curated = options.curated;
  progress(fmt::format("staging {} definition{} into {}", stage.sources.size(),
                       stage.sources.size() == 1 ? "" : "s", options.dataset.string()));
  result.staged = stage_definitions(stage, python);
  std::vector<SelectedFile> staged_files;
  std::vector<std::string> names;
  std::set<std::filesystem::path> seen;
  for (const auto& entry : result.staged->entries) {
    if (!now_in_dataset(entry) || !seen.insert(entry.target).second) {
      continue;
    }
    staged_files.push_back(
        SelectedFile{options.dataset / entry.target, entry.target, options.dataset});
    names.push_back(entry.name);
  }
  if (staged_files.empty()) {
    return;
  }
  if (!options.tags.empty()) {
    progress(fmt::format("tagging {} definition{}", staged_files.size(),
                         staged_files.size() == 1 ? "" : "s"));
    TagEditOptions tag;
    tag.action = TagAction::add;
    tag.tags = options.tags;
    result.tagged = edit_tag_files(
        staged_files, tag, [&](const TaggedFile& file) { result.tagged_files.push_back(file); });
  }
  progress(fmt::format("validating {} definition{}", names.size(), names.size() == 1 ? "" : "s"));
  ValidateDatasetOptions validate;
  validate.root = options.dataset;
  validate.checks = {"layout", "definition"};
  validate.gpu = GpuChecks::disabled;
  validate.definitions = names;
  DiagnosticList environment;
  result.validation = validate_dataset(validate, python, environment);
  result.validation_environment = environment.items();
}

// Collects workloads from the Level-10 dump for the definitions this run staged (and those it
// found unchanged in the dataset).
void collect_staged(const DumpOptions& options, const std::filesystem::path& level10,
                    const DumpProgress& progress, DumpResult& result) {
  if (!result.staged) {
    return;
  }
  CollectOptions collect = options.workloads->collect;
  collect.dumps = {level10};
  collect.dataset = options.dataset;
  std::set<std::string> names;
  for (const auto& entry : result.staged->entries) {
    if (now_in_dataset(entry) && names.insert(entry.name).second) {
      collect.definitions.push_back(entry.name);
    }
  }
  std::error_code ec;
  if (collect.definitions.empty() || !std::filesystem::is_directory(level10, ec)) {
    result.diagnostics.push_back(io_diagnostic(
        codes::k_collect_no_workloads, level10,
        fmt::format("no Level-10 dump in {}: the traced program made no FlashInfer API call "
                    "(or imported flashinfer before the environment was set)",
                    level10.string())));
    return;
  }
  progress(fmt::format("collecting workloads of {} definition{} from {}",
                       collect.definitions.size(), collect.definitions.size() == 1 ? "" : "s",
                       level10.string()));
  DiagnosticList diagnostics;
  auto report = collect_workloads(collect, diagnostics);
  result.collect_diagnostics = diagnostics.items();
  if (!report) {
    result.collect_diagnostics.push_back(report.error());
    return;
  }
  result.collected = std::move(*report);
}

} // namespace

Expected<DumpSnapshot> prepare_dump_directory(const std::filesystem::path& directory,
                                              ExistingDumps existing, Level10Directory level10) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(directory, ec);
  if (!std::filesystem::exists(status)) {
    std::filesystem::create_directories(directory, ec);
    if (ec) {
      return unexpected(io_diagnostic(codes::k_io_write, directory,
                                      fmt::format("cannot create the dump directory {}: {}",
                                                  directory.string(), ec.message())));
    }
    return DumpSnapshot{};
  }
  if (!std::filesystem::is_directory(directory, ec)) {
    return unexpected(
        io_diagnostic(codes::k_io_write, directory,
                      fmt::format("{} exists and is not a directory", directory.string())));
  }
  if (existing == ExistingDumps::keep) {
    auto before = snapshot(directory, ec);
    if (ec) {
      return unexpected(
          io_diagnostic(codes::k_io_read, directory,
                        fmt::format("cannot list {}: {}", directory.string(), ec.message())));
    }
    return before;
  }
  std::vector<std::filesystem::path> dumps;
  std::vector<std::filesystem::path> level10_dirs;
  std::vector<std::string> offenders;
  std::size_t offender_count = 0;
  for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code inner;
    const bool plain_json =
        it->path().extension() == ".json" && it->is_regular_file(inner) && !it->is_symlink(inner);
    const bool level10_directory = level10 == Level10Directory::beside &&
                                   it->path().filename() == k_level10_directory &&
                                   it->is_directory(inner) && !it->is_symlink(inner);
    if (plain_json) {
      dumps.push_back(it->path());
    } else if (level10_directory && holds_only_level10_calls(it->path())) {
      level10_dirs.push_back(it->path());
    } else {
      ++offender_count;
      if (offenders.size() < k_listed_offenders) {
        offenders.push_back(it->path().filename().string() +
                            (it->is_directory(inner) && !it->is_symlink(inner) ? "/" : ""));
      }
    }
  }
  if (ec) {
    return unexpected(
        io_diagnostic(codes::k_io_read, directory,
                      fmt::format("cannot list {}: {}", directory.string(), ec.message())));
  }
  if (offender_count > 0) {
    std::sort(offenders.begin(), offenders.end());
    std::string listed;
    for (const auto& name : offenders) {
      listed += (listed.empty() ? "" : ", ") + name;
    }
    if (offender_count > offenders.size()) {
      listed += fmt::format(" and {} more", offender_count - offenders.size());
    }
    Diagnostic d = io_diagnostic(
        codes::k_dump_not_clean, directory,
        fmt::format("--clean refused: {} holds {} that {} not a *.json dump ({}); nothing was "
                    "removed",
                    directory.string(), offender_count == 1 ? "an entry" : "entries",
                    offender_count == 1 ? "is" : "are", listed));
    d.hint = "use a directory of its own for the dump, or --keep";
    return unexpected(std::move(d));
  }
  for (const auto& dir : level10_dirs) {
    std::error_code remove_ec;
    std::filesystem::remove_all(dir, remove_ec);
    if (remove_ec) {
      return unexpected(
          io_diagnostic(codes::k_io_write, dir,
                        fmt::format("cannot remove {}: {}", dir.string(), remove_ec.message())));
    }
  }
  for (const auto& file : dumps) {
    std::error_code remove_ec;
    std::filesystem::remove(file, remove_ec);
    if (remove_ec) {
      return unexpected(
          io_diagnostic(codes::k_io_write, file,
                        fmt::format("cannot remove {}: {}", file.string(), remove_ec.message())));
    }
  }
  return DumpSnapshot{};
}

std::vector<DumpedFile> collect_dump(const std::filesystem::path& directory,
                                     const DumpSnapshot& before) {
  std::error_code ec;
  const auto after = snapshot(directory, ec);
  std::vector<DumpedFile> out;
  for (const auto& [name, stamp] : after) {
    DumpedFile file;
    file.file = directory / name;
    const auto old = before.find(name);
    file.state = old == before.end()    ? DumpFileState::created
                 : old->second == stamp ? DumpFileState::kept
                                        : DumpFileState::rewritten;
    auto text = read_text_file(file.file);
    if (!text) {
      file.problem = text.error();
      out.push_back(std::move(file));
      continue;
    }
    DiagnosticList sink;
    auto document = parse_json(*text, file.file, sink, 1, LineIndex::skipped);
    if (!document) {
      file.problem = document.error();
      file.problem->message += " (a truncated write? the dumper writes without a temporary file)";
    } else if (!document->root.is_object() || !document->root.contains("name") ||
               !document->root["name"].is_string() || !document->root.contains("op_type") ||
               !document->root["op_type"].is_string()) {
      file.problem = io_diagnostic(codes::k_stage_not_definition, file.file,
                                   "not a definition: no string `name` and `op_type`");
    } else {
      file.name = document->root["name"].get<std::string>();
      file.op_type = document->root["op_type"].get<std::string>();
    }
    out.push_back(std::move(file));
  }
  return out;
}

std::string describe_runs(const std::vector<DumpRun>& runs) {
  if (runs.size() == 1) {
    return describe_outcome(runs.front().child);
  }
  std::string out;
  for (const DumpRun& run : runs) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", run.label, describe_outcome(run.child));
  }
  return out;
}

DumpResult run_trace_dump(const DumpOptions& options, PythonFrontend& python,
                          const DumpProgress& progress) {
  DumpResult result;
  result.out = absolute_path(options.out);
  auto before = prepare_dump_directory(result.out, options.existing,
                                       options.workloads ? Level10Directory::beside
                                                         : Level10Directory::absent);
  if (!before) {
    result.diagnostics.push_back(before.error());
    return result;
  }
  ChildOptions child;
  child.environment = {{std::string(k_trace_dump_variable), "1"},
                       {std::string(k_trace_dump_dir_variable), result.out.string()}};
  const std::filesystem::path level10 = result.out / k_level10_directory;
  if (options.workloads) {
    for (auto& variable : level10_environment(level10, *options.workloads)) {
      child.environment.push_back(std::move(variable));
    }
  }
  child.timeout = options.timeout;
  const std::string variables = fmt::format(
      "FLASHINFER_TRACE_DUMP=1, FLASHINFER_TRACE_DUMP_DIR={}{}", result.out.string(),
      options.workloads
          ? fmt::format("; FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_DIR={}", level10.string())
          : std::string());
  if (options.source == DumpSource::command) {
    child.argv = options.command;
    std::string shown;
    for (const auto& arg : child.argv) {
      shown += (shown.empty() ? "" : " ") + arg;
    }
    progress(fmt::format("running: {} ({})", shown, variables));
    result.runs.push_back(DumpRun{"", run_child_process(child)});
    report_child(options, result.runs.back(), result);
  } else {
    for (std::size_t i = 0; i < options.sglang_runs.size(); ++i) {
      const SglangRun& run = options.sglang_runs[i];
      SglangHarness harness = options.sglang;
      harness.dump_directory = result.out;
      harness.pass = run.pass;
      harness.page_size = run.page_size ? run.page_size : options.sglang.page_size;
      TemporaryScript script(render_sglang_harness(harness));
      if (!script.ok()) {
        result.diagnostics.push_back(make_diagnostic(
            codes::k_io_write, "cannot write the SGLang harness to a temporary file"));
        break; // what earlier runs dumped is still listed and staged
      }
      child.argv = {options.python, script.path().string()};
      const std::string label = describe_run(SglangRun{harness.pass, harness.page_size});
      progress(fmt::format("running{}: the generated SGLang harness with {} ({}; {})",
                           options.sglang_runs.size() > 1
                               ? fmt::format(" {}/{}", i + 1, options.sglang_runs.size())
                               : std::string(),
                           options.python, label, variables));
      result.runs.push_back(DumpRun{label, run_child_process(child)});
      report_child(options, result.runs.back(), result);
      const ChildOutcome& outcome = result.runs.back().child;
      if (outcome.launch_error || outcome.interrupted_by) {
        break; // the interpreter is missing, or the user asked to stop
      }
    }
  }
  if (result.runs.empty() || result.runs.front().child.launch_error) {
    return result; // nothing ran
  }
  result.files = collect_dump(result.out, *before);
  const bool dumped_now =
      std::any_of(result.files.begin(), result.files.end(),
                  [](const DumpedFile& f) { return f.state != DumpFileState::kept; });
  if (!dumped_now) {
    Diagnostic d = make_diagnostic(codes::k_dump_nothing_dumped,
                                   fmt::format("nothing was dumped into {} ({})",
                                               result.out.string(), describe_runs(result.runs)));
    d.hint = nothing_dumped_hint(options.source);
    result.diagnostics.push_back(std::move(d));
  }
  if (!options.dataset.empty() && dumped_now) {
    std::optional<Level10Dump> evidence;
    if (options.workloads && options.normalize == StageNormalize::yes) {
      if (auto read = read_level10_dump(level10)) {
        evidence = std::move(*read);
      }
    }
    harvest(options, python, progress, evidence ? &*evidence : nullptr, result);
    if (options.workloads) {
      collect_staged(options, level10, progress, result);
    }
  }
  return result;
}

std::vector<std::pair<std::string, std::string>>
level10_environment(const std::filesystem::path& directory, const WorkloadDump& workloads) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"FLASHINFER_LOGLEVEL", "10"},
      {"FLASHINFER_DUMP_DIR", directory.string()},
      {"FLASHINFER_DUMP_SAFETENSORS", "1"},
      {"FLASHINFER_DUMP_EXCLUDE", "*.__init__"},
      {"FLASHINFER_DUMP_MAX_COUNT", std::to_string(workloads.max_count)},
      {"FLASHINFER_DUMP_MAX_SIZE_GB", fmt::format("{}", workloads.max_size_gb)},
  };
  if (!workloads.include.empty()) {
    std::string joined;
    for (const std::string& pattern : workloads.include) {
      joined += (joined.empty() ? "" : ",") + pattern;
    }
    out.emplace_back("FLASHINFER_DUMP_INCLUDE", joined);
  }
  return out;
}

namespace {

// Only the environment errors of `counts`: the findings of staging, tagging and validation are
// their outcomes (dump_found_problems), not their diagnostics.
DiagnosticCounts environment_errors_only(const DiagnosticCounts& counts) {
  DiagnosticCounts out;
  out.environment_errors = counts.environment_errors;
  out.errors = counts.environment_errors;
  return out;
}

} // namespace

DiagnosticCounts count_dump_diagnostics(const DumpResult& result) {
  DiagnosticCounts counts = count_diagnostics(result.diagnostics);
  if (result.staged) {
    counts += environment_errors_only(count_stage_diagnostics(*result.staged));
  }
  for (const auto& file : result.tagged_files) {
    counts += environment_errors_only(count_diagnostics(file.diagnostics));
  }
  counts += environment_errors_only(count_diagnostics(result.validation_environment));
  counts += environment_errors_only(count_diagnostics(result.collect_diagnostics));
  return counts;
}

bool dump_found_problems(const DumpResult& result) {
  const bool invalid_file = std::any_of(result.files.begin(), result.files.end(),
                                        [](const DumpedFile& f) { return f.problem.has_value(); });
  const bool staging_failed = result.staged && (result.staged->summary.conflicts > 0 ||
                                                result.staged->summary.rejected > 0);
  const bool tagging_failed = result.tagged && result.tagged->skipped > 0;
  const bool invalid_definition = result.validation && count_statuses(*result.validation).error > 0;
  const bool collection_failed =
      std::any_of(result.collect_diagnostics.begin(), result.collect_diagnostics.end(),
                  [](const Diagnostic& d) { return d.severity == Severity::error; });
  return invalid_file || staging_failed || tagging_failed || invalid_definition ||
         collection_failed;
}

} // namespace fib
