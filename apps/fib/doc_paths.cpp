#include "doc_paths.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

#ifndef FIB_DOCDIR_FROM_BINDIR
#define FIB_DOCDIR_FROM_BINDIR "../share/doc/fib"
#endif

namespace fib::app {
namespace {

// The distinct docs/NAME.md that `text` mentions, in order of first mention.
std::vector<std::string> named_docs(std::string_view text) {
  std::vector<std::string> out;
  constexpr std::string_view prefix = "docs/";
  for (std::size_t at = text.find(prefix); at != std::string_view::npos;
       at = text.find(prefix, at + 1)) {
    std::size_t end = at + prefix.size();
    while (end < text.size() && (std::islower(static_cast<unsigned char>(text[end])) != 0 ||
                                 text[end] == '_' || text[end] == '-')) {
      ++end;
    }
    if (end > at + prefix.size() && text.substr(end, 3) == ".md") {
      std::string name(text.substr(at + prefix.size(), end + 3 - at - prefix.size()));
      if (std::find(out.begin(), out.end(), name) == out.end()) {
        out.push_back(std::move(name));
      }
    }
  }
  return out;
}

} // namespace

std::string installed_doc(std::string_view name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return {};
  }
  const auto installed =
      (self.parent_path() / FIB_DOCDIR_FROM_BINDIR / "docs" / name).lexically_normal();
  return std::filesystem::is_regular_file(installed, ec) ? installed.string() : std::string{};
}

std::string installed_docs_line(std::string_view text) {
  const std::vector<std::string> names = named_docs(text);
  if (names.empty()) {
    return {};
  }
  std::vector<std::string> paths;
  for (const std::string& name : names) {
    std::string path = installed_doc(name);
    if (path.empty()) {
      return "The docs/*.md files are installed under share/doc/fib/docs of fib's prefix.";
    }
    paths.push_back(std::move(path));
  }
  return fmt::format("Installed documents: {}", fmt::join(paths, ", "));
}

void name_installed_docs(CLI::App& app) {
  const std::string footer = app.get_footer();
  if (const std::string line = installed_docs_line(footer); !line.empty()) {
    app.footer(footer + "\n\n" + line);
  }
  for (CLI::App* sub : app.get_subcommands({})) {
    name_installed_docs(*sub);
  }
}

} // namespace fib::app
