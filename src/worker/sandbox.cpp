#include "sandbox.hpp"

#include "tensors.hpp"

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

// Helpers run inside the interpreter. Each reference gets its own module object (not registered
// in sys.modules), so references never see each other's globals.
constexpr const char* k_sandbox_source = R"PY(
import builtins, inspect, linecache, traceback, types, typing
import torch

def _filename(name):
    return "<reference:%s>" % name

def _reference_trace(error):
    """The frames inside the reference, then the exception line."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename.startswith("<reference:")]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    return "".join(lines).rstrip("\n")

def load(name, source):
    filename = _filename(name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(name + "__reference")
    module.__dict__["__file__"] = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    return module

def _annotation_problem(run, module, n_outputs):
    annotation = inspect.signature(run).return_annotation
    if annotation is inspect.Signature.empty:
        return None
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, module.__dict__)
        except Exception:
            return None
    if annotation is None or annotation is type(None):
        if n_outputs != 0:
            return "return annotation None does not fit %d outputs" % n_outputs
        return None
    if typing.get_origin(annotation) is tuple:
        args = typing.get_args(annotation)
        if args and args[-1] is not Ellipsis and len(args) != n_outputs:
            return ("return annotation %s has %d elements for %d outputs"
                    % (inspect.formatannotation(annotation), len(args), n_outputs))
        if n_outputs == 1:
            return "return annotation is a tuple for 1 output"
    return None

def build(name, source, n_inputs, n_outputs):
    """(module, None) or (None, message, traceback)."""
    module_name = name + "__reference"
    try:
        module = load(name, source)
    except BaseException as error:
        return (None, "Failed importing module '%s' from sources: %s: %s"
                % (module_name, type(error).__name__, error), _reference_trace(error))
    run = module.__dict__.get("run")
    if run is None or not callable(run):
        return (None, "Entry symbol 'run' not found in module '%s'" % module_name, "")
    try:
        signature = inspect.signature(run)
    except (TypeError, ValueError) as error:
        return (None, "Value-returning style callable: expected %d positional parameters, but "
                "its signature cannot be read: %s" % (n_inputs, error), "")
    try:
        signature.bind(*([None] * n_inputs))
    except TypeError as error:
        return (None, "Value-returning style callable: expected %d positional parameters, but "
                "signature '%s' is incompatible: %s" % (n_inputs, signature, error), "")
    problem = _annotation_problem(run, module, n_outputs)
    if problem:
        return (None, problem, "")
    return (module, None, "")

_ALIASES = {
    "hidden_states": ("input", "x"), "input": ("hidden_states", "x"), "x": ("input",),
    "A": ("a",), "B": ("b",), "a": ("A",), "b": ("B",),
    "kv_indptr": ("indptr", "paged_kv_indptr"), "kv_indices": ("indices", "paged_kv_indices"),
    "kv_last_page_len": ("last_page_len", "paged_kv_last_page_len"), "qo_indptr": ("indptr",),
}

def init_args(name, source, inputs, axes, const_axes, device, seed):
    """The inputs an `init` function builds, in definition order: (values, "") or (None, why)."""
    import ast
    try:
        entry = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)][-1]
        module = load(name + "__init", source)
    except BaseException as error:
        return (None, "its init does not run here (%s: %s)" % (type(error).__name__, error))
    function = module.__dict__.get(entry)
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError) as error:
        return (None, "its init has no readable signature (%s)" % error)
    kwargs = {}
    forwarder = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
    for pname, p in parameters.items():
        if p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        if pname == "device":
            kwargs[pname] = device
        elif pname == "seed":
            kwargs[pname] = seed
        elif pname in const_axes:
            kwargs[pname] = const_axes[pname]
        elif pname in axes and p.default is p.empty:
            kwargs[pname] = axes[pname]
    if forwarder:
        kwargs.setdefault("device", device)
        kwargs.setdefault("seed", seed)
    try:
        try:
            result = function(**kwargs)
        except TypeError:
            if not forwarder:
                raise
            result = function(device=device, seed=seed)
    except ModuleNotFoundError as error:
        return (None, "its init needs the %s package" % error.name)
    except BaseException as error:
        return (None, "its init raised %s: %s" % (type(error).__name__, error))
    if not isinstance(result, dict):
        return (None, "its init returned %s, not a dict" % type(result).__name__)
    if set(result) == {"plan", "run"}:
        flat = dict(result["plan"])
        flat.update(result["run"])
    else:
        flat = result
    values = []
    for input_name in inputs:
        for key in (input_name,) + _ALIASES.get(input_name, ()):
            if key in flat:
                values.append(flat[key])
                break
        else:
            return (None, "its init gives no value for input '%s'" % input_name)
    return (values, "")

import fcntl, importlib, os, platform, statistics, subprocess, sys, time

def _write_sources(directory, sources):
    for path, content in sources:
        target = os.path.normpath(os.path.join(directory, path))
        if os.path.isabs(path) or not target.startswith(os.path.normpath(directory) + os.sep):
            raise ValueError("source path %r leaves the build directory" % path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            with open(target) as f:
                if f.read() == content:
                    continue  # unchanged: keep its time, so the build tool sees nothing to redo
        except OSError:
            pass
        temporary = "%s.fib-%d" % (target, os.getpid())
        with open(temporary, "w") as f:
            f.write(content)
        os.replace(temporary, target)

def _compile_cuda(directory, cu_files, key):
    """nvcc-compiled objects for the .cu sources: (objects, link flags, log) or (None, None, log)."""
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    nvcc = os.path.join(cuda_home, "bin", "nvcc")
    objects, log = [], ""
    for source in cu_files:
        obj = os.path.join(directory, "build", os.path.basename(source) + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        command = [nvcc, "-c", source, "-o", obj, "-Xcompiler", "-fPIC", "-O2", "-std=c++17",
                   "-I", os.path.join(directory, "src")]
        done = subprocess.run(command, capture_output=True, text=True)
        log += " ".join(command) + "\n" + done.stdout + done.stderr
        if done.returncode != 0:
            return None, None, log
        objects.append(obj)
    return objects, ["-L" + os.path.join(cuda_home, "lib64"), "-lcudart"], log

def build_solution(cache, key, language, binding, entry_file, entry_symbol, sources):
    """(callable, log) or (None, log): a COMPILE_ERROR with the log."""
    root = os.path.join(cache, "solutions", key)
    os.makedirs(root, exist_ok=True)
    with open(root + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two fib processes build one solution once
        try:
            src = os.path.join(root, "src")
            _write_sources(src, sources)
            if language in ("python", "triton"):
                if language == "triton":
                    try:
                        import triton  # noqa: F401
                    except ImportError:
                        return (None, "triton solutions need the triton package in the worker's "
                                "Python, which does not have it")
                package = "fib_solution_" + key[:16]
                if package not in sys.modules:
                    module = types.ModuleType(package)
                    module.__path__ = [src]
                    sys.modules[package] = module
                stem = entry_file[:-3] if entry_file.endswith(".py") else entry_file
                try:
                    module = importlib.import_module(package + "." + stem.replace("/", "."))
                except BaseException as error:
                    return (None, "Failed importing module '%s' from sources: %s"
                            % (stem, traceback.format_exc()))
                function = getattr(module, entry_symbol, None)
                if not callable(function):
                    return (None, "Entry symbol '%s' not found in module '%s'" % (entry_symbol, stem))
                return (function, "")
            if language in ("cpp", "cuda"):
                if binding != "torch":
                    return (None, "binding '%s' is not supported by fib: cpp and cuda solutions "
                            "need binding \"torch\" (a PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) "
                            "extension)" % (binding or "tvm-ffi"))
                from torch.utils import cpp_extension
                paths = [os.path.join(src, p) for p, _ in sources]
                cpp = [p for p in paths if p.endswith((".cpp", ".cc", ".cxx"))]
                cu = [p for p in paths if p.endswith(".cu")]
                extra, log = [], ""
                if cu:
                    objects, flags, log = _compile_cuda(root, cu, key)
                    if objects is None:
                        return (None, log)
                    extra = objects + flags
                build = os.path.join(root, "build")
                os.makedirs(build, exist_ok=True)
                includes = [src]
                if cu or language == "cuda":
                    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
                    includes.append(os.path.join(cuda_home, "include"))
                    extra.append("-Wl,-rpath," + os.path.join(cuda_home, "lib64"))
                try:
                    module = cpp_extension.load(
                        name="fib_" + key[:16], sources=cpp, extra_include_paths=includes,
                        extra_ldflags=extra, build_directory=build, verbose=False,
                        with_cuda=False)
                except BaseException as error:
                    return (None, log + str(error))
                function = getattr(module, entry_symbol, None)
                if not callable(function):
                    return (None, "Entry symbol '%s' not found in the extension" % entry_symbol)
                return (function, log)
            return (None, "language '%s' is not supported by fib" % language)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

_TOLERANCES = {  # contract §7.5: dtype -> (atol, rtol, required hit ratio)
    "float32": (1e-5, 1e-5, 1.0), "float16": (1e-3, 1e-3, 1.0), "bfloat16": (8e-3, 1e-2, 1.0),
    "float8_e4m3fn": (1e-1, 2e-1, 0.85), "float8_e5m2": (1e-1, 2e-1, 0.85),
}

def _as_list(result, n_outputs):
    if isinstance(result, (tuple, list)):
        return list(result)
    if result is None and n_outputs == 0:
        return []
    return [result]

def _environment(device):
    libs = {"torch": torch.__version__, "python": platform.python_version()}
    if device == "cuda" and torch.cuda.is_available():
        hardware = torch.cuda.get_device_name(0)
        if torch.version.cuda:
            libs["cuda"] = torch.version.cuda
    else:
        hardware = platform.processor() or platform.machine() or "cpu"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        hardware = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
    return {"hardware": hardware, "libs": libs}

def _evaluation(status, device, log="", correctness=None, performance=None):
    return {"status": status, "environment": _environment(device),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"), "log": log,
            "correctness": correctness, "performance": performance}

def evaluate(reference, function, args, n_outputs, dps, warmup, iterations, device, atol, rtol,
             per_dtype, build_log):
    def fresh():
        return [v.clone() if isinstance(v, torch.Tensor) else v for v in args]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    try:
        with torch.no_grad():
            expected = _as_list(reference.run(*fresh()), n_outputs)
    except BaseException:
        # Nothing to compare with: not the solution's fault, and no evaluation.
        return {"reference_error": traceback.format_exc()}
    def prepare():
        inputs = fresh()
        outs = [torch.empty_like(t) for t in expected] if dps else []
        return inputs, outs
    def call(inputs, outs):
        if dps:
            function(*inputs, *outs)
            return outs
        return _as_list(function(*inputs), n_outputs)
    try:
        with torch.no_grad():
            got = call(*prepare())
        sync()
    except BaseException as error:
        return _evaluation("RUNTIME_ERROR", device, build_log + traceback.format_exc())
    if len(got) != len(expected):
        return _evaluation("INCORRECT_SHAPE", device, "returned %d outputs, expected %d"
                           % (len(got), len(expected)))
    worst_abs, worst_rel, numerical = 0.0, 0.0, []
    for index, (g, e) in enumerate(zip(got, expected)):
        if not isinstance(g, torch.Tensor) or tuple(g.shape) != tuple(e.shape):
            return _evaluation("INCORRECT_SHAPE", device, "output %d: shape %s, expected %s"
                               % (index, tuple(getattr(g, "shape", ())), tuple(e.shape)))
        if g.dtype != e.dtype:
            return _evaluation("INCORRECT_DTYPE", device, "output %d: dtype %s, expected %s"
                               % (index, g.dtype, e.dtype))
        a, b = g.detach().double().cpu(), e.detach().double().cpu()
        diff = (a - b).abs()
        if diff.numel():
            worst_abs = max(worst_abs, float(diff.max()))
            worst_rel = max(worst_rel, float((diff / b.abs().clamp_min(1e-12)).max()))
        dtype = str(e.dtype).replace("torch.", "")
        tol_abs, tol_rel, ratio = _TOLERANCES.get(dtype, (atol, rtol, 1.0)) if per_dtype else (atol, rtol, 1.0)
        close = torch.isclose(a, b, atol=tol_abs, rtol=tol_rel)
        hit = float(close.double().mean()) if close.numel() else 1.0
        if hit < ratio or (ratio == 1.0 and not bool(close.all())):
            numerical.append("output %d: %.1f%% of the values within atol=%g, rtol=%g"
                             % (index, 100 * hit, tol_abs, tol_rel))
    correctness = {"max_relative_error": worst_rel, "max_absolute_error": worst_abs, "extra": None}
    if numerical:
        return _evaluation("INCORRECT_NUMERICAL", device, "\n".join(numerical), correctness)
    def timed(run):
        with torch.no_grad():
            for _ in range(warmup):
                run(*prepare())
            sync()
            samples = []
            for _ in range(max(iterations, 1)):
                inputs, outs = prepare()
                sync()
                if device == "cuda":  # CUDA events on a GPU, a steady clock on the CPU
                    begin = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    begin.record()
                    run(inputs, outs)
                    end.record()
                    sync()
                    samples.append(begin.elapsed_time(end))
                else:
                    start = time.perf_counter()
                    run(inputs, outs)
                    samples.append((time.perf_counter() - start) * 1000.0)
        return statistics.median(samples)
    try:
        latency = timed(call)
        reference_latency = timed(lambda inputs, outs: reference.run(*inputs))
    except BaseException:
        return _evaluation("RUNTIME_ERROR", device, traceback.format_exc())
    performance = {"latency_ms": latency, "reference_latency_ms": reference_latency,
                   "speedup_factor": reference_latency / latency if latency > 0 else 0.0}
    return _evaluation("PASSED", device, build_log, correctness, performance)

_BUILT = {}

def built_solution(cache, solution):
    """(callable, log) from this worker's memory, else built (and remembered when it worked)."""
    key = solution["key"]
    if key not in _BUILT:
        function, log = build_solution(cache, key, solution["language"], solution.get("binding"),
                                       solution["entry_file"], solution["entry_symbol"],
                                       [(f["path"], f["content"]) for f in solution["sources"]])
        if function is None:
            return (None, log)
        _BUILT[key] = (function, log)
    return _BUILT[key]

