# The worker's Python side (fib-worker, src/worker/sandbox.cpp): building and calling references,
# building and evaluating solutions. Each reference gets its own module object (not registered
# in sys.modules), so references never see each other's globals.
#
# Embedded into fib-worker at build time (cmake/FibEmbed.cmake) and run in a fresh namespace; it
# is also importable as a plain module, which is how tests/python/test_sandbox.py tests it.
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

# `fib run --tolerance-table`: dtype -> (atol, rtol, the share of values that must be close).
_TOLERANCES = {
    "float32": (1e-5, 1e-5, 1.0), "float16": (1e-3, 1e-3, 1.0), "bfloat16": (8e-3, 1e-2, 1.0),
    "float8_e4m3fn": (1e-1, 2e-1, 0.85), "float8_e5m2": (1e-1, 2e-1, 0.85),
}

def _tolerance(dtype, atol, rtol, per_dtype):
    """(atol, rtol, required hit ratio) for an output of `dtype` ("bfloat16", ...)."""
    return _TOLERANCES.get(dtype, (atol, rtol, 1.0)) if per_dtype else (atol, rtol, 1.0)

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

def _compare(got, expected, atol, rtol, per_dtype):
    """The solution's outputs against the reference's: (status, log, correctness), status None
    when every output has the shape, dtype and values (within tolerance) expected."""
    if len(got) != len(expected):
        return ("INCORRECT_SHAPE", "returned %d outputs, expected %d"
                % (len(got), len(expected)), None)
    worst_abs, worst_rel, numerical = 0.0, 0.0, []
    for index, (g, e) in enumerate(zip(got, expected)):
        if not isinstance(g, torch.Tensor) or tuple(g.shape) != tuple(e.shape):
            return ("INCORRECT_SHAPE", "output %d: shape %s, expected %s"
                    % (index, tuple(getattr(g, "shape", ())), tuple(e.shape)), None)
        if g.dtype != e.dtype:
            return ("INCORRECT_DTYPE", "output %d: dtype %s, expected %s"
                    % (index, g.dtype, e.dtype), None)
        a, b = g.detach().double().cpu(), e.detach().double().cpu()
        diff = (a - b).abs()
        if diff.numel():
            worst_abs = max(worst_abs, float(diff.max()))
            worst_rel = max(worst_rel, float((diff / b.abs().clamp_min(1e-12)).max()))
        dtype = str(e.dtype).replace("torch.", "")
        tol_abs, tol_rel, ratio = _tolerance(dtype, atol, rtol, per_dtype)
        close = torch.isclose(a, b, atol=tol_abs, rtol=tol_rel)
        hit = float(close.double().mean()) if close.numel() else 1.0
        if hit < ratio or (ratio == 1.0 and not bool(close.all())):
            numerical.append("output %d: %.1f%% of the values within atol=%g, rtol=%g"
                             % (index, 100 * hit, tol_abs, tol_rel))
    correctness = {"max_relative_error": worst_rel, "max_absolute_error": worst_abs, "extra": None}
    if numerical:
        return ("INCORRECT_NUMERICAL", "\n".join(numerical), correctness)
    return (None, "", correctness)

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
    status, log, correctness = _compare(got, expected, atol, rtol, per_dtype)
    if status is not None:
        return _evaluation(status, device, log, correctness)
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
