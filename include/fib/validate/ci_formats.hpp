#pragma once
// Findings as CI systems read them: GitHub Actions workflow commands (annotations), a Markdown
// digest for the job's step summary, and SARIF 2.1.0 for code scanning. Both validate modes feed
// them diagnostics: file mode its own, dataset mode report_findings_located() of its report.

#include <fib/base/diagnostic.hpp>
#include <fib/validate/report.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// The error and warning messages of a dataset report (infos are status lines, not findings) as
// diagnostics, in report order: each definition's messages, then the dataset section's. A
// message's file is `root` joined with its own location (MessageLocation), else its definition's
// file (report.definition_files), else none; its pointer and line are its location's. The message
// leads with where it belongs, as the old tool's report groups it: "DEFINITION CATEGORY: TEXT",
// or "dataset ROOT: TEXT" for the dataset section. A message without a code (read from an old
// report) has the code "".
std::vector<Diagnostic> report_findings_located(const DatasetReport& report,
                                                const std::filesystem::path& root);

// Fills in the line of each diagnostic that has a file and a pointer but no line, from the JSON
// file itself (read once per file, at most k_max_line_lookup_bytes; JSON Lines files are skipped,
// since their checks know their lines). A file that cannot be read or parsed leaves its lines 0.
void resolve_pointer_lines(std::vector<Diagnostic>& diagnostics);
inline constexpr std::uintmax_t k_max_line_lookup_bytes = std::uintmax_t{64} << 20;

// How files are spelled for the CI system: GitHub attaches an annotation, and code scanning a
// result, only to a path relative to the repository.
struct CiPaths {
  // With a prefix (--path-prefix), a file is `prefix/` + its path relative to `base` (the dataset
  // root in dataset mode, the working directory in file mode).
  std::string prefix;
  std::filesystem::path base;
  // Without one, a file is its path relative to `workspace` ($GITHUB_WORKSPACE, else the working
  // directory), with "../" parts when it is outside (GitHub attaches those to nothing).
  std::filesystem::path workspace;
};

// `file` as CiPaths spells it ('/'-separated); "" for an empty path.
std::string ci_path(const std::filesystem::path& file, const CiPaths& paths);

// The workspace of CiPaths: $GITHUB_WORKSPACE when set and not empty, else the working directory.
std::filesystem::path ci_workspace();

// GitHub Actions annotations, one line each: `::error file=F,line=L,title=CODE::POINTER: MESSAGE`
// (`::warning …` for warnings; notes are not annotated; `file=`, `line=` and the pointer are left
// out when unknown). GitHub shows only a few annotations of each severity per step, so at most
// `max_per_severity` errors and as many warnings are written (0: all), in order; when some were
// left out, one last `::notice title=fib::…` line counts them and says where the rest are.
std::string render_github_annotations(const std::vector<Diagnostic>& findings, const CiPaths& paths,
                                      std::size_t max_per_severity);

// A Markdown digest of `findings` for $GITHUB_STEP_SUMMARY: a heading with `title` and the
// counts, a table of codes (count, severity, summary from the codes table) and the first
// k_step_summary_findings findings (file:line, code, first line of the message), escaped for
// tables. Ends with a newline.
std::string render_step_summary(const std::vector<Diagnostic>& findings, const CiPaths& paths,
                                std::string_view title);
inline constexpr std::size_t k_step_summary_findings = 30;

// One SARIF 2.1.0 log (UTF-8 JSON, 2-space indent, ending with a newline) with one run of the
// tool "fib": a rule per code used (id = code, shortDescription = the codes table's summary,
// defaultConfiguration.level = the code's default severity, properties.origin) in code order,
// and a result per finding in order: ruleId, ruleIndex, level (error / warning / note), message,
// a physical location (artifactLocation.uri relative to the uriBaseId SRCROOT = the workspace, or
// an absolute file: URI; region.startLine when the line is known) and the pointer as a logical
// location, plus partialFingerprints["fib/v1"] (code, path, pointer and the message without the
// spellings of paths.base, so the same anywhere the repository is checked out) for following a
// finding across runs. A finding without a file has no location.
std::string render_sarif(const std::vector<Diagnostic>& findings, const CiPaths& paths);

} // namespace fib
