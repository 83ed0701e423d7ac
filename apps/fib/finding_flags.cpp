// validate's configuration flags over fib.toml, and the settling of a run's findings.

#include "finding_flags.hpp"

#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <system_error>

namespace fib::app {
namespace {

std::vector<std::string> split_patterns(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, end - start);
    if (!item.empty()) {
      items.push_back(std::move(item));
    }
    start = end + 1;
  }
  return items;
}

// The patterns of one flag (each occurrence a comma-separated list), each checked; false when one
// names no finding code.
bool flag_patterns(const char* flag, const std::vector<std::string>& values,
                   std::vector<std::string>& out, DiagnosticSink& sink) {
  bool ok = true;
  for (const std::string& text : values) {
    for (std::string& pattern : split_patterns(text)) {
      if (const auto reason = code_pattern_problem(pattern)) {
        sink.report(make_diagnostic(codes::k_usage, fmt::format("{}: {}", flag, *reason)));
        ok = false;
      }
      out.push_back(std::move(pattern));
    }
  }
  return ok;
}

// Whether `file` can take a baseline written by fib: a file name, and not a symbolic link (fib
// never writes through one). A directory is refused by read_baseline (baseline.invalid).
bool writable_baseline_target(const std::filesystem::path& file, DiagnosticSink& sink) {
  if (file.filename().empty() || file.filename() == "." || file.filename() == "..") {
    sink.report(
        make_diagnostic(codes::k_usage, fmt::format("--write-baseline wants a file name, got '{}'",
                                                    file.string())));
    return false;
  }
  std::error_code error;
  const auto status = std::filesystem::symlink_status(file, error);
  if (status.type() == std::filesystem::file_type::symlink) {
    Diagnostic d = make_diagnostic(
        codes::k_io_unsafe_path,
        fmt::format("--write-baseline {}: a symbolic link; fib writes no file through one",
                    file.string()));
    d.file = file;
    d.hint = "give the file the link points to";
    sink.report(std::move(d));
    return false;
  }
  return true;
}

// Which entries a run judges: those its scope covers whose code the policy still reports for
// their file (an entry of an ignored code is neither fixed nor dropped).
BaselineScope judged_by(const BaselineScope& scope, const FindingPolicy& policy,
                        const std::filesystem::path& baseline_file) {
  const auto directory = std::filesystem::absolute(baseline_file).lexically_normal().parent_path();
  return [scope, &policy, directory](const BaselineKey& key) {
    const std::filesystem::path file =
        key.file.empty() ? std::filesystem::path() : directory / key.file;
    return scope(key) && apply_policy(policy, key.code, Severity::warning, file).has_value();
  };
}

std::optional<FibConfig> read_config(const FindingFlags& flags, const std::filesystem::path& start,
                                     DiagnosticSink& sink, bool& failed) {
  if (flags.no_config) {
    return std::nullopt;
  }
  std::optional<std::filesystem::path> file;
  if (!flags.config_file.empty()) {
    file = flags.config_file;
  } else {
    file = find_config(start);
  }
  if (!file) {
    return std::nullopt;
  }
  auto config = load_config(*file, sink);
  failed = !config;
  if (config) {
    spdlog::debug("configuration: {}", file->string());
  }
  return config;
}

// The baseline to read: --baseline, else the config's. `required` is false for the file
// --write-baseline rewrites, which may not exist yet.
enum class Presence { required, optional };

bool read_baseline_into(const std::filesystem::path& file, Presence presence,
                        std::optional<Baseline>& out, DiagnosticSink& sink) {
  std::error_code error;
  if (presence == Presence::optional && !std::filesystem::exists(file, error)) {
    Baseline empty;
    empty.file = file;
    out = std::move(empty);
    return true;
  }
  auto baseline = read_baseline(file);
  if (!baseline) {
    Diagnostic d = baseline.error();
    if (d.code == codes::k_io_not_found) {
      d.hint = fmt::format("write it first: fib validate ... --write-baseline {}", file.string());
    }
    sink.report(std::move(d));
    return false;
  }
  out = std::move(*baseline);
  return true;
}

