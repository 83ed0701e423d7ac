#pragma once
// The CI output flags of validate (--path-prefix, --max-annotations) and what they drive: GitHub
// annotations, SARIF, and the digest appended to $GITHUB_STEP_SUMMARY.

#include <fib/base/diagnostic.hpp>
#include <fib/validate/ci_formats.hpp>

#include <CLI/CLI.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fib::app {

// --- Interface ---

struct CiOutputFlags {
  std::string path_prefix;          // --path-prefix
  std::size_t max_annotations = 10; // --max-annotations (per severity; 0 = all)
};

void add_ci_output_flags(CLI::App* sub, CiOutputFlags& flags);

// The CiPaths of a run: `base` is the dataset root (dataset mode) or the working directory.
CiPaths ci_paths(const CiOutputFlags& flags, const std::filesystem::path& base);

// Prints `findings` to standard output as `format` asks ("github": annotations, capped by
// --max-annotations; "sarif": one SARIF log). Other formats print nothing here.
void print_ci_findings(std::string_view format, const std::vector<Diagnostic>& findings,
                       const CiOutputFlags& flags, const CiPaths& paths);

// When $GITHUB_STEP_SUMMARY names a file, appends render_step_summary's digest to it (one write;
// the file is created when missing). A file that cannot be written is an io.write warning to
// `problems`: the findings and the exit status do not depend on the summary.
void append_step_summary(const std::vector<Diagnostic>& findings, const CiPaths& paths,
                         std::string_view title, DiagnosticSink& problems);

// Whether the run needs located findings with their lines (a CI format, or a step summary).
bool wants_ci_findings(std::string_view format);

} // namespace fib::app
