#include "sandbox.hpp"

#include "tensors.hpp"

#include "worker_sandbox_source.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/smoke.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <map>

namespace pyb = pybind11;

namespace fib::worker {
namespace {

Json diagnostic(std::string_view code, std::string message, std::string hint = "") {
  const auto* info = find_code(code);
  return Json{{"code", std::string(code)},
              {"severity", info != nullptr ? std::string(to_string(info->severity)) : "error"},
              {"message", std::move(message)},
              {"pointer", ""},
              {"hint", std::move(hint)}};
}

Json reply(const Json& request, std::string_view outcome, Json diagnostics) {
  return Json{{"id", request.contains("id") ? request["id"] : Json(0)},
              {"outcome", std::string(outcome)},
              {"diagnostics", std::move(diagnostics)}};
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string declared_shape_text(const PlannedOutput& output) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < output.shape.size(); ++i) {
    const auto& name = i < output.axis_names.size() ? output.axis_names[i] : std::string("?");
    parts.push_back(output.shape[i] ? fmt::format("{}={}", name, *output.shape[i]) : name);
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

} // namespace

// The interpreter and the functions of sandbox.py the jobs call.
struct SandboxInterpreter {
  // Declared first so it is destroyed last: every Python object below dies before it.
  std::unique_ptr<pyb::scoped_interpreter> interpreter;
  pyb::object build;
  pyb::object call;
  pyb::object init_args;
  pyb::object input_axes;
  pyb::object build_job;
  pyb::object load_job;
  pyb::object reference_outputs;
  pyb::object solution_outputs;
  pyb::object solution_samples;
  pyb::object commitment_cost;
  pyb::object copy_bandwidth;
  pyb::object channel;
  pyb::object json_loads;
  std::string python_version;
  TorchCapabilities torch;
};

struct Sandbox::Impl : SandboxInterpreter {};

Sandbox::Sandbox() : m_impl(std::make_unique<Impl>()) {}

Sandbox::~Sandbox() {
  if (m_impl) {
    m_impl->build = pyb::object();
    m_impl->call = pyb::object();
    m_impl->init_args = pyb::object();
    m_impl->input_axes = pyb::object();
    m_impl->build_job = pyb::object();
    m_impl->load_job = pyb::object();
    m_impl->reference_outputs = pyb::object();
    m_impl->solution_outputs = pyb::object();
    m_impl->solution_samples = pyb::object();
    m_impl->commitment_cost = pyb::object();
    m_impl->copy_bandwidth = pyb::object();
    m_impl->channel = pyb::object();
    m_impl->json_loads = pyb::object();
  }
}

std::optional<std::string> Sandbox::start(const std::filesystem::path& python) {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.isolated = 0;
  config.use_environment = 1;
  config.user_site_directory = 0;
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, python.c_str());
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    return "invalid interpreter path " + python.string();
  }
  try {
    m_impl->interpreter = std::make_unique<pyb::scoped_interpreter>(&config, 0, nullptr, false);
    pyb::dict scope;
    scope["__builtins__"] = pyb::module_::import("builtins");
    // src/worker/sandbox.py: each reference gets its own module object (not registered in
    // sys.modules), so references never see each other's globals.
    const std::string_view program = fib::embedded::worker_sandbox_source();
    pyb::exec(pyb::str(program.data(), program.size()), scope);
    m_impl->build = scope["build"];
    m_impl->call = scope["call"];
    m_impl->init_args = scope["init_args"];
    m_impl->input_axes = scope["input_axes"];
    m_impl->build_job = scope["build_job"];
    m_impl->load_job = scope["load_job"];
    m_impl->reference_outputs = scope["reference_outputs"];
    m_impl->solution_outputs = scope["solution_outputs"];
    m_impl->solution_samples = scope["solution_samples"];
    m_impl->commitment_cost = scope["commitment_cost"];
    m_impl->copy_bandwidth = scope["copy_bandwidth"];
    m_impl->channel = scope["Channel"];
    m_impl->json_loads = pyb::module_::import("json").attr("loads");
    m_impl->python_version =
        pyb::str(pyb::module_::import("platform").attr("python_version")()).cast<std::string>();
    m_impl->torch = torch_capabilities();
  } catch (const std::exception& e) {
    return fmt::format("cannot start Python with torch from {}: {}", python.string(), e.what());
  }
  return std::nullopt;
}