bool write_baseline_file(const Baseline& baseline, std::size_t findings, DiagnosticSink& sink) {
  StaleTemporarySweeper().remove_stale_beside(baseline.file); // what a killed earlier run left
  const auto written =
      write_file_atomically(baseline.file, render_baseline(baseline), Overwrite::allowed);
  if (!written) {
    sink.report(written.error());
    return false;
  }
  write_line(stderr, fmt::format("fib: baseline {} written: {} entr{} ({} finding{} of this run)",
                                 baseline.file.string(), baseline.entries.size(),
                                 baseline.entries.size() == 1 ? "y" : "ies", findings,
                                 findings == 1 ? "" : "s"));
  return true;
}

std::size_t failing_findings(const std::vector<BaselineFinding>& findings) {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), is_baseline_finding));
}

} // namespace

void add_finding_flags(CLI::App* sub, FindingFlags& flags) {
  sub->add_option("--config", flags.config_file,
                  "Read this fib.toml (or pyproject.toml) instead of searching from the dataset "
                  "root (file mode: the first path) upward");
  sub->add_flag("--no-config", flags.no_config, "Read no configuration file");
  sub->add_option("--select", flags.select,
                  "Comma-separated codes or code prefixes to report (replaces the config's "
                  "`select`; default: all)")
      ->each([&flags](const std::string&) { flags.select_given = true; });
  sub->add_option("--ignore", flags.ignore,
                  "Comma-separated codes or code prefixes not to report (replaces the config's "
                  "`ignore`)")
      ->each([&flags](const std::string&) { flags.ignore_given = true; });
  sub->add_option("--extend-ignore", flags.extend_ignore,
                  "Comma-separated codes or code prefixes not to report, besides `ignore`");
  sub->add_flag_callback(
      "--strict", [&flags] { flags.strictness = Strictness::strict; },
      "Exit 1 on warnings too (the config's `strict`)");
  sub->add_flag_callback(
      "--no-strict", [&flags] { flags.strictness = Strictness::normal; },
      "Warnings do not fail the run, whatever the config says");
  sub->add_option("--baseline", flags.baseline,
                  "Leave out the findings this baseline file records (the config's `baseline`)");
  sub->add_option("--write-baseline", flags.write_baseline,
                  "Record this run's errors and warnings in this baseline file, then report as "
                  "with --baseline FILE");
}

