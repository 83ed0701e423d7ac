#include "fib/exec/runnable.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/definition.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fib {
namespace {

// The first line of `message`, without `prefix` when it starts with it.
std::string first_line_without(std::string_view message, std::string_view prefix) {
  std::string_view line = message.substr(0, message.find('\n'));
  if (line.starts_with(prefix)) {
    line.remove_prefix(prefix.size());
  }
  return std::string(line);
}

RunnableVerdict verdict_of(Runnability runnability, const Diagnostic& d,
                           std::string_view prefix = "") {
  return RunnableVerdict{runnability, d.code, first_line_without(d.message, prefix)};
}

bool is_smoke_ok(const Diagnostic& d) {
  return d.code == codes::k_reference_ok && d.message.starts_with("smoke run: ok");
}

} // namespace

RunnableVerdict classify_runnable(const std::vector<Diagnostic>& blocking,
                                  const std::vector<Diagnostic>& smoke) {
  if (!blocking.empty()) {
    return verdict_of(Runnability::needs_decision, blocking.front());
  }
  const auto environment = std::find_if(smoke.begin(), smoke.end(), [](const Diagnostic& d) {
    return d.severity == Severity::error && is_environment_failure(d);
  });
  if (environment != smoke.end()) {
    return verdict_of(Runnability::not_runnable_here, *environment);
  }
  const auto skipped = std::find_if(smoke.begin(), smoke.end(), [](const Diagnostic& d) {
    return d.code == codes::k_smoke_skipped;
  });
  const auto failed = std::find_if(smoke.begin(), smoke.end(), [](const Diagnostic& d) {
    return d.severity == Severity::error;
  });
  if (failed != smoke.end()) {
    return verdict_of(Runnability::fails_when_run, *failed, "smoke run: ");
  }
  if (skipped != smoke.end()) {
    return verdict_of(Runnability::not_runnable_here, *skipped, "smoke run skipped: ");
  }
  if (std::any_of(smoke.begin(), smoke.end(), is_smoke_ok)) {
    return RunnableVerdict{Runnability::runnable, std::string(codes::k_reference_ok), ""};
  }
  return RunnableVerdict{Runnability::not_runnable_here, "", "the smoke run did not run"};
}

std::string render_verdict(const RunnableVerdict& verdict) {
  switch (verdict.runnability) {
  case Runnability::runnable:
    return "runnable";
  case Runnability::not_runnable_here:
    return fmt::format("not runnable here: {}", verdict.reason);
  case Runnability::fails_when_run:
  case Runnability::needs_decision:
    break;
  }
  return fmt::format("{}: {}: {}", to_string(verdict.runnability), verdict.code, verdict.reason);
}

void RunnableCounts::add(Runnability runnability) {
  switch (runnability) {
  case Runnability::runnable:
    ++runnable;
    return;
  case Runnability::not_runnable_here:
    ++not_runnable_here;
    return;
  case Runnability::fails_when_run:
    ++fails_when_run;
    return;
  case Runnability::needs_decision:
    ++needs_decision;
    return;
  }
}

std::size_t RunnableCounts::total() const {
  return runnable + not_runnable_here + fails_when_run + needs_decision;
}

std::string render_counts(const RunnableCounts& counts) {
  return fmt::format("{} runnable, {} not runnable here, {} fail{} when run, {} need{} a decision",
                     counts.runnable, counts.not_runnable_here, counts.fails_when_run,
                     counts.fails_when_run == 1 ? "s" : "", counts.needs_decision,
                     counts.needs_decision == 1 ? "s" : "");
}

Json to_json(const RunnableVerdict& verdict) {
  return Json{{"verdict", std::string(to_string(verdict.runnability))},
              {"code", verdict.code},
              {"reason", verdict.reason}};
}

Json to_json(const RunnableCounts& counts) {
  return Json{{"runnable", counts.runnable},
              {"not_runnable_here", counts.not_runnable_here},
              {"fails_when_run", counts.fails_when_run},
              {"needs_decision", counts.needs_decision}};
}

RunnableCheck smoke_check_text(std::string_view text, const std::filesystem::path& file,
                               ReferenceRunner& runner) {
  RunnableCheck check;
  DiagnosticList ignored;
  auto document = parse_json(text, file, ignored);
  if (!document) {
    check.diagnostics.push_back(document.error());
    check.verdict = classify_runnable({}, check.diagnostics);
    return check;
  }
  DiagnosticList model_checks;
  const Definition definition = parse_definition(*document, model_checks);
  if (model_checks.has_errors()) {
    const auto& items = model_checks.items();
    const auto error = std::find_if(items.begin(), items.end(), [](const Diagnostic& d) {
      return d.severity == Severity::error;
    });
    check.verdict = classify_runnable({*error}, {});
    return check;
  }
  const auto init_key =
      document->root.is_object() ? document->root.find("init") : document->root.end();
  const std::string init = init_key != document->root.end() && init_key->is_string()
                               ? init_key->get<std::string>()
                               : std::string();
  for (Diagnostic d : runner.smoke_run(definition, init).diagnostics) {
    d.file = file;
    if (d.pointer.empty()) {
      d.pointer = "/reference";
    }
    d.line = document->line_of(d.pointer);
    check.diagnostics.push_back(std::move(d));
  }
  check.verdict = classify_runnable({}, check.diagnostics);
  return check;
}

} // namespace fib