Json Sandbox::hello(DeviceName device_name) const {
  Json out{{"fib_worker", 1},
           {"torch", m_impl->torch.version},
           {"python", m_impl->python_version},
           {"cuda", m_impl->torch.cuda},
           {"float8", m_impl->torch.float8}};
  const bool on_cuda = device_name == DeviceName::included && m_impl->torch.cuda;
  if (on_cuda) {
    try {
      out["device_name"] =
          pyb::str(pyb::module_::import("torch").attr("cuda").attr("get_device_name")(0))
              .cast<std::string>();
    } catch (const std::exception&) {
      out["device_name"] = "CUDA device";
    }
  }
  // Measured here, before any untrusted code runs: fib subtracts the commitment's cost from
  // each timed call by this figure (docs/execution.md, "Trust model").
  out["commit_cost"] = Json::array();
  try {
    for (const pyb::handle point : m_impl->commitment_cost(on_cuda ? "cuda" : "cpu")) {
      const pyb::list pair = pyb::reinterpret_borrow<pyb::list>(point);
      out["commit_cost"].push_back(
          Json::array({pair[0].cast<std::uint64_t>(), pair[1].cast<double>()}));
    }
  } catch (const std::exception&) {
    out["commit_cost"] = Json::array();
  }
  // Likewise the device's memory bandwidth, for fib's plausibility floor.
  out["copy_bandwidth"] = Json::array();
  try {
    for (const pyb::handle point : m_impl->copy_bandwidth(on_cuda ? "cuda" : "cpu")) {
      const pyb::list pair = pyb::reinterpret_borrow<pyb::list>(point);
      out["copy_bandwidth"].push_back(
          Json::array({pair[0].cast<std::uint64_t>(), pair[1].cast<double>()}));
    }
  } catch (const std::exception&) {
    out["copy_bandwidth"] = Json::array();
  }
  return out;
}

namespace {

// The fields every request carries, read once.
struct Job {
  const Json& request;
  std::string kind;
  std::string name;
  std::string reference;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  bool cuda = false;
  std::uint64_t seed = 0;
  int channel = -1; // the protocol channel, for the timed calls
  // The reference's module, once built (jobs that run it).
  pyb::object module;

  Job(const Json& r, int channel_fd)
      : request(r), kind(r.at("job").get<std::string>()), name(r.at("name").get<std::string>()),
        reference(r.at("reference").get<std::string>()),
        inputs(r.at("inputs").get<std::vector<std::string>>()),
        outputs(r.at("outputs").get<std::vector<std::string>>()),
        cuda(r.value("device", "cpu") == "cuda"), seed(r.value("seed", std::uint64_t{0})),
        channel(channel_fd) {}

  const char* device() const { return cuda ? "cuda" : "cpu"; }
  Json failed(std::string_view code, std::string message, std::string hint = "") const {
    return reply(request, "failed",
                 Json::array({diagnostic(code, std::move(message), std::move(hint))}));
  }
  Json skipped(std::string_view code, std::string message, std::string hint = "") const {
    return reply(request, "skipped",
                 Json::array({diagnostic(code, std::move(message), std::move(hint))}));
  }
};

// The request's solution as a Python dict.
pyb::object solution_of(const Json& request) {
  return pyb::module_::import("json").attr("loads")(
      request.at("solution").dump(-1, ' ', false, Json::error_handler_t::replace));
}

pyb::list steal_into_list(const std::vector<PyObject*>& objects) {
  pyb::list list;
  for (PyObject* object : objects) {
    list.append(pyb::reinterpret_steal<pyb::object>(object));
  }
  return list;
}

// Output axes follow the inputs actually passed (an init picks its own sizes).
void resize_outputs(SmokePlan& plan, const std::map<std::string, std::int64_t>& from_inputs) {
  for (auto& output : plan.outputs) {
    for (std::size_t k = 0; k < output.shape.size() && k < output.axis_names.size(); ++k) {
      if (const auto it = from_inputs.find(output.axis_names[k]); it != from_inputs.end()) {
        output.shape[k] = it->second;
      }
    }
  }
}

// Whether the returned `shape` fits the declared output; output-only axes are bound by their
// first use in `bound`.
bool shape_fits(const PlannedOutput& expected, const std::vector<std::int64_t>& shape,
                std::map<std::string, std::int64_t>& bound) {
  if (expected.scalar) {
    return shape.empty();
  }
  if (shape.size() != expected.shape.size()) {
    return false;
  }
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (expected.shape[k]) {
      if (shape[k] != *expected.shape[k]) {
        return false;
      }
    } else {
      const auto [it, inserted] = bound.emplace(expected.axis_names[k], shape[k]);
      if (!inserted && it->second != shape[k]) {
        return false;
      }
    }
  }
  return true;
}

