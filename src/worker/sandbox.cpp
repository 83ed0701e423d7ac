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
  return Json{{"id", request.value("id", 0)},
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

struct Sandbox::Impl {
  // Declared first so it is destroyed last: every Python object below dies before it.
  std::unique_ptr<pyb::scoped_interpreter> interpreter;
  pyb::object build;
  pyb::object call;
  pyb::object init_args;
  pyb::object input_axes;
  pyb::object build_solution;
  pyb::object build_job;
  pyb::object evaluate_job;
  std::string python_version;
  TorchCapabilities torch;
};

Sandbox::Sandbox() : m_impl(std::make_unique<Impl>()) {}

Sandbox::~Sandbox() {
  if (m_impl) {
    m_impl->build = pyb::object();
    m_impl->call = pyb::object();
    m_impl->init_args = pyb::object();
    m_impl->input_axes = pyb::object();
    m_impl->build_solution = pyb::object();
    m_impl->build_job = pyb::object();
    m_impl->evaluate_job = pyb::object();
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
    m_impl->build_solution = scope["build_solution"];
    m_impl->build_job = scope["build_job"];
    m_impl->evaluate_job = scope["evaluate_job"];
    m_impl->python_version =
        pyb::str(pyb::module_::import("platform").attr("python_version")()).cast<std::string>();
    m_impl->torch = torch_capabilities();
  } catch (const std::exception& e) {
    return fmt::format("cannot start Python with torch from {}: {}", python.string(), e.what());
  }
  return std::nullopt;
}

Json Sandbox::hello() const {
  return Json{{"fib_worker", 1},
              {"torch", m_impl->torch.version},
              {"python", m_impl->python_version},
              {"cuda", m_impl->torch.cuda},
              {"float8", m_impl->torch.float8}};
}

Json Sandbox::run(const Json& request) {
  bool built = false;
  Json out = run_job(request, built);
  // A smoke job builds first: its reply carries the build's note too, so one job does both.
  if (built && request.value("job", "") == "smoke" && out.contains("diagnostics")) {
    out["diagnostics"].insert(out["diagnostics"].begin(),
                              diagnostic(codes::k_reference_ok, "reference build: ok"));
  }
  return out;
}

Json Sandbox::run_job(const Json& request, bool& built_ok) {
  try {
    const std::string job = request.at("job").get<std::string>();
    const std::string name = request.at("name").get<std::string>();
    const std::string reference = request.at("reference").get<std::string>();
    const auto inputs = request.at("inputs").get<std::vector<std::string>>();
    const auto outputs = request.at("outputs").get<std::vector<std::string>>();
    if (job == "build_solution") {
      const auto solution = pyb::module_::import("json").attr("loads")(
          request.at("solution").dump(-1, ' ', false, Json::error_handler_t::replace));
      const pyb::tuple result = m_impl->build_job(request.at("cache").get<std::string>(), solution);
      Json out = reply(request, result[0].cast<bool>() ? "ok" : "failed", Json::array());
      out["log"] = result[1].cast<std::string>();
      return out;
    }
    const pyb::tuple built = m_impl->build(name, reference, inputs.size(), outputs.size());
    if (built[0].is_none()) {
      std::string message = "reference build failed: " + built[1].cast<std::string>();
      const auto trace = built[2].cast<std::string>();
      if (!trace.empty()) {
        message += "\n" + trace;
      }
      return reply(request, "failed",
                   Json::array({diagnostic(codes::k_reference_build_failed, message)}));
    }
    built_ok = true;
    if (job == "evaluate") {
      auto plan = smoke_plan_from_json(request.at("plan"));
      if (!plan) {
        return reply(request, "failed",
                     Json::array({diagnostic(codes::k_worker_protocol, plan.error().message)}));
      }
      const bool cuda = request.value("device", "cpu") == "cuda";
      std::string reason;
      auto objects = make_inputs(*plan, cuda, request.value("seed", std::uint64_t{0}), reason);
      if (objects.size() != plan->inputs.size()) {
        Json out =
            reply(request, "skipped",
                  Json::array({diagnostic(codes::k_run_inputs,
                                          "the workload's inputs cannot be built: " + reason)}));
        return out;
      }
      pyb::list args;
      for (PyObject* object : objects) {
        args.append(pyb::reinterpret_steal<pyb::object>(object));
      }
      const auto solution = pyb::module_::import("json").attr("loads")(
          request.at("solution").dump(-1, ' ', false, Json::error_handler_t::replace));
      const auto text =
          m_impl
              ->evaluate_job(built[0], request.at("cache").get<std::string>(), solution, args,
                             outputs.size(), request.value("warmup", 3),
                             request.value("iterations", 10), cuda ? "cuda" : "cpu",
                             request.value("atol", 1e-2), request.value("rtol", 1e-2),
                             request.value("tolerance_table", false))
              .cast<std::string>();
      Json evaluation = Json::parse(text);
      if (evaluation.contains("reference_error")) {
        return reply(request, "failed",
                     Json::array({diagnostic(
                         codes::k_run_reference,
                         "the reference raised on this workload, so nothing was compared:\n" +
                             evaluation["reference_error"].get<std::string>())}));
      }
      Json out = reply(request, "ok", Json::array());
      out["evaluation"] = std::move(evaluation);
      return out;
    }
    if (job == "build") {
      return reply(request, "ok",
                   Json::array({diagnostic(codes::k_reference_ok, "reference build: ok")}));
    }
    auto plan = smoke_plan_from_json(request.at("plan"));
    if (!plan) {
      return reply(request, "failed",
                   Json::array({diagnostic(codes::k_worker_protocol, plan.error().message)}));
    }
    const bool cuda = request.value("device", "cpu") == "cuda";
    const auto seed = request.value("seed", std::uint64_t{0});
    pyb::list args;
    // The definition's own init first (dumper notes §4.4), else synthesized inputs.
    std::string inputs_from = "synthesized inputs";
    const std::string init = request.value("init", std::string());
    if (!init.empty()) {
      pyb::dict axes;
      for (const auto& [axis, value] : plan->axes) {
        axes[pyb::str(axis)] = value;
      }
      pyb::dict const_axes;
      const Json declared_consts = request.value("const_axes", Json::object());
      for (const auto& [axis, value] : declared_consts.items()) {
        const_axes[pyb::str(axis)] = value.get<std::int64_t>();
      }
      const pyb::tuple from_init =
          m_impl->init_args(name, init, inputs, axes, const_axes, cuda ? "cuda" : "cpu", seed);
      if (!from_init[0].is_none()) {
        args = from_init[0].cast<pyb::list>();
        inputs_from = "inputs from the definition's init";
      } else {
        inputs_from =
            fmt::format("synthesized inputs; init not used: {}", from_init[1].cast<std::string>());
      }
    }
    if (args.empty() && !plan->inputs.empty()) {
      std::string skip_reason;
      std::vector<PyObject*> objects;
      try {
        objects = make_inputs(*plan, cuda, seed, skip_reason);
      } catch (const std::exception& e) {
        // torch refused (the memory limit, a CUDA start-up failure): nothing about the reference.
        std::string what = e.what();
        what = what.substr(0, what.find('\n'));
        return reply(request, "skipped",
                     Json::array({diagnostic(
                         codes::k_smoke_skipped,
                         fmt::format("smoke run skipped: building the inputs failed: {}", what),
                         "raise --memory-limit, or lower --max-bytes to skip such definitions")}));
      }
      if (objects.size() != plan->inputs.size()) {
        return reply(
            request, "skipped",
            Json::array({diagnostic(codes::k_smoke_skipped, "smoke run skipped: " + skip_reason)}));
      }
      for (PyObject* object : objects) {
        args.append(pyb::reinterpret_steal<pyb::object>(object));
      }
    }
    // Output axes follow the inputs actually passed (an init picks its own sizes).
    std::vector<std::vector<std::string>> axis_names;
    for (const auto& input : plan->inputs) {
      axis_names.push_back(input.axis_names);
    }
    const auto from_inputs =
        m_impl->input_axes(args, axis_names).cast<std::map<std::string, std::int64_t>>();
    for (auto& output : plan->outputs) {
      for (std::size_t k = 0; k < output.shape.size() && k < output.axis_names.size(); ++k) {
        if (const auto it = from_inputs.find(output.axis_names[k]); it != from_inputs.end()) {
          output.shape[k] = it->second;
        }
      }
    }
    const pyb::tuple called = m_impl->call(built[0], args, outputs.size());
    const auto kind = called[0].cast<std::string>();
    if (kind == "name") {
      const auto missing = called[1].cast<std::string>();
      return reply(
          request, "failed",
          Json::array({diagnostic(codes::k_smoke_missing_helper,
                                  fmt::format("smoke run: the reference calls '{}', which it never "
                                              "defines\n{}",
                                              missing, called[2].cast<std::string>()),
                                  "paste the missing helper into the reference (FlashInfer's "
                                  "flashinfer/trace/templates/*.py has the dumper's helpers)")}));
    }
    if (kind == "raise") {
      // A CPU kernel this torch lacks (float16 matmul on torch 1.13, …) says nothing about the
      // reference.
      const auto text = called[1].cast<std::string>();
      static constexpr std::string_view k_missing_attribute =
          "AttributeError: module 'torch' has no attribute '";
      const auto attribute = text.starts_with(k_missing_attribute)
                                 ? text.substr(k_missing_attribute.size(),
                                               text.find('\'', k_missing_attribute.size()) -
                                                   k_missing_attribute.size())
                                 : std::string();
      // Only a dtype a newer torch has (float8_*, float4_*, uint16/32/64) says something about
      // this torch; any other missing attribute is a bug in the reference.
      const bool newer_dtype = attribute.starts_with("float8") || attribute.starts_with("float4") ||
                               attribute == "uint16" || attribute == "uint32" ||
                               attribute == "uint64";
      if (newer_dtype) {
        return reply(
            request, "skipped",
            Json::array({diagnostic(
                codes::k_smoke_skipped,
                fmt::format("smoke run skipped: the reference uses torch.{}, which torch "
                            "{} lacks{}",
                            attribute, m_impl->torch.version,
                            attribute.starts_with("float8") ? " (float8 needs torch 2.1 or later)"
                                                            : ""))}));
      }
      if (text.starts_with("RuntimeError: ") &&
          text.find("not implemented for '") != std::string::npos) {
        return reply(request, "skipped",
                     Json::array({diagnostic(
                         codes::k_smoke_skipped,
                         fmt::format("smoke run skipped: torch {} has no {} kernel for it ({})",
                                     m_impl->torch.version, cuda ? "CUDA" : "CPU", text))}));
      }
    }
    if (kind == "raise") {
      return reply(request, "failed",
                   Json::array({diagnostic(codes::k_smoke_exception,
                                           fmt::format("smoke run: the reference raised {}\n{}",
                                                       called[1].cast<std::string>(),
                                                       called[2].cast<std::string>()))}));
    }
    const auto values = called[1].cast<pyb::list>();
    Json problems = Json::array();
    if (values.size() != outputs.size()) {
      problems.push_back(diagnostic(
          codes::k_smoke_output_count,
          fmt::format("smoke run: the reference returned {} value{} for {} declared output{}",
                      values.size(), values.size() == 1 ? "" : "s", outputs.size(),
                      outputs.size() == 1 ? "" : "s")));
      return reply(request, "failed", problems);
    }
    std::map<std::string, std::int64_t> bound; // output-only axes, bound by the first output
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto& expected = plan->outputs[i];
      const pyb::tuple value = values[i].cast<pyb::tuple>();
      const auto value_kind = value[0].cast<std::string>();
      Json d;
      if (value_kind != "tensor") {
        if (!expected.scalar) {
          problems.push_back(diagnostic(codes::k_smoke_output_dtype,
                                        fmt::format("smoke run: output '{}' is a {}, not a tensor",
                                                    expected.name, value_kind)));
          problems.back()["pointer"] = "/outputs/" + expected.name;
        }
        continue;
      }
      const auto shape = value[1].cast<std::vector<std::int64_t>>();
      const auto dtype = value[2].cast<std::string>();
      bool shape_ok = !expected.scalar || shape.empty();
      if (!expected.scalar) {
        shape_ok = shape.size() == expected.shape.size();
        for (std::size_t k = 0; shape_ok && k < shape.size(); ++k) {
          if (expected.shape[k]) {
            shape_ok = shape[k] == *expected.shape[k];
          } else {
            const auto& axis = expected.axis_names[k];
            const auto [it, inserted] = bound.emplace(axis, shape[k]);
            shape_ok = inserted || it->second == shape[k];
          }
        }
      }
      if (!shape_ok) {
        problems.push_back(diagnostic(
            codes::k_smoke_output_shape,
            fmt::format("smoke run: output '{}' has shape {}, declared {}", expected.name,
                        shape_text(shape), declared_shape_text(expected))));
        problems.back()["pointer"] = "/outputs/" + expected.name + "/shape";
      }
      const std::string declared(to_string(expected.dtype));
      if (dtype != declared) {
        problems.push_back(
            diagnostic(codes::k_smoke_output_dtype,
                       fmt::format("smoke run: output '{}' has dtype {}, declared {}",
                                   expected.name, dtype, declared)));
        problems.back()["pointer"] = "/outputs/" + expected.name + "/dtype";
      }
    }
    if (!problems.empty()) {
      return reply(request, "failed", problems);
    }
    std::vector<std::string> axes;
    for (const auto& [axis, value] : plan->axes) {
      const auto actual = from_inputs.find(axis);
      axes.push_back(
          fmt::format("{}={}", axis, actual != from_inputs.end() ? actual->second : value));
    }
    return reply(
        request, "ok",
        Json::array({diagnostic(
            codes::k_reference_ok,
            fmt::format("smoke run: ok ({} output{} as declared; {}; {} on {})", outputs.size(),
                        outputs.size() == 1 ? "" : "s", inputs_from,
                        axes.empty() ? "no axes" : fmt::format("{}", fmt::join(axes, ", ")),
                        cuda ? "cuda" : "cpu"))}));
  } catch (const pyb::error_already_set& e) {
    return reply(request, "failed",
                 Json::array({diagnostic(codes::k_smoke_exception,
                                         fmt::format("the worker failed: {}", e.what()))}));
  } catch (const std::exception& e) {
    return reply(request, "failed",
                 Json::array({diagnostic(codes::k_worker_protocol,
                                         fmt::format("bad request: {}", e.what()))}));
  }
}

} // namespace fib::worker
