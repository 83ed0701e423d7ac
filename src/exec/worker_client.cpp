#include "fib/exec/worker_client.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/subprocess.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

// FIB_WORKER_FROM_BINDIR: where `cmake --install` puts the worker relative to where it puts fib
// ("../libexec/fib/fib-worker" in the GNU layout), defined by cmake/FibInstall.cmake.

namespace fib {
namespace {

std::string human_bytes(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30)) {
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  }
  if (bytes >= (std::uintmax_t{1} << 20)) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return fmt::format("{} bytes", bytes);
}

} // namespace

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

class ReferenceRunner::Impl {
public:
  explicit Impl(ReferenceRunnerOptions options) : m_options(std::move(options)) {}
  ~Impl() { stop(); }

  ReferenceOutcome run_job(Json request, std::chrono::milliseconds timeout) {
    const std::lock_guard lock(m_mutex);
    m_last_reply = Json();
    ReferenceOutcome outcome;
    if (auto problem = ensure_started()) {
      outcome.verdict = ReferenceVerdict::unavailable;
      outcome.diagnostics.push_back(std::move(*problem));
      return outcome;
    }
    const std::int64_t id = ++m_next_id;
    request["id"] = id;
    request["device"] = std::string(to_string(m_options.device));
    request["seed"] = m_options.seed;
    const std::string line = request.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    if (!send_all(line)) {
      return crashed("the worker stopped reading requests");
    }
    auto reply = read_line(timeout);
    if (!reply) {
      if (m_timed_out) {
        kill_worker();
        outcome.verdict = ReferenceVerdict::failed;
        Diagnostic d = make_diagnostic(
            codes::k_smoke_timeout,
            fmt::format("the reference ran past the {:g} s timeout; the worker was stopped and "
                        "will be restarted",
                        static_cast<double>(timeout.count()) / 1000.0));
        d.hint = "an endless loop, or inputs too big for --timeout (raise it)";
        outcome.diagnostics.push_back(std::move(d));
        return outcome;
      }
      return crashed(request.value("job", "") == "evaluate"
                         ? "the worker died while running the solution or the reference"
                     : request.value("job", "") == "build_solution"
                         ? "the worker died while building the solution"
                         : "the worker died while running the reference");
    }
    DiagnosticList sink;
    auto document = parse_json(*reply, "<worker>", sink, 1, LineIndex::skipped);
    if (!document || !document->root.is_object() || document->root.value("id", -1) != id) {
      kill_worker();
      return protocol_error("an unexpected reply: " + text_excerpt(*reply));
    }
    const Json& root = document->root;
    m_last_reply = root;
    const std::string verdict = root.value("outcome", "");
    outcome.verdict = verdict == "ok"        ? ReferenceVerdict::ok
                      : verdict == "skipped" ? ReferenceVerdict::skipped
                      : verdict == "failed"  ? ReferenceVerdict::failed
                                             : ReferenceVerdict::unavailable;
    if (outcome.verdict == ReferenceVerdict::unavailable) {
      return protocol_error("an unknown outcome '" + text_excerpt(verdict) + "'");
    }
    for (const auto& item : root.value("diagnostics", Json::array())) {
      if (!item.is_object()) {
        continue;
      }
      const std::string code = item.value("code", "");
      if (find_code(code) == nullptr) {
        return protocol_error("an unknown diagnostic code '" + text_excerpt(code) + "'");
      }
      Diagnostic d = make_diagnostic(code, item.value("message", ""));
      d.pointer = item.value("pointer", "");
      d.hint = item.value("hint", "");
      outcome.diagnostics.push_back(std::move(d));
    }
    return outcome;
  }

  const std::optional<WorkerInfo>& info() const { return m_info; }
  // The reply of the last job that got one (its extra fields, e.g. "evaluation").
  const Json& last_reply() const { return m_last_reply; }
  std::size_t starts() const { return m_starts; }
  const ReferenceRunnerOptions& options() const { return m_options; }

private:
  ReferenceOutcome crashed(const std::string& what) {
    const std::string how = reap_worker();
    kill_worker();
    ReferenceOutcome outcome;
    outcome.verdict = ReferenceVerdict::failed;
    Diagnostic d =
        make_diagnostic(codes::k_worker_crashed,
                        fmt::format("{} ({}); it will be restarted for the next job", what, how));
    d.hint = fmt::format("a crash in native code, or the worker's memory limit ({}) was hit",
                         human_bytes(m_options.address_space));
    outcome.diagnostics.push_back(std::move(d));
    return outcome;
  }

