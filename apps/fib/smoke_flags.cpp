#include "smoke_flags.hpp"

#include "option_checks.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/sandbox.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

namespace fib::app {

std::string_view timeout_flag_name(TimeoutFlag timeout) {
  return timeout == TimeoutFlag::timeout ? "--timeout" : "--smoke-timeout";
}

void add_smoke_flags(CLI::App* sub, SmokeFlags& flags, const std::string& smoke_help,
                     TimeoutFlag timeout) {
  sub->add_flag("--smoke", flags.smoke, smoke_help);
  sub->add_option("--device", flags.device, "Where --smoke runs: cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option(std::string(timeout_flag_name(timeout)), flags.timeout_seconds,
                  "Seconds one reference may run (the worker is then restarted; default 60)")
      ->check(positive_number("number of seconds"));
  sub->add_option("--max-bytes", flags.max_bytes,
                  "Skip a smoke run whose inputs and outputs need more bytes (default 256 MiB)")
      ->check(positive_number("number of bytes"));
  sub->add_option("--memory-limit", flags.memory_limit,
                  "Address-space limit of the worker in bytes (default 8 GiB)")
      ->check(positive_number("number of bytes"));
  sub->add_option("--scratch-limit", flags.scratch_limit,
                  "Bytes a worker may write in all, into its private /tmp (default 4 GiB)")
      ->check(positive_number("number of bytes"));
  sub->add_flag("--unsafe-no-sandbox", flags.unsafe_no_sandbox,
                "Run references and solutions without the sandbox, with your full rights");
}

std::optional<Diagnostic> check_smoke_flags(const CLI::App* sub, const SmokeFlags& flags,
                                            TimeoutFlag timeout) {
  if (flags.smoke) {
    return std::nullopt;
  }
  for (const std::string_view option :
       {std::string_view("--device"), timeout_flag_name(timeout), std::string_view("--max-bytes"),
        std::string_view("--memory-limit"), std::string_view("--scratch-limit"),
        std::string_view("--unsafe-no-sandbox")}) {
    if (sub->count(std::string(option)) > 0) {
      return make_diagnostic(codes::k_usage, fmt::format("{} needs --smoke", option));
    }
  }
  return std::nullopt;
}

ReferenceRunnerOptions smoke_runner_options(const CLI::App* sub, const SmokeFlags& flags) {
  ReferenceRunnerOptions options;
  options.job_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(flags.timeout_seconds * 1000.0));
  options.device = flags.device == "cuda" ? SmokeDevice::cuda : SmokeDevice::cpu;
  options.max_bytes = flags.max_bytes;
  options.address_space = flags.memory_limit;
  options.scratch_bytes = flags.scratch_limit;
  // CUDA reserves far more address space than memory (its unified address range): an
  // RLIMIT_AS sized for the CPU makes its start-up fail, so cuda runs without one unless asked.
  if (options.device == SmokeDevice::cuda && sub->count("--memory-limit") == 0) {
    options.address_space = 0;
  }
  if (flags.unsafe_no_sandbox) {
    options.sandbox = SandboxMode::unsafe_disabled;
    write_diagnostic(stderr, unsafe_sandbox_warning());
  }
  return options;
}

void SmokePrinter::print(const RunnableCheck& check) {
  bool environment = false;
  for (const auto& d : check.diagnostics) {
    if (d.severity == Severity::note && m_notes == SmokeNotes::hidden &&
        d.code != codes::k_smoke_skipped) {
      continue;
    }
    if (d.severity == Severity::error && is_environment_failure(d)) {
      environment = true;
      if (m_environment_printed) {
        continue;
      }
    }
    write_diagnostic(stderr, d);
  }
  m_environment_printed = m_environment_printed || environment;
}

std::string verdict_suffix(const std::optional<RunnableCheck>& check) {
  return check ? "  " + render_verdict(check->verdict) : std::string();
}

DiagnosticCounts count_smoke_diagnostics(const std::optional<StagedRunnable>& runnable) {
  DiagnosticCounts counts;
  if (!runnable) {
    return counts;
  }
  for (const auto& check : runnable->checks) {
    if (check) {
      counts += count_diagnostics(check->diagnostics);
    }
  }
  return counts;
}

} // namespace fib::app
