#include "fib/run/red_flags.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace fib {
namespace {

enum class Syntax { python, cpp };

struct Flag {
  std::string_view kind;
  std::string_view why;
  std::vector<std::string_view> needles;
  bool only_compiled; // not for `python` solutions
};

const std::vector<Flag>& flags() {
  static const std::vector<Flag> k_flags = {
      {"side work",
       "starts work on a side stream or another thread, which fib's timer does not wait for",
       {"torch.cuda.Stream(", "torch.cuda.stream(", "cudaStreamCreate", "threading.Thread(",
        "multiprocessing", "concurrent.futures", "std::thread", "std::async"},
       false},
      {"torch fallback",
       "calls torch's own ops inside a kernel's sources, so the kernel may not be what runs",
       {"torch.matmul(", "torch.mm(", "torch.bmm(", "torch.einsum(", "torch.nn.functional.",
        "F.softmax(", "at::matmul(", "at::mm(", "at::bmm(", "torch::matmul(", "torch::mm(",
        "at::softmax(", "torch::softmax("},
       true},
      {"reference",
       "uses the definition's reference, which is what it is compared with",
       {"__reference"},
       false},
  };
  return k_flags;
}

Syntax syntax_of(std::string_view path) {
  const auto dot = path.rfind('.');
  const std::string_view extension = dot == std::string_view::npos ? "" : path.substr(dot);
  return extension == ".py" ? Syntax::python : Syntax::cpp;
}

// The line without its comment (a crude cut: a `#` or `//` inside a string also ends it).
std::string_view code_of(std::string_view line, Syntax syntax) {
  const auto cut = line.find(syntax == Syntax::python ? "#" : "//");
  return cut == std::string_view::npos ? line : line.substr(0, cut);
}

bool starts_try(std::string_view code, Syntax syntax) {
  const auto first = code.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return false;
  }
  const std::string_view rest = code.substr(first);
  if (syntax == Syntax::python) {
    return rest.starts_with("try:") || rest.starts_with("except");
  }
  return rest.starts_with("try {") || rest.starts_with("try{") || rest == "try" ||
         rest.starts_with("catch (") || rest.starts_with("catch(") ||
         rest.find("} catch") != std::string_view::npos;
}

Diagnostic flag_at(const Solution& solution, const SourceFile& source, std::size_t line,
                   std::string_view text) {
  Diagnostic d = make_diagnostic(codes::k_run_red_flag, std::string(text));
  d.severity = Severity::warning;
  d.file = std::filesystem::path(solution.name) / source.path;
  d.line = static_cast<std::uint32_t>(line);
  return d;
}

} // namespace

std::vector<Diagnostic> solution_red_flags(const Solution& solution) {
  std::vector<Diagnostic> out;
  const bool compiled = solution.spec.language != Language::python;
  for (const SourceFile& source : solution.sources) {
    const Syntax syntax = syntax_of(source.path);
    std::set<std::string_view> found;
    std::string_view text = source.content;
    std::size_t number = 0;
    while (!text.empty()) {
      ++number;
      const auto end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
      const std::string_view code = code_of(line, syntax);
      for (const Flag& flag : flags()) {
        if ((flag.only_compiled && !compiled) || found.contains(flag.kind)) {
          continue;
        }
        for (const std::string_view needle : flag.needles) {
          if (code.find(needle) != std::string_view::npos) {
            found.insert(flag.kind);
            out.push_back(flag_at(solution, source, number,
                                  fmt::format("solution {}: {} `{}`: it {}", solution.name,
                                              flag.kind, needle, flag.why)));
            break;
          }
        }
      }
      if (!found.contains("try") && starts_try(code, syntax)) {
        found.insert("try");
        out.push_back(flag_at(
            solution, source, number,
            fmt::format("solution {}: a {} block: it can hide a failing kernel behind a fallback",
                        solution.name, syntax == Syntax::python ? "try/except" : "try/catch")));
      }
    }
  }
  return out;
}

} // namespace fib