Json pointed(Json diagnostic, std::string pointer) {
  diagnostic["pointer"] = std::move(pointer);
  return diagnostic;
}

// What is wrong with the values `run` returned (count, kind, shape, dtype); empty when nothing.
Json output_problems(const SmokePlan& plan, const pyb::list& values, std::size_t declared) {
  Json problems = Json::array();
  if (values.size() != declared) {
    problems.push_back(diagnostic(
        codes::k_smoke_output_count,
        fmt::format("smoke run: the reference returned {} value{} for {} declared output{}",
                    values.size(), values.size() == 1 ? "" : "s", declared,
                    declared == 1 ? "" : "s")));
    return problems;
  }
  std::map<std::string, std::int64_t> bound; // output-only axes, bound by the first output
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto& expected = plan.outputs[i];
    const pyb::tuple value = values[i].cast<pyb::tuple>();
    const auto value_kind = value[0].cast<std::string>();
    if (value_kind != "tensor") {
      if (!expected.scalar) {
        problems.push_back(
            pointed(diagnostic(codes::k_smoke_output_dtype,
                               fmt::format("smoke run: output '{}' is a {}, not a tensor",
                                           expected.name, value_kind)),
                    "/outputs/" + expected.name));
      }
      continue;
    }
    const auto shape = value[1].cast<std::vector<std::int64_t>>();
    const auto dtype = value[2].cast<std::string>();
    if (!shape_fits(expected, shape, bound)) {
      problems.push_back(pointed(
          diagnostic(codes::k_smoke_output_shape,
                     fmt::format("smoke run: output '{}' has shape {}, declared {}", expected.name,
                                 shape_text(shape), declared_shape_text(expected))),
          "/outputs/" + expected.name + "/shape"));
    }
    const std::string declared_dtype(to_string(expected.dtype));
    if (dtype != declared_dtype) {
      problems.push_back(
          pointed(diagnostic(codes::k_smoke_output_dtype,
                             fmt::format("smoke run: output '{}' has dtype {}, declared {}",
                                         expected.name, dtype, declared_dtype)),
                  "/outputs/" + expected.name + "/dtype"));
    }
  }
  return problems;
}

// The attribute name of "AttributeError: module 'torch' has no attribute 'NAME'…"; "" otherwise.
std::string missing_torch_attribute(const std::string& text) {
  static constexpr std::string_view k_missing_attribute =
      "AttributeError: module 'torch' has no attribute '";
  if (!text.starts_with(k_missing_attribute)) {
    return "";
  }
  const auto start = k_missing_attribute.size();
  return text.substr(start, text.find('\'', start) - start);
}

// --- The job kinds: one function each, dispatched by Sandbox::run through k_jobs ---

// A solution step of sandbox.py (build_job or load_job) on the request's `cache` and `solution`:
// ok or failed, with the step's log.
Json solution_step(const pyb::object& step, Job& job) {
  const pyb::tuple result =
      step(job.request.at("cache").get<std::string>(), solution_of(job.request));
  Json out = reply(job.request, result[0].cast<bool>() ? "ok" : "failed", Json::array());
  out["log"] = result[1].cast<std::string>();
  return out;
}

// Builds the solution: its sources written into its cache entry and compiled, nothing of it
// loaded; the reply carries the compile log.
Json run_build_solution(SandboxInterpreter& impl, Job& job) {
  return solution_step(impl.build_job, job);
}

// Loads the built solution into this worker (its import); the reply carries why it failed.
Json run_load_solution(SandboxInterpreter& impl, Job& job) {
  return solution_step(impl.load_job, job);
}

// The reference build alone (it ran before this).
Json run_build_check(SandboxInterpreter& /*impl*/, Job& job) {
  return reply(job.request, "ok",
               Json::array({diagnostic(codes::k_reference_ok, "reference build: ok")}));
}

// The request's JSON value `key` as a Python object.
pyb::object python_value(const SandboxInterpreter& impl, const Json& request, const char* key) {
  return impl.json_loads(request.at(key).dump(-1, ' ', false, Json::error_handler_t::replace));
}

