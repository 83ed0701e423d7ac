#include "normalize_flags.hpp"

#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <cstdio>

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
    write_line(stderr, render_text(text.error()));
    return k_exit_environment;
  }
  DiagnosticList sink;
  auto document = parse_json(*text, file, sink);
  if (!document) {
    write_line(stderr, render_text(document.error()));
    return k_exit_usage;
  }
  auto parsed = parse_normalize_decisions(*document, sink);
  for (const auto& d : sink.items()) {
    write_line(stderr, render_text(d));
  }
  if (!parsed) {
    return k_exit_usage;
  }
  decisions = std::move(*parsed);
  options.decisions = &decisions;
  return std::nullopt;
}

} // namespace

std::optional<int> apply_normalize_flags(const std::vector<std::string>& disabled_rules,
                                         const std::string& decisions_file,
                                         NormalizeDecisions& decisions, NormalizeOptions& options) {
  if (auto error = apply_disabled_rules(disabled_rules, options)) {
    write_line(stderr, render_text(*error));
    return k_exit_usage;
  }
  return load_decisions(decisions_file, decisions, options);
}

} // namespace fib::app
