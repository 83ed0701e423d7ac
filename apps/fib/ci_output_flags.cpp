#include "ci_output_flags.hpp"

#include "render.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace fib::app {
namespace {

// $GITHUB_STEP_SUMMARY when set and not empty.
const char* step_summary_file() {
  const char* file = std::getenv("GITHUB_STEP_SUMMARY");
  return file != nullptr && *file != '\0' ? file : nullptr;
}

} // namespace

void add_ci_output_flags(CLI::App* sub, CiOutputFlags& flags) {
  sub->add_option("--path-prefix", flags.path_prefix,
                  "Annotations and SARIF: spell files as PREFIX/ + the path below the dataset "
                  "root (file mode: the working directory); default: relative to "
                  "$GITHUB_WORKSPACE, else the working directory");
  sub->add_option("--max-annotations", flags.max_annotations,
                  "--format github: at most N errors and N warnings (default 10, what GitHub "
                  "shows per step; 0: all), then one notice counting the rest");
}

CiPaths ci_paths(const CiOutputFlags& flags, const std::filesystem::path& base) {
  return CiPaths{flags.path_prefix, base, ci_workspace()};
}

bool wants_ci_findings(std::string_view format) {
  return format == "github" || format == "sarif" || step_summary_file() != nullptr;
}

void print_ci_findings(std::string_view format, const std::vector<Diagnostic>& findings,
                       const CiOutputFlags& flags, const CiPaths& paths) {
  if (format == "github") {
    write_all(stdout, render_github_annotations(findings, paths, flags.max_annotations));
  } else if (format == "sarif") {
    write_all(stdout, render_sarif(findings, paths));
  }
}

void append_step_summary(const std::vector<Diagnostic>& findings, const CiPaths& paths,
                         std::string_view title, DiagnosticSink& problems) {
  const char* file = step_summary_file();
  if (file == nullptr) {
    return;
  }
  const std::string text = render_step_summary(findings, paths, title);
  const int fd = ::open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  std::string error;
  if (fd < 0) {
    error = std::strerror(errno);
  } else {
    std::size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        error = n < 0 ? std::strerror(errno) : "short write";
        break;
      }
      written += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 && error.empty()) {
      error = std::strerror(errno);
    }
  }
  if (!error.empty()) {
    Diagnostic d = make_diagnostic(codes::k_io_write,
                                   fmt::format("cannot append the step summary: {}", error));
    d.severity = Severity::warning;
    d.file = file;
    d.hint = "GITHUB_STEP_SUMMARY names the file; unset it to skip the summary";
    problems.report(std::move(d));
  }
}

} // namespace fib::app