// The inputs whose values change on every timed call ({name: "values" | "rows"}; None when the
// request names none).
pyb::object fresh_inputs(const SandboxInterpreter& impl, const Json& request) {
  return request.contains("fresh_inputs") ? python_value(impl, request, "fresh_inputs")
                                          : pyb::none();
}

// The reference on the planned workload: inputs.safetensors and expected.safetensors in the
// request's directory, then its timed calls (fib holds the clock, over the channel).
Json run_reference_outputs(SandboxInterpreter& impl, Job& job) {
  auto plan = smoke_plan_from_json(job.request.at("plan"));
  if (!plan) {
    return job.failed(codes::k_worker_protocol, plan.error().message);
  }
  std::string reason;
  std::vector<PyObject*> objects;
  try {
    objects = make_inputs(*plan, job.cuda, job.seed, reason);
  } catch (const std::exception& e) {
    std::string what = e.what();
    return job.skipped(codes::k_run_inputs,
                       "the workload's inputs cannot be built: " + what.substr(0, what.find('\n')));
  }
  if (objects.size() != plan->inputs.size()) {
    return job.skipped(codes::k_run_inputs, "the workload's inputs cannot be built: " + reason);
  }
  const pyb::list args = steal_into_list(objects);
  const Json& r = job.request;
  const auto text =
      impl.reference_outputs(job.module, args, job.inputs, job.outputs,
                             r.at("directory").get<std::string>(), job.device(),
                             r.value("warmup", 3), r.value("iterations", 10),
                             impl.channel(job.channel, python_value(impl, r, "id")),
                             pyb::arg("cold_cache") = r.value("cold_cache", false),
                             pyb::arg("fresh_inputs") = fresh_inputs(impl, r),
                             pyb::arg("keep_inputs") = r.value("keep_timed_inputs", false))
          .cast<std::string>();
  Json result = Json::parse(text);
  if (result.contains("reference_error")) {
    return job.failed(codes::k_run_reference,
                      "the reference raised on this workload, so nothing was compared:\n" +
                          result["reference_error"].get<std::string>());
  }
  Json out = reply(r, "ok", Json::array());
  out["scalars"] = std::move(result["scalars"]);
  return out;
}

// The solution on the reference's inputs: got.safetensors in the request's directory, then its
// timed calls. The reply's "result" is what solution_outputs of sandbox.py said.
Json run_solution_outputs(SandboxInterpreter& impl, Job& job) {
  const Json& r = job.request;
  const auto text =
      impl.solution_outputs(
              r.at("cache").get<std::string>(), solution_of(r),
              r.at("directory").get<std::string>(), job.inputs, python_value(impl, r, "scalars"),
              python_value(impl, r, "output_specs"), job.device(), r.value("warmup", 3),
              r.value("iterations", 10), impl.channel(job.channel, python_value(impl, r, "id")),
              r.value("perturbed", false), pyb::arg("cold_cache") = r.value("cold_cache", false),
              pyb::arg("fresh_inputs") = fresh_inputs(impl, r))
          .cast<std::string>();
  Json out = reply(r, "ok", Json::array());
  out["result"] = Json::parse(text);
  return out;
}

// The sampling evaluator's calls of the solution (solution_samples of sandbox.py):
// validation.safetensors and counts.safetensors in the request's directory. The reply's
// "result" is what solution_samples said.
Json run_solution_samples(SandboxInterpreter& impl, Job& job) {
  const Json& r = job.request;
  const auto text =
      impl.solution_samples(r.at("cache").get<std::string>(), solution_of(r),
                            r.at("directory").get<std::string>(), job.inputs,
                            python_value(impl, r, "scalars"), python_value(impl, r, "output_specs"),
                            job.device(), python_value(impl, r, "sampling"))
          .cast<std::string>();
  Json out = reply(r, "ok", Json::array());
  out["result"] = Json::parse(text);
  return out;
}