def build_job(cache, solution):
    """(ok, log) of building a solution."""
    function, log = built_solution(cache, solution)
    return (function is not None, log)

def evaluate_job(reference, cache, solution, args, n_outputs, warmup, iterations, device, atol,
                 rtol, per_dtype):
    """One evaluation, as the trace's Evaluation JSON text."""
    import json
    function, log = built_solution(cache, solution)
    if function is None:
        result = _evaluation("COMPILE_ERROR", device, log)
    else:
        result = evaluate(reference, function, list(args), n_outputs, solution["dps"], warmup,
                          iterations, device, atol, rtol, per_dtype, log)
    return json.dumps(result)

def input_axes(args, axis_names):
    """Axis values read off the tensors actually passed (first use wins)."""
    bound = {}
    for value, names in zip(args, axis_names):
        if isinstance(value, torch.Tensor) and len(names) == value.dim():
            for name, size in zip(names, value.shape):
                bound.setdefault(name, int(size))
    return bound

def call(module, args, n_outputs):
    """("ok", [(kind, shape, dtype), ...]) or ("name", name, trace) or ("raise", text, trace)."""
    try:
        with torch.no_grad():
            result = module.run(*args)
    except NameError as error:
        if type(error) is NameError and getattr(error, "name", None):
            return ("name", error.name, _reference_trace(error))
        return ("raise", "%s: %s" % (type(error).__name__, error), _reference_trace(error))
    except BaseException as error:  # SystemExit and MemoryError too: the job reports them
        return ("raise", "%s: %s" % (type(error).__name__, error), _reference_trace(error))
    if isinstance(result, (tuple, list)):
        values = list(result)
    elif result is None and n_outputs == 0:
        values = []
    else:
        values = [result]
    described = []
    for value in values:
        if isinstance(value, torch.Tensor):
            described.append(("tensor", list(value.shape), str(value.dtype).replace("torch.", "")))
        else:
            described.append((type(value).__name__, None, None))
    return ("ok", described)
)PY";

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
    pyb::exec(k_sandbox_source, scope);
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