std::optional<FindingSettings> resolve_finding_settings(const FindingFlags& flags,
                                                        const std::filesystem::path& start,
                                                        DiagnosticSink& sink) {
  if (flags.no_config && !flags.config_file.empty()) {
    sink.report(make_diagnostic(codes::k_usage, "give --config FILE or --no-config, not both"));
    return std::nullopt;
  }
  if (!flags.baseline.empty() && !flags.write_baseline.empty() &&
      std::filesystem::path(flags.baseline).lexically_normal() !=
          std::filesystem::path(flags.write_baseline).lexically_normal()) {
    sink.report(make_diagnostic(
        codes::k_usage, "give --baseline or --write-baseline, not both with different files "
                        "(--write-baseline FILE reports against what it writes)"));
    return std::nullopt;
  }
  FindingSettings settings;
  bool failed = false;
  settings.config = read_config(flags, start, sink, failed);
  if (failed) {
    return std::nullopt;
  }
  if (settings.config) {
    settings.policy = settings.config->policy;
    settings.checks = settings.config->checks;
    if (settings.config->strict) {
      settings.strictness = *settings.config->strict ? Strictness::strict : Strictness::normal;
    }
  } else {
    std::error_code error;
    settings.policy.base = std::filesystem::current_path(error);
  }
  bool ok = true;
  if (flags.select_given) {
    settings.policy.select.clear();
    ok = flag_patterns("--select", flags.select, settings.policy.select, sink) && ok;
  }
  if (flags.ignore_given) {
    settings.policy.ignore.clear();
    ok = flag_patterns("--ignore", flags.ignore, settings.policy.ignore, sink) && ok;
  }
  ok = flag_patterns("--extend-ignore", flags.extend_ignore, settings.policy.ignore, sink) && ok;
  if (flags.strictness) {
    settings.strictness = *flags.strictness;
  }
  if (!ok) {
    return std::nullopt;
  }
  if (!flags.write_baseline.empty()) {
    settings.write_to = std::filesystem::path(flags.write_baseline);
    if (!writable_baseline_target(*settings.write_to, sink)) {
      return std::nullopt;
    }
    // The file rewritten: what it holds outside the run's scope is kept.
    if (!read_baseline_into(*settings.write_to, Presence::optional, settings.baseline, sink)) {
      return std::nullopt;
    }
  } else if (!flags.baseline.empty()) {
    if (!read_baseline_into(flags.baseline, Presence::required, settings.baseline, sink)) {
      return std::nullopt;
    }
  } else if (settings.config && settings.config->baseline) {
    if (!read_baseline_into(*settings.config->baseline, Presence::required, settings.baseline,
                            sink)) {
      return std::nullopt;
    }
  }
  return settings;
}

bool settle_dataset_findings(FindingSettings& settings, DatasetReport& report,
                             DatasetCoverage coverage, DiagnosticSink& sink) {
  apply_policy(settings.policy, report);
  if (!settings.baseline) {
    return true;
  }
  const BaselineScope scope =
      judged_by(dataset_baseline_scope(report, settings.baseline->file, coverage), settings.policy,
                settings.baseline->file);
  if (settings.write_to) {
    const auto findings = report_findings(report);
    settings.baseline = make_baseline(findings, *settings.write_to, &*settings.baseline, scope);
    if (!write_baseline_file(*settings.baseline, failing_findings(findings), sink)) {
      return false;
    }
  }
  const BaselineMatch match = apply_baseline(*settings.baseline, report, scope);
  if (match.suppressed > 0 || !match.fixed.empty()) {
    // The baseline's own infos, under the same policy (`ignore = ["baseline.fixed"]`, or a
    // severity that makes fixed entries fail a strict run); idempotent for everything else.
    apply_policy(settings.policy, report);
  }
  return true;
}

std::optional<std::size_t> settle_file_findings(FindingSettings& settings,
                                                std::vector<Diagnostic>& found,
                                                const std::vector<std::filesystem::path>& paths,
                                                DiagnosticSink& sink) {
  found = apply_policy(settings.policy, std::move(found));
  if (!settings.baseline) {
    return 0;
  }
  const BaselineScope scope = judged_by(files_baseline_scope(paths, settings.baseline->file),
                                        settings.policy, settings.baseline->file);
  if (settings.write_to) {
    std::vector<BaselineFinding> findings;
    findings.reserve(found.size());
    for (const Diagnostic& d : found) {
      findings.push_back({d.code, d.file, d.pointer, d.message, d.severity});
    }
    settings.baseline = make_baseline(findings, *settings.write_to, &*settings.baseline, scope);
    if (!write_baseline_file(*settings.baseline, failing_findings(findings), sink)) {
      return std::nullopt;
    }
  }
  const BaselineMatch match = apply_baseline(*settings.baseline, found, scope);
  std::vector<Diagnostic> notes;
  for (const BaselineEntry& entry : match.fixed) {
    notes.push_back(fixed_entry_note(*settings.baseline, entry));
  }
  for (Diagnostic& note : apply_policy(settings.policy, std::move(notes))) {
    found.push_back(std::move(note));
  }
  return match.suppressed;
}

} // namespace fib::app