  ReferenceOutcome protocol_error(const std::string& what) {
    kill_worker();
    ReferenceOutcome outcome;
    outcome.verdict = ReferenceVerdict::unavailable;
    outcome.diagnostics.push_back(
        make_diagnostic(codes::k_worker_protocol, "the reference worker sent " + what));
    return outcome;
  }

  std::optional<Diagnostic> ensure_started() {
    if (m_pid > 0) {
      return std::nullopt;
    }
    if (m_failed_start) {
      return m_failed_start;
    }
    auto worker = m_options.worker.empty() ? find_worker_executable()
                                           : std::optional<std::filesystem::path>(m_options.worker);
    if (!worker) {
      Diagnostic d = make_diagnostic(codes::k_worker_unavailable,
                                     "the reference worker fib-worker was not found");
      d.hint = "build fib with torch (FIB_WITH_TORCH=ON), or point FIB_WORKER at fib-worker";
      m_failed_start = d;
      return d;
    }
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
      return make_diagnostic(codes::k_worker_unavailable,
                             fmt::format("cannot create a socket: {}", std::strerror(errno)));
    }
    // The worker stays in fib's process group (a Ctrl-C reaches it too) and is run as found.
    const std::string path = worker->string();
    SpawnOptions spawn;
    spawn.argv = {path, "--address-space", std::to_string(m_options.address_space)};
    spawn.input_descriptor = sockets[1];
    spawn.group = ProcessGroup::inherited;
    spawn.lookup = ProgramLookup::exact_path;
    const Spawned child = spawn_process(spawn);
    ::close(sockets[1]);
    if (child.failure) {
      ::close(sockets[0]);
      Diagnostic d = make_diagnostic(codes::k_worker_unavailable,
                                     fmt::format("cannot start the reference worker {}: {}", path,
                                                 std::strerror(child.failure->error)));
      m_failed_start = d;
      return d;
    }
    m_pid = child.pid;
    m_socket = sockets[0];
    m_buffer.clear();
    ++m_starts;
    auto hello = read_line(m_options.startup_timeout);
    if (!hello) {
      const bool timed_out = m_timed_out;
      std::string how;
      if (!timed_out) {
        how = reap_worker();
      }
      kill_worker();
      Diagnostic d = make_diagnostic(
          codes::k_worker_unavailable,
          timed_out
              ? fmt::format("the reference worker {} did not greet within {:g} s", path,
                            static_cast<double>(m_options.startup_timeout.count()) / 1000.0)
              : fmt::format("the reference worker {} ended before its greeting ({})", path, how));
      d.hint = "its error output is above; it needs the Python that has torch";
      m_failed_start = d;
      return d;
    }
    DiagnosticList sink;
    auto document = parse_json(*hello, "<worker>", sink, 1, LineIndex::skipped);
    if (!document || !document->root.is_object() || document->root.value("fib_worker", 0) != 1) {
      kill_worker();
      Diagnostic d = make_diagnostic(codes::k_worker_protocol,
                                     "the reference worker greeted with " + text_excerpt(*hello));
      m_failed_start = d;
      return d;
    }
    const Json& root = document->root;
    m_info = WorkerInfo{root.value("torch", ""), root.value("python", ""),
                        root.value("cuda", false), root.value("float8", false)};
    return std::nullopt;
  }

  bool send_all(const std::string& text) {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const ssize_t n = ::send(m_socket, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return false;
      }
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One line from the worker; nullopt on EOF, error or timeout (m_timed_out tells which).
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    m_timed_out = false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (const auto newline = m_buffer.find('\n'); newline != std::string::npos) {
        std::string line = m_buffer.substr(0, newline);
        m_buffer.erase(0, newline + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        m_timed_out = true;
        return std::nullopt;
      }
      pollfd fd{m_socket, POLLIN, 0};
      const int ready =
          ::poll(&fd, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
      if (ready < 0 && errno != EINTR) {
        return std::nullopt;
      }
      if (ready <= 0) {
        continue;
      }
      char chunk[65536];
      const ssize_t n = ::recv(m_socket, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return std::nullopt;
      }
      m_buffer.append(chunk, static_cast<std::size_t>(n));
      if (m_buffer.size() > (std::size_t{64} << 20)) {
        return std::nullopt; // a reply this large is not the protocol
      }
    }
  }

  void kill_worker() {
    if (m_socket >= 0) {
      ::close(m_socket);
      m_socket = -1;
    }
    if (m_pid > 0) {
      kill_process(m_pid);
      m_pid = -1;
    }
    m_buffer.clear();
  }

  // Waits for the worker, which has ended or is about to: how it ended ("an unknown end" when it
  // cannot tell). The worker is gone afterwards.
  std::string reap_worker() {
    std::string how = "an unknown end";
    if (m_pid > 0) {
      if (const WaitResult waited = wait_for_exit(m_pid, std::nullopt); waited.status) {
        how = describe_wait_status(*waited.status);
        m_pid = -1;
      }
    }
    return how;
  }

  void stop() {
    if (m_socket >= 0) {
      ::shutdown(m_socket, SHUT_WR); // EOF: the worker exits on its own
    }
    if (m_pid > 0 &&
        wait_for_exit(m_pid, std::chrono::steady_clock::now() + std::chrono::milliseconds(500))
            .ended) {
      m_pid = -1;
    }
    kill_worker();
  }

  ReferenceRunnerOptions m_options;
  std::mutex m_mutex;
  pid_t m_pid = -1;
  int m_socket = -1;
  std::string m_buffer;
  bool m_timed_out = false;
  std::int64_t m_next_id = 0;
  std::size_t m_starts = 0;
  std::optional<WorkerInfo> m_info;
  std::optional<Diagnostic> m_failed_start;
  Json m_last_reply;
};