// Fills `args`: from the definition's `init` when it gives them (`inputs_from` says which),
// else synthesized from the plan. A reply when the run is skipped instead.
std::optional<Json> smoke_arguments(SandboxInterpreter& impl, const Job& job, const SmokePlan& plan,
                                    pyb::list& args, std::string& inputs_from) {
  const std::string init = job.request.value("init", std::string());
  if (!init.empty()) {
    pyb::dict axes;
    for (const auto& [axis, value] : plan.axes) {
      axes[pyb::str(axis)] = value;
    }
    pyb::dict const_axes;
    const Json declared_consts = job.request.value("const_axes", Json::object());
    for (const auto& [axis, value] : declared_consts.items()) {
      const_axes[pyb::str(axis)] = value.get<std::int64_t>();
    }
    const pyb::tuple from_init =
        impl.init_args(job.name, init, job.inputs, axes, const_axes, job.device(), job.seed);
    if (!from_init[0].is_none()) {
      args = from_init[0].cast<pyb::list>();
      inputs_from = "inputs from the definition's init";
    } else {
      inputs_from =
          fmt::format("synthesized inputs; init not used: {}", from_init[1].cast<std::string>());
    }
  }
  if (!args.empty() || plan.inputs.empty()) {
    return std::nullopt;
  }
  std::string skip_reason;
  std::vector<PyObject*> objects;
  try {
    objects = make_inputs(plan, job.cuda, job.seed, skip_reason);
  } catch (const std::exception& e) {
    // torch refused (the memory limit, a CUDA start-up failure): nothing about the reference.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    return job.skipped(codes::k_smoke_skipped,
                       fmt::format("smoke run skipped: building the inputs failed: {}", what),
                       "raise --memory-limit, or lower --max-bytes to skip such definitions");
  }
  if (objects.size() != plan.inputs.size()) {
    return job.skipped(codes::k_smoke_skipped, "smoke run skipped: " + skip_reason);
  }
  args = steal_into_list(objects);
  return std::nullopt;
}

// The reply when `run` raised: a missing helper, a skip (this torch lacks a dtype or a kernel:
// nothing about the reference), or the exception.
Json raised(const SandboxInterpreter& impl, const Job& job, const pyb::tuple& called) {
  const auto text = called[1].cast<std::string>();
  const auto trace = called[2].cast<std::string>();
  if (called[0].cast<std::string>() == "name") {
    return job.failed(codes::k_smoke_missing_helper,
                      fmt::format("smoke run: the reference calls '{}', which it never "
                                  "defines\n{}",
                                  text, trace),
                      "paste the missing helper into the reference (FlashInfer's "
                      "flashinfer/trace/templates/*.py has the dumper's helpers)");
  }
  // Only a dtype a newer torch has (float8_*, float4_*, uint16/32/64) says something about
  // this torch; any other missing attribute is a bug in the reference.
  const auto attribute = missing_torch_attribute(text);
  if (attribute.starts_with("float8") || attribute.starts_with("float4") || attribute == "uint16" ||
      attribute == "uint32" || attribute == "uint64") {
    return job.skipped(
        codes::k_smoke_skipped,
        fmt::format("smoke run skipped: the reference uses torch.{}, which torch {} lacks{}",
                    attribute, impl.torch.version,
                    attribute.starts_with("float8") ? " (float8 needs torch 2.1 or later)" : ""));
  }
  // The reference puts tensors on a CUDA device this worker does not have.
  if (!job.cuda && (text.find("Torch not compiled with CUDA enabled") != std::string::npos ||
                    text.find("Found no NVIDIA driver") != std::string::npos ||
                    text.find("No CUDA GPUs are available") != std::string::npos)) {
    return job.skipped(codes::k_smoke_skipped,
                       fmt::format("smoke run skipped: the reference needs CUDA ({}); run it "
                                   "with --device cuda on a machine with a GPU",
                                   text.substr(0, text.find('\n'))));
  }
  // A CPU kernel this torch lacks (float16 matmul on torch 1.13, …).
  if (text.starts_with("RuntimeError: ") &&
      text.find("not implemented for '") != std::string::npos) {
    return job.skipped(codes::k_smoke_skipped,
                       fmt::format("smoke run skipped: torch {} has no {} kernel for it ({})",
                                   impl.torch.version, job.cuda ? "CUDA" : "CPU", text));
  }
  return job.failed(codes::k_smoke_exception,
                    fmt::format("smoke run: the reference raised {}\n{}", text, trace));
}
// The smoke run: inputs (the definition's init, else synthesized), one call, and the outputs
// compared with the declaration.
Json run_smoke(SandboxInterpreter& impl, Job& job) {
  auto plan = smoke_plan_from_json(job.request.at("plan"));
  if (!plan) {
    return job.failed(codes::k_worker_protocol, plan.error().message);
  }
  pyb::list args;
  std::string inputs_from = "synthesized inputs";
  if (auto early = smoke_arguments(impl, job, *plan, args, inputs_from)) {
    return std::move(*early);
  }
  std::vector<std::vector<std::string>> axis_names;
  for (const auto& input : plan->inputs) {
    axis_names.push_back(input.axis_names);
  }
  const auto from_inputs =
      impl.input_axes(args, axis_names).cast<std::map<std::string, std::int64_t>>();
  resize_outputs(*plan, from_inputs);
  const pyb::tuple called = impl.call(job.module, args, job.outputs.size());
  const auto kind = called[0].cast<std::string>();
  if (kind != "ok") {
    return raised(impl, job, called);
  }
  Json problems = output_problems(*plan, called[1].cast<pyb::list>(), job.outputs.size());
  if (!problems.empty()) {
    return reply(job.request, "failed", problems);
  }
  std::vector<std::string> axes;
  for (const auto& [axis, value] : plan->axes) {
    const auto actual = from_inputs.find(axis);
    axes.push_back(
        fmt::format("{}={}", axis, actual != from_inputs.end() ? actual->second : value));
  }
  return reply(job.request, "ok",
               Json::array({diagnostic(
                   codes::k_reference_ok,
                   fmt::format("smoke run: ok ({} output{} as declared; {}; {} on {})",
                               job.outputs.size(), job.outputs.size() == 1 ? "" : "s", inputs_from,
                               axes.empty() ? "no axes" : fmt::format("{}", fmt::join(axes, ", ")),
                               job.device()))}));
}

