#include "normalize_flags.hpp"

#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace fib::app {
namespace {

std::optional<Diagnostic> apply_disabled_rules(const std::vector<std::string>& ids,
                                               NormalizeOptions& options) {
  for (const auto& id : ids) {
    const NormalizeRule* rule = find_normalize_rule(id);
    if (rule == nullptr) {
      return make_diagnostic(
          codes::k_usage,
          fmt::format("--no-rule: unknown rule '{}' (see fib normalize --list-rules)", id));
    }
    if (rule->id == "N20") {
      return make_diagnostic(codes::k_usage,
                             "--no-rule: rule N20 belongs to `fib stage`, not to normalize");
    }
    if (rule->level != RuleLevel::heuristic) {
      return make_diagnostic(codes::k_usage,
                             fmt::format("--no-rule: rule {} is level {}; only W rules can be "
                                         "switched off",
                                         rule->id, to_string(rule->level)));
    }
    options.disabled_rules.insert(std::string(rule->id));
  }
  return std::nullopt;
}

std::optional<int> load_decisions(const std::string& file, NormalizeDecisions& decisions,
                                  NormalizeOptions& options) {
  if (file.empty()) {
    return std::nullopt;
  }
  auto text = read_text_file(file);
  if (!text) {
    write_diagnostic(stderr, text.error());
    return k_exit_environment;
  }
  DiagnosticList sink;
  auto document = parse_json(*text, file, sink);
  if (!document) {
    write_diagnostic(stderr, document.error());
    return k_exit_usage;
  }
  auto parsed = parse_normalize_decisions(*document, sink);
  for (const auto& d : sink.items()) {
    write_diagnostic(stderr, d);
  }
  if (!parsed) {
    return k_exit_usage;
  }
  decisions = std::move(*parsed);
  options.decisions = &decisions;
  return std::nullopt;
}

// The FlashInfer source directory: --flashinfer-src, else $FIB_FLASHINFER_SRC, else none (the
// installed package). A usage error when the directory holds no `flashinfer` package directory.
std::optional<Diagnostic> apply_flashinfer_source(const std::string& flag,
                                                  NormalizeOptions& options) {
  std::string origin = "--flashinfer-src";
  std::string value = flag;
  if (value.empty()) {
    const char* env = std::getenv(std::string(k_flashinfer_src_env).c_str());
    if (env == nullptr || *env == '\0') {
      return std::nullopt;
    }
    origin = std::string(k_flashinfer_src_env);
    value = env;
  }
  const std::filesystem::path directory(value);
  std::error_code ec;
  if (!std::filesystem::is_directory(directory / "flashinfer", ec)) {
    Diagnostic d = make_diagnostic(
        codes::k_usage, fmt::format("{} {}: no flashinfer package directory in it", origin, value));
    d.hint = std::filesystem::is_directory(directory / "trace", ec)
                 ? "give the directory that holds flashinfer/, not the package directory itself"
                 : "give the directory that holds FlashInfer's flashinfer/ package directory";
    return d;
  }
  options.flashinfer_source = directory;
  return std::nullopt;
}

} // namespace

CLI::Option* add_flashinfer_src_option(CLI::App& sub, std::string& value, std::string_view prefix) {
  std::string help = fmt::format(
      "the directory holding FlashInfer's flashinfer/ package, whose trace templates define the "
      "helpers references call (rule N22; default: ${}, else the installed flashinfer package, "
      "found without importing it)",
      k_flashinfer_src_env);
  if (prefix.empty()) {
    help.front() = 'T';
  } else {
    help.insert(0, prefix);
  }
  return sub.add_option("--flashinfer-src", value, help);
}

std::optional<int> apply_normalize_flags(const NormalizeFlags& flags, NormalizeDecisions& decisions,
                                         NormalizeOptions& options) {
  for (auto error : {apply_disabled_rules(flags.disabled_rules, options),
                     apply_flashinfer_source(flags.flashinfer_src, options)}) {
    if (error) {
      write_diagnostic(stderr, *error);
      return k_exit_usage;
    }
  }
  return load_decisions(flags.decisions_file, decisions, options);
}

} // namespace fib::app