ReferenceRunner::ReferenceRunner(ReferenceRunnerOptions options)
    : m_impl(std::make_unique<Impl>(std::move(options))) {}

ReferenceRunner::~ReferenceRunner() = default;

namespace {

Json names_of(const OrderedMap<TensorSpec>& specs) {
  Json out = Json::array();
  for (const auto& [name, spec] : specs) {
    out.push_back(name);
  }
  return out;
}

} // namespace

ReferenceOutcome ReferenceRunner::check_build(const Definition& definition) {
  Json request{{"job", "build"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)}};
  return m_impl->run_job(std::move(request), m_impl->options().job_timeout);
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
  return m_impl->run_job(std::move(request), options.job_timeout);
}

namespace {

// The CPU's model name, for evaluations fib writes itself (timeouts, crashes).
std::string cpu_model() {
  if (std::FILE* info = std::fopen("/proc/cpuinfo", "re")) {
    char line[512];
    while (std::fgets(line, sizeof line, info) != nullptr) {
      std::string_view text(line);
      if (text.starts_with("model name")) {
        std::fclose(info);
        text = text.substr(text.find(':') + 1);
        while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
          text.remove_prefix(1);
        }
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
          text.remove_suffix(1);
        }
        return std::string(text);
      }
    }
    std::fclose(info);
  }
  return "cpu";
}

// The solution as the worker's build_solution/evaluate jobs take it.
Json solution_request(const Solution& solution) {
  Json sources = Json::array();
  for (const auto& source : solution.sources) {
    sources.push_back(Json{{"path", source.path}, {"content", source.content}});
  }
  const std::string binding =
      solution.spec.binding ? std::string(to_string(*solution.spec.binding)) : std::string();
  return Json{{"key", solution.content_hash()},
              {"language", std::string(to_string(solution.spec.language))},
              {"binding", binding.empty() ? Json(nullptr) : Json(binding)},
              {"entry_file", solution.spec.entry_file()},
              {"entry_symbol", solution.spec.entry_symbol()},
              {"dps", solution.spec.destination_passing_style == DestinationPassing::yes},
              {"sources", sources}};
}

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &local);
  return buffer;
}

// An evaluation fib writes itself (the worker could not): its environment is what the worker said
// about itself at start.
Json evaluation_by_fib(const std::optional<WorkerInfo>& info, SmokeDevice device,
                       std::string status, std::string log) {
  Json libs = Json::object();
  if (info && !info->torch_version.empty()) {
    libs["torch"] = info->torch_version;
  }
  if (info && !info->python_version.empty()) {
    libs["python"] = info->python_version;
  }
  const bool cuda = device == SmokeDevice::cuda && info && info->cuda;
  Json environment{{"hardware", cuda ? std::string("CUDA device") : cpu_model()}, {"libs", libs}};
  return Json{{"status", std::move(status)}, {"environment", std::move(environment)},
              {"timestamp", now_iso8601()},  {"log", std::move(log)},
              {"correctness", nullptr},      {"performance", nullptr}};
}

// The log of a COMPILE_ERROR when the build job failed (ran past its limit, crashed the worker,
// or did not compile); nullopt when it built or the worker could not be used.
std::optional<std::string> compile_error_log(const ReferenceOutcome& built, const Json& reply,
                                             std::chrono::milliseconds build_timeout) {
  for (const auto& d : built.diagnostics) {
    if (d.code == codes::k_smoke_timeout) {
      return fmt::format("the build ran past {:g} s and was stopped",
                         static_cast<double>(build_timeout.count()) / 1000.0);
    }
    if (d.code == codes::k_worker_crashed) {
      return d.message;
    }
  }
  if (built.verdict == ReferenceVerdict::failed) {
    return reply.value("log", std::string());
  }
  return std::nullopt;
}

} // namespace