enum class BuildsReference { no, yes };

struct JobKind {
  std::string_view name;
  BuildsReference builds_reference;
  Json (*run)(SandboxInterpreter&, Job&);
};

constexpr std::array<JobKind, 7> k_jobs{{
    {"build_solution", BuildsReference::no, &run_build_solution},
    {"load_solution", BuildsReference::no, &run_load_solution},
    {"build", BuildsReference::yes, &run_build_check},
    {"reference_outputs", BuildsReference::yes, &run_reference_outputs},
    {"solution_outputs", BuildsReference::no, &run_solution_outputs},
    {"solution_samples", BuildsReference::no, &run_solution_samples},
    {"smoke", BuildsReference::yes, &run_smoke},
}};

// Runs `job` as its kind says, the reference built first where the kind needs it.
Json dispatch(SandboxInterpreter& impl, Job& job, bool& reference_built) {
  const auto kind = std::find_if(k_jobs.begin(), k_jobs.end(),
                                 [&](const JobKind& k) { return k.name == job.kind; });
  if (kind == k_jobs.end()) {
    return job.failed(codes::k_worker_protocol,
                      fmt::format("bad request: unknown job '{}'", job.kind));
  }
  if (kind->builds_reference == BuildsReference::yes) {
    const pyb::tuple built =
        impl.build(job.name, job.reference, job.inputs.size(), job.outputs.size());
    if (built[0].is_none()) {
      std::string message = "reference build failed: " + built[1].cast<std::string>();
      if (const auto trace = built[2].cast<std::string>(); !trace.empty()) {
        message += "\n" + trace;
      }
      return job.failed(codes::k_reference_build_failed, message);
    }
    job.module = built[0];
    reference_built = true;
  }
  return kind->run(impl, job);
}

} // namespace

Json Sandbox::run(const Json& request, int channel) {
  bool reference_built = false;
  Json out;
  try {
    Job job(request, channel);
    out = dispatch(*m_impl, job, reference_built);
  } catch (const pyb::error_already_set& e) {
    out = reply(request, "failed",
                Json::array({diagnostic(codes::k_smoke_exception,
                                        fmt::format("the worker failed: {}", e.what()))}));
  } catch (const std::exception& e) {
    out = reply(request, "failed",
                Json::array({diagnostic(codes::k_worker_protocol,
                                        fmt::format("bad request: {}", e.what()))}));
  }
  // A smoke job builds first: its reply carries the build's note too, so one job does both.
  if (reference_built && request.value("job", "") == "smoke" && out.contains("diagnostics")) {
    out["diagnostics"].insert(out["diagnostics"].begin(),
                              diagnostic(codes::k_reference_ok, "reference build: ok"));
  }
  return out;
}

} // namespace fib::worker
