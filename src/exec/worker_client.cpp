#include "fib/exec/worker_client.hpp"

#include "runner_impl.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/util/cache_root.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <random>
#include <unistd.h>

// FIB_WORKER_FROM_BINDIR: where `cmake --install` puts the worker relative to where it puts fib
// ("../libexec/fib/fib-worker" in the GNU layout), defined by cmake/FibInstall.cmake.

namespace fib {

namespace detail {

namespace {

// A greeting's [[bytes, figure], ...] with positive entries, by size; empty when malformed.
std::vector<std::pair<std::uint64_t, double>> size_table(const Json& value) {
  std::vector<std::pair<std::uint64_t, double>> out;
  for (const Json& point : value.is_array() ? value : Json::array()) {
    if (!point.is_array() || point.size() != 2 || !point[0].is_number_integer() || point[0] <= 0 ||
        !point[1].is_number() || point[1].get<double>() <= 0 ||
        (!out.empty() && point[0].get<std::uint64_t>() <= out.back().first)) {
      return {};
    }
    out.emplace_back(point[0].get<std::uint64_t>(), point[1].get<double>());
  }
  return out;
}

} // namespace

WorkerInfo worker_info_of(const Json& greeting) {
  return WorkerInfo{string_field(greeting, "torch"),
                    string_field(greeting, "python"),
                    bool_field(greeting, "cuda"),
                    bool_field(greeting, "float8"),
                    string_field(greeting, "device_name"),
                    string_field(greeting, "cuda_version"),
                    size_table(field(greeting, "commit_cost")),
                    size_table(field(greeting, "copy_bandwidth"))};
}

} // namespace detail

using detail::human_bytes;

using detail::names_of;

std::optional<std::filesystem::path> find_worker_executable() {
  if (const char* configured = std::getenv("FIB_WORKER"); configured != nullptr && *configured) {
    return std::filesystem::path(configured);
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return std::nullopt;
  }
  const auto directory = self.parent_path();
  std::vector<std::filesystem::path> candidates{
      (directory / FIB_WORKER_FROM_BINDIR).lexically_normal(), directory / "fib-worker"};
  // CMake gives every build directory with targets a CMakeFiles/ folder; an installed bin/ has
  // none, so an installed fib never reaches into a build tree.
  if (std::filesystem::is_directory(directory / "CMakeFiles", ec)) {
    candidates.push_back(directory.parent_path() / "fib-worker" / "fib-worker");
    candidates.push_back(directory.parent_path() / "apps" / "fib-worker" / "fib-worker");
  }
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

ReferenceRunner::ReferenceRunner(ReferenceRunnerOptions options)
    : m_impl(std::make_unique<Impl>(std::move(options))) {}

ReferenceRunner::~ReferenceRunner() = default;

ReferenceOutcome ReferenceRunner::check_build(const Definition& definition) {
  Json request{{"job", "build"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)}};
  return m_impl->reference().run_job(std::move(request), m_impl->options().job_timeout).outcome;
}

ReferenceOutcome ReferenceRunner::smoke_run(const Definition& definition, std::string_view init) {
  // A skip decided here still reports the build, which the worker job would have done.
  const auto skipped_after_build = [&](Diagnostic reason) {
    ReferenceOutcome outcome = check_build(definition);
    if (outcome.verdict == ReferenceVerdict::ok) {
      outcome.verdict = ReferenceVerdict::skipped;
      outcome.diagnostics.push_back(std::move(reason));
    }
    return outcome;
  };
  auto plan = plan_smoke_run(definition);
  if (!plan) {
    return skipped_after_build(plan.error());
  }
  const auto& options = m_impl->options();
  const std::uintmax_t bytes = plan->input_bytes + plan->output_bytes;
  if (bytes > options.max_bytes) {
    Diagnostic d = make_diagnostic(
        codes::k_smoke_skipped,
        fmt::format("smoke run skipped: inputs and outputs need {} with the smallest axis values, "
                    "above --max-bytes {}",
                    human_bytes(bytes), human_bytes(options.max_bytes)));
    d.hint = "the const axes stay at their declared values; raise --max-bytes to run it";
    return skipped_after_build(std::move(d));
  }
  Json request{{"job", "smoke"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)},
               {"plan", to_json(*plan)},
               {"const_axes", definition.const_axes()},
               {"init", std::string(init)}};
  return m_impl->reference().run_job(std::move(request), options.job_timeout).outcome;
}

const std::optional<WorkerInfo>& ReferenceRunner::worker_info() const {
  return m_impl->info();
}

std::size_t ReferenceRunner::worker_starts() const {
  return m_impl->starts();
}

std::vector<Diagnostic> run_reference_checks(const Definition& definition, ReferenceChecks checks,
                                             ReferenceRunner& runner, std::string_view init) {
  std::vector<Diagnostic> out;
  if (checks == ReferenceChecks::none) {
    return out;
  }
  // A smoke job builds the reference first and reports both: one trip to the worker.
  return checks == ReferenceChecks::build_and_smoke ? runner.smoke_run(definition, init).diagnostics
                                                    : runner.check_build(definition).diagnostics;
}

std::filesystem::path default_build_cache() {
  return default_cache_directory().value_or("/tmp/.cache/fib");
}

namespace detail {

// The worker executable to start (`configured`, else found), or why there is none.
Expected<std::filesystem::path> worker_executable(const std::filesystem::path& configured) {
  auto worker = configured.empty() ? find_worker_executable()
                                   : std::optional<std::filesystem::path>(configured);
  if (!worker) {
    Diagnostic d = make_diagnostic(codes::k_worker_unavailable,
                                   "the reference worker fib-worker was not found");
    d.hint = "build fib with torch (FIB_WITH_TORCH=ON), or point FIB_WORKER at fib-worker";
    return unexpected(std::move(d));
  }
  if (::access(worker->c_str(), X_OK) != 0) {
    return unexpected(make_diagnostic(codes::k_worker_unavailable,
                                      fmt::format("cannot start the reference worker {}: {}",
                                                  worker->string(), std::strerror(errno))));
  }
  return *worker;
}

} // namespace detail

} // namespace fib