SolutionEvaluation ReferenceRunner::evaluate(const Definition& definition, const Solution& solution,
                                             const Workload& workload,
                                             const EvaluateOptions& options) {
  SolutionEvaluation out;
  auto plan = plan_workload_run(definition, workload, options.dataset_root);
  if (!plan) {
    out.diagnostics.push_back(plan.error());
    return out;
  }
  const SmokeDevice device = m_impl->options().device;
  const auto by_fib = [&](std::string status, std::string log) {
    return evaluation_by_fib(m_impl->info(), device, std::move(status), std::move(log));
  };
  // The build first, as its own job (and once per solution: a failure is remembered).
  const std::string key = solution.content_hash();
  if (const auto failed = m_failed_builds.find(key); failed != m_failed_builds.end()) {
    out.evaluation = by_fib("COMPILE_ERROR", failed->second);
    return out;
  }
  const Json solution_json = solution_request(solution);
  Json build_request{
      {"job", "build_solution"},        {"name", definition.name},  {"reference", ""},
      {"inputs", Json::array()},        {"outputs", Json::array()}, {"solution", solution_json},
      {"cache", options.cache.string()}};
  ReferenceOutcome built = m_impl->run_job(std::move(build_request), options.build_timeout);
  if (auto log = compile_error_log(built, m_impl->last_reply(), options.build_timeout)) {
    m_failed_builds[key] = *log;
    out.evaluation = by_fib("COMPILE_ERROR", std::move(*log));
    return out;
  }
  if (built.verdict == ReferenceVerdict::unavailable) {
    out.diagnostics = std::move(built.diagnostics);
    return out;
  }
  Json request{{"job", "evaluate"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)},
               {"plan", to_json(*plan)},
               {"solution", solution_json},
               {"cache", options.cache.string()},
               {"warmup", options.warmup},
               {"iterations", options.iterations},
               {"atol", options.atol},
               {"rtol", options.rtol},
               {"tolerance_table", options.tolerance_table == ToleranceTable::on}};
  const auto timeout = m_impl->options().job_timeout;
  ReferenceOutcome outcome = m_impl->run_job(std::move(request), timeout);
  for (const auto& d : outcome.diagnostics) {
    if (d.code == codes::k_smoke_timeout) {
      out.evaluation =
          by_fib("TIMEOUT", fmt::format("the evaluation ran past the {:g} s timeout; the worker "
                                        "was stopped and restarted",
                                        static_cast<double>(timeout.count()) / 1000.0));
      return out;
    }
    if (d.code == codes::k_worker_crashed) {
      out.evaluation = by_fib("RUNTIME_ERROR", d.message);
      return out;
    }
  }
  const Json& reply = m_impl->last_reply();
  if (outcome.verdict == ReferenceVerdict::ok && reply.contains("evaluation") &&
      reply["evaluation"].is_object()) {
    out.evaluation = reply["evaluation"];
    return out;
  }
  for (auto& d : outcome.diagnostics) {
    if (d.code == codes::k_reference_build_failed) {
      out.diagnostics.push_back(make_diagnostic(codes::k_run_reference, d.message));
    } else {
      out.diagnostics.push_back(std::move(d));
    }
  }
  return out;
}

ReferenceRunner::BuildResult ReferenceRunner::build_solution(const Solution& solution,
                                                             const std::filesystem::path& cache) {
  BuildResult result;
  Json request{{"job", "build_solution"},  {"name", solution.definition},
               {"reference", ""},          {"inputs", Json::array()},
               {"outputs", Json::array()}, {"solution", solution_request(solution)},
               {"cache", cache.string()}};
  ReferenceOutcome outcome = m_impl->run_job(std::move(request), std::chrono::minutes(15));
  result.verdict = outcome.verdict;
  result.diagnostics = std::move(outcome.diagnostics);
  if (outcome.verdict == ReferenceVerdict::failed) {
    result.log = m_impl->last_reply().value("log", std::string());
    if (result.log.empty() && !result.diagnostics.empty()) {
      result.log = result.diagnostics.front().message;
    }
  }
  return result;
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
  if (const char* configured = std::getenv("FIB_CACHE_PATH"); configured && *configured) {
    return configured;
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/tmp") / ".cache" / "fib";
}

} // namespace fib
