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
        return (None, clip("Failed importing module '%s' from sources: %s: %s"
                % (module_name, type(error).__name__, error)), clip(_reference_trace(error)))
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

import fcntl, importlib, importlib.util, os, subprocess, sys, time

def _remove_stale_temporaries(directory):
    """Removes the `<name>.fib-<pid>` files below `directory` that a worker killed while writing
    sources left. Only called under the entry's lock, so no other worker is writing there."""
    for folder, _, names in os.walk(directory):
        for name in names:
            stem, dot_fib, pid = name.rpartition(".fib-")
            if stem and dot_fib and pid.isdigit():
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass

def _write_sources(directory, sources):
    _remove_stale_temporaries(directory)
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

# The built mark: written into a cache entry, last, by the build step that completed it. Its JSON
# names the library the build made ("" for Python sources).
BUILT_MARK = "built.json"

def _build_tvm_ffi(root, src, key, language, binding, sources):
    """Compiles a cpp/cuda solution of binding "tvm-ffi" (the default when none is given) with the
    tvm_ffi package of this Python, without loading it: (library path, log) or (None, log)."""
    if binding not in (None, "tvm-ffi"):
        return (None, "binding '%s' is not supported by fib: cpp and cuda solutions need binding "
                "\"tvm-ffi\" or \"torch\"" % binding)
    try:
        import tvm_ffi.cpp
    except ImportError as error:
        return (None, "error: binding \"tvm-ffi\" needs the Python package tvm_ffi "
                "(apache-tvm-ffi) in the worker's Python (%s, Python %s), which cannot import it "
                "(%s). Install apache-tvm-ffi for that Python, or give the solution binding "
                "\"torch\" (a PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) extension)."
                % (sys.executable or "python3", sys.version.split()[0], error))
    paths = [os.path.join(src, p) for p, _ in sources]
    cpp = [p for p in paths if p.endswith((".cpp", ".cc", ".cxx"))]
    cu = [p for p in paths if p.endswith(".cu")]
    ldflags = []
    if cu or language == "cuda":
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        ldflags = ["-L" + os.path.join(cuda_home, "lib64"), "-lcudart", "-lcuda"]
    build = os.path.join(root, "tvm-ffi-build")
    os.makedirs(build, exist_ok=True)
    try:
        library = tvm_ffi.cpp.build(name="fib_" + key[:16], cpp_files=cpp, cuda_files=cu,
                                    extra_include_paths=[src], extra_ldflags=ldflags,
                                    build_directory=build)
    except BaseException as error:
        return (None, "tvm-ffi build failed: %s" % error)
    return (str(library), "")

def _build_torch_extension(root, src, key, language, sources):
    """Compiles a cpp/cuda solution of binding "torch" (a PYBIND11_MODULE extension) with torch's
    extension builder, without importing it: (library path, log) or (None, log)."""
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
    name = "fib_" + key[:16]
    try:
        # The builder behind cpp_extension.load, which would import the library right after.
        cpp_extension._write_ninja_file_and_build_library(
            name=name, sources=cpp, extra_cflags=None, extra_cuda_cflags=None,
            extra_ldflags=extra, extra_include_paths=includes, build_directory=build,
            verbose=False, with_cuda=False)
    except BaseException as error:
        return (None, log + str(error))
    return (os.path.join(build, name + ".so"), log)

def build_solution(cache, key, language, binding, sources):
    """(True, log) or (False, log), a COMPILE_ERROR with the log: the solution's sources written
    into its cache entry and compiled there, the built mark written last. Nothing of the solution
    is imported or loaded here: this worker has the entry writable, and the worker that runs the
    solution has it read-only."""
    root = os.path.join(cache, "solutions", key)
    os.makedirs(root, exist_ok=True)
    # The lock lives in the entry: in the sandbox only the entry itself is writable.
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two fib processes build one solution once
        try:
            src = os.path.join(root, "src")
            _write_sources(src, sources)
            if language in ("python", "triton"):
                library, log = "", ""
            elif language in ("cpp", "cuda") and binding != "torch":
                library, log = _build_tvm_ffi(root, src, key, language, binding, sources)
            elif language in ("cpp", "cuda"):
                library, log = _build_torch_extension(root, src, key, language, sources)
            else:
                return (False, "language '%s' is not supported by fib" % language)
            if library is None:
                return (False, log)
            import json
            mark = os.path.join(root, BUILT_MARK)
            with open(mark + ".fib-%d" % os.getpid(), "w") as f:
                json.dump({"library": os.path.relpath(library, root) if library else ""}, f)
            os.replace(mark + ".fib-%d" % os.getpid(), mark)
            return (True, log)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

def load_solution(cache, key, language, binding, entry_file, entry_symbol):
    """(callable, "") or (None, why), a COMPILE_ERROR: the solution built by build_solution,
    imported from its cache entry (read-only here)."""
    import json
    root = os.path.join(cache, "solutions", key)
    try:
        with open(os.path.join(root, BUILT_MARK)) as f:
            library = json.load(f)["library"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        return (None, "the solution's build did not complete (%s)" % error)
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
            module.__path__ = [os.path.join(root, "src")]
            sys.modules[package] = module
        stem = entry_file[:-3] if entry_file.endswith(".py") else entry_file
        try:
            module = importlib.import_module(package + "." + stem.replace("/", "."))
        except BaseException:
            return (None, "Failed importing module '%s' from sources: %s"
                    % (stem, traceback.format_exc()))
        function = getattr(module, entry_symbol, None)
        if not callable(function):
            return (None, "Entry symbol '%s' not found in module '%s'" % (entry_symbol, stem))
        setup = getattr(module, "setup", None)
        if setup is not None:
            if not callable(setup):
                return (None, "'setup' in module '%s' is not a function" % stem)
            _SETUP[key] = setup
        return (function, "")
    path = os.path.join(root, library)
    if binding != "torch":
        try:
            import tvm_ffi
            module = tvm_ffi.load_module(path)
            function = getattr(module, entry_symbol)
        except BaseException as error:
            return (None, "tvm-ffi could not load the built library: %s" % error)
        if not callable(function):
            return (None, "Entry symbol '%s' not found in the tvm-ffi module" % entry_symbol)
        return (function, "")
    name = "fib_" + key[:16]
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException:
        return (None, "the built extension does not import: %s" % traceback.format_exc())
    function = getattr(module, entry_symbol, None)
    if not callable(function):
        return (None, "Entry symbol '%s' not found in the extension" % entry_symbol)
    return (function, "")

# What crosses to fib: text is clipped here (fib clips again), tensors go through files.
CLIP_BYTES = 64 * 1024

def clip(text, limit=CLIP_BYTES):
    """`text` cut to about `limit` characters: its head and its tail around a marker."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return "%s\n[... %d characters cut by fib-worker ...]\n%s" % (text[:half], len(text) - 2 * half,
                                                                  text[-half:])

def _as_list(result, n_outputs):
    if isinstance(result, (tuple, list)):
        return list(result)
    if result is None and n_outputs == 0:
        return []
    return [result]

# safetensors, written and read without the safetensors package (fib reads them with its own
# reader and compares the values itself).
_SAFETENSORS_DTYPES = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}
for _name, _code in (("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2")):
    if hasattr(torch, _name):
        _SAFETENSORS_DTYPES[getattr(torch, _name)] = _code
_TORCH_DTYPES = {code: dtype for dtype, code in _SAFETENSORS_DTYPES.items()}

def save_tensors(path, named):
    """Writes [(key, tensor), ...] to the safetensors file `path`."""
    import json
    header, chunks, offset = {}, [], 0
    for key, tensor in named:
        tensor = tensor.detach().contiguous().cpu()
        if tensor.dtype not in _SAFETENSORS_DTYPES:
            raise TypeError("output '%s' has dtype %s, which fib cannot compare" % (key, tensor.dtype))
        data = tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        header[key] = {"dtype": _SAFETENSORS_DTYPES[tensor.dtype], "shape": list(tensor.shape),
                       "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)

def load_tensors(path, device):
    """{key: tensor} of the safetensors file `path`, on `device`."""
    import json
    with open(path, "rb") as f:
        blob = f.read()
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + size])
    start, out = 8 + size, {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        dtype, shape = _TORCH_DTYPES[entry["dtype"]], entry["shape"]
        begin, end = entry["data_offsets"]
        if end > begin:
            raw = torch.frombuffer(bytearray(blob[start + begin:start + end]), dtype=torch.uint8)
            tensor = raw.view(dtype).reshape(shape)
        else:
            tensor = torch.empty(shape, dtype=dtype)
        out[key] = tensor.to(device)
    return out

# The timed calls. fib holds the clock that counts and treats this whole process as the
# solution's (docs/execution.md, "Trust model"): it chooses each call's fresh input values (the
# seed it sends when the call's preparation starts), and "done" must carry a commitment to the
# call's complete outputs, keyed by a secret fib sends with "go", which fib checks against the
# outputs kept after the call.
class Channel:
    def __init__(self, fd, job_id):
        self.fd, self.job_id, self.buffer = fd, job_id, b""

    def send(self, message):
        import json
        message = dict(message, id=self.job_id)
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]

    def wait_go(self):
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, 4096)
            if not chunk:
                raise EOFError("fib closed the channel")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

# The commitment cuts each output's bytes into pieces of this size, each hashed on its own (on
# several threads where the worker has the cores), so it costs less than one long SHA-256.
COMMIT_PIECE = 1 << 20
_commit_pool = None

def _commit_threads():
    """Hashing threads: half the CPUs this process may use (two SMT siblings hash little faster
    than one), at least one."""
    return max(len(os.sched_getaffinity(0)) // 2, 1)

def _output_bytes(tensors):
    out = []
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor):
            continue
        tensor = tensor.detach().contiguous().cpu()
        out.append(tensor.reshape(-1).view(torch.uint8).numpy() if tensor.numel() else b"")
    return out

def _fold(data):
    """The sum modulo 2**64 of every output's little-endian 64-bit words (its last one padded with
    zero bytes), as 8 little-endian bytes: it needs every byte, so no piece can be hashed before
    the last output byte is final."""
    import numpy
    total = 0
    for part in data:
        whole = len(part) // 8 * 8
        if whole:
            total += int(numpy.asarray(part[:whole]).view(numpy.uint64).sum(dtype=numpy.uint64))
        if len(part) > whole:
            total += int.from_bytes(bytes(part[whole:]), "little")
    return (total % (1 << 64)).to_bytes(8, "little")

def commitment(key, tensors):
    """The commitment to a call's outputs under `key` (32 hexadecimal digits): with head = the key's
    16 bytes then the fold of all outputs (_fold), SHA-256 of head, then for each tensor its byte
    length (8 bytes, little endian) and SHA-256(head + piece) of each of its COMMIT_PIECE pieces
    in order. What fib computes over the safetensors file of the kept call. It cannot be computed
    before the outputs are complete, and no part of it while they are being written: the fold
    comes first and needs them all, and every piece's hash needs the fold."""
    import hashlib
    global _commit_pool
    data = _output_bytes(tensors)
    head = bytes.fromhex(key) + _fold(data)
    pieces = [part[at:at + COMMIT_PIECE]
              for part in data for at in range(0, len(part), COMMIT_PIECE)]
    threads = _commit_threads()
    if threads > 1 and len(pieces) > 1:
        if _commit_pool is None:
            from concurrent.futures import ThreadPoolExecutor
            _commit_pool = ThreadPoolExecutor(threads)
        leaves = iter(_commit_pool.map(lambda piece: _leaf_of(head, piece), pieces))
    else:
        leaves = iter([_leaf_of(head, piece) for piece in pieces])
    digest = hashlib.sha256(head)
    for part in data:
        digest.update(len(part).to_bytes(8, "little"))
        for _ in range(0, len(part), COMMIT_PIECE):
            digest.update(next(leaves))
    return digest.hexdigest()

def _leaf_of(head, piece):
    import hashlib
    digest = hashlib.sha256(head)
    digest.update(piece)  # hashlib lets go of the GIL for large pieces
    return digest.digest()

def commitment_cost(device):
    """What this worker's commitment to a call's outputs costs on `device`, measured before any
    untrusted code runs: [[bytes, seconds], ...] for outputs of 1 byte, 64 KiB, 1 MiB and 4 MiB
    (fib goes on in a line beyond), each the best of five, each right after torch wrote the bytes
    (as a kernel leaves its outputs). The best, not the typical: fib subtracts this from each
    timed call, and no solution may commit faster than what fib subtracts (docs/execution.md,
    "Trust model"). The first call also starts the hashing threads."""
    out = []
    whole = torch.ones(4 << 20, dtype=torch.uint8, device=device)
    for size in (1, 1 << 16, 1 << 20, 4 << 20):
        tensor = whole[:size]
        best = None
        for _ in range(5):
            tensor.add_(1)
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            commitment("00" * 16, [tensor])
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        out.append([size, best])
    return out

def copy_bandwidth(device):
    """How fast this device moves memory, measured before any untrusted code runs: [[bytes,
    bytes per second], ...] for a copy of 64 KiB, 1 MiB, 16 MiB and 64 MiB (each byte read and
    written once, counted twice), the best of three each. fib's plausibility floor for a call
    (docs/execution.md) reads the figure of the smallest size that holds the call's data."""
    out = []
    sizes = (1 << 16, 1 << 20, 1 << 24, 1 << 26)
    whole_source = torch.ones(sizes[-1], dtype=torch.uint8, device=device)
    whole_target = torch.ones_like(whole_source)  # touched, so no page faults are timed
    for size in sizes:
        source, target = whole_source[:size], whole_target[:size]
        best = None
        for _ in range(3):
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            target.copy_(source)
            if device == "cuda":
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        out.append([size, 2 * size / best if best > 0 else 0.0])
    return out

def _last_level_cache_bytes():
    """The largest CPU cache of this machine in bytes, from /sys; 32 MiB when it does not say."""
    best = 0
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(root):
            try:
                with open(os.path.join(root, entry, "size")) as f:
                    text = f.read().strip()
            except OSError:
                continue
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            digits = text[:-1] if text[-1:] in "KMG" else text
            if digits.isdigit():
                best = max(best, int(digits) * scale)
    except OSError:
        pass
    return best or (32 << 20)

def _persisting_l2_reset(load=None):
    """The CUDA driver's cuCtxResetPersistingL2Cache (CUDA 11+), or None where the driver has
    none: L2 lines a kernel marked persisting (an access policy window) survive an ordinary
    flush, so a cold cache must also demote them to normal lines."""
    import ctypes
    try:
        return (load or ctypes.CDLL)("libcuda.so.1").cuCtxResetPersistingL2Cache
    except (OSError, AttributeError):
        return None

class _CacheFlush:
    """Evicts the caches between timed calls, outside the timed region: on CUDA by resetting
    the persisting L2 lines (`reset`, _persisting_l2_reset) and writing a buffer twice the size
    of the device's L2 cache (at least 64 MiB), on the CPU one twice the size of the last-level
    cache."""
    def __init__(self, device, reset=None):
        self.reset = reset
        if device == "cuda":
            l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()),
                         "L2_cache_size", 0) or (64 << 20)
            self.buffer = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
            self.reset = reset or _persisting_l2_reset()
        else:
            self.buffer = torch.empty(2 * _last_level_cache_bytes(), dtype=torch.uint8)
        self.value = 0

    def __call__(self):
        if self.reset is not None:
            self.reset()
        self.value = (self.value + 1) % 256
        self.buffer.fill_(self.value)

def _device_sync(device):
    """What waits for a call's work: on CUDA every stream of every GPU this worker sees
    (torch.cuda.synchronize is cudaDeviceSynchronize, all streams of one device), so work left
    on a side stream or another GPU is inside the timed call; nothing on the CPU."""
    if device != "cuda":
        return lambda: None
    devices = range(torch.cuda.device_count())
    def sync():
        for index in devices:
            torch.cuda.synchronize(index)
    return sync

class _FreshValues:
    """New values for the random inputs of each timed call, so that no call can be answered from
    a memo of an earlier one: `modes` maps an argument's position to "values" (its values in a
    new random order: the same distribution) or "rows" (its last dimension in a new random
    order: rows of probabilities still sum to 1). The order comes from the seed fib sends for
    the call, so the reference's worker derives the same inputs for it."""
    def __init__(self, modes):
        self.modes = modes

    def __call__(self, inputs, seed):
        generator = torch.Generator()
        generator.manual_seed(int(seed))
        out = list(inputs)
        for index, mode in sorted(self.modes.items()):
            tensor = out[index]
            if not isinstance(tensor, torch.Tensor) or tensor.numel() < 2:
                continue
            if mode == "rows":
                order = torch.randperm(tensor.shape[-1], generator=generator)
                out[index] = tensor.index_select(-1, order.to(tensor.device))
            else:
                order = torch.randperm(tensor.numel(), generator=generator)
                out[index] = tensor.reshape(-1)[order.to(tensor.device)].reshape(tensor.shape)
        return out

def _fresh_values(input_names, fresh_inputs):
    """The _FreshValues of the inputs fib named ({name: mode}), or None when it named none."""
    modes = {i: fresh_inputs[n] for i, n in enumerate(input_names) if n in (fresh_inputs or {})}
    return _FreshValues(modes) if modes else None

def timed(channel, run, prepare, warmup, iterations, device, keep=None, cold_cache=False,
          vary=None, split=False):
    """Runs `run(inputs, outs)` (a list of outputs) `warmup` times untimed, then `iterations`
    times under fib's clock. Each timed call: "prepare" (fib answers with the call's seed),
    its inputs made (with `vary`, _FreshValues, their random ones given new values from that
    seed) and the caches flushed (`cold_cache`, _CacheFlush), "ready" (fib answers "go" with the
    call's key and starts its clock), the call, the device synchronized, "done" with the
    commitment to its outputs (fib stops its clock), and, when fib answers that it keeps the
    call, `keep(index, result, inputs)` saves them; when fib's answer also says "stop", no call
    follows. With `split` (a solution with a setup()), `run(inputs, outs, mark)` calls `mark()`
    between its setup and its run: the device synchronized, "setup" said to fib, which takes the
    rest of the call as its kernel time."""
    import json
    sync = _device_sync(device)
    flush = _CacheFlush(device) if cold_cache else None
    def mark(index):
        def said():
            sync()
            channel.send({"timing": "setup", "iteration": index})
        return said
    with torch.no_grad():
        for _ in range(warmup):
            run(*prepare())
        sync()
        for index in range(max(iterations, 1)):
            channel.send({"timing": "prepare", "iteration": index})
            seed = json.loads(channel.wait_go()).get("seed")
            inputs, outs = prepare()
            if vary is not None and seed is not None:
                inputs = vary(inputs, seed)
            if flush is not None:
                flush()
            sync()
            channel.send({"timing": "ready", "iteration": index})
            key = json.loads(channel.wait_go())["key"]
            if device == "cuda":  # CUDA events on a GPU, a steady clock on the CPU
                begin = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                begin.record()
                result = run(inputs, outs, mark(index)) if split else run(inputs, outs)
                end.record()
                sync()
                milliseconds = begin.elapsed_time(end)
            else:
                start = time.perf_counter()
                result = run(inputs, outs, mark(index)) if split else run(inputs, outs)
                milliseconds = (time.perf_counter() - start) * 1000.0
            channel.send({"timing": "done", "iteration": index, "ms": milliseconds,
                          "commit": commitment(key, result)})
            answer = json.loads(channel.wait_go())
            if answer.get("keep") and keep is not None:
                keep(index, result, inputs)
            if answer.get("stop"):  # fib's adaptive stop: the median is known well enough
                break

def _forget_earlier_jobs(directory):
    """Removes the other job directories beside `directory` (this worker's scratch, in the
    sandbox): only the current job's files are kept."""
    import shutil
    parent, own = os.path.split(os.path.normpath(directory))
    for entry in os.listdir(parent):
        if entry.startswith("job-") and entry != own:
            shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)

def _fresh(args):
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in args]

def reference_outputs(reference, args, input_names, output_names, directory, device, warmup,
                      iterations, channel, cold_cache=False, fresh_inputs=None, keep_inputs=False):
    """The reference on `args`: inputs.safetensors and expected.safetensors in `directory`, then
    its timed calls, each kept call's outputs in timed_<i>.safetensors (with `keep_inputs` its
    inputs in timed_inputs_<i>.safetensors too): what the solutions' calls on the same seeds are
    compared with. JSON text: {"scalars": {...}} or {"reference_error": text}."""
    import json
    _forget_earlier_jobs(directory)
    try:
        with torch.no_grad():
            expected = _as_list(reference.run(*_fresh(args)), len(output_names))
        if len(expected) != len(output_names) or not all(
                isinstance(t, torch.Tensor) for t in expected):
            return json.dumps({"reference_error": "the reference returned %d values (%s) for %d "
                               "declared tensor outputs" % (len(expected), ", ".join(
                                   type(t).__name__ for t in expected), len(output_names))})
        save_tensors(os.path.join(directory, "inputs.safetensors"),
                     [(n, v) for n, v in zip(input_names, args) if isinstance(v, torch.Tensor)])
        save_tensors(os.path.join(directory, "expected.safetensors"), list(zip(output_names, expected)))
        scalars = {n: v for n, v in zip(input_names, args) if not isinstance(v, torch.Tensor)}
        def keep(index, result, inputs):
            save_tensors(os.path.join(directory, "timed_%d.safetensors" % index),
                         list(zip(output_names, result)))
            if keep_inputs:
                save_tensors(os.path.join(directory, "timed_inputs_%d.safetensors" % index),
                             [(n, v) for n, v in zip(input_names, inputs)
                              if isinstance(v, torch.Tensor)])
        timed(channel, lambda inputs, outs: _as_list(reference.run(*inputs), len(output_names)),
              lambda: (_fresh(args), None), warmup, iterations, device, keep,
              cold_cache=cold_cache, vary=_fresh_values(input_names, fresh_inputs))
    except BaseException as error:
        return json.dumps({"reference_error": clip("Traceback (most recent call last):\n"
                                                   + _reference_trace(error))})
    return json.dumps({"scalars": scalars})

def solution_outputs(cache, solution, directory, input_names, scalars, output_specs, device,
                     warmup, iterations, channel, perturbed=False, cold_cache=False,
                     fresh_inputs=None):
    """The solution on the inputs in directory/inputs.safetensors: got.safetensors (its values
    under "0", "1", ...), then its timed calls (those fib keeps saved as timed_<i>.safetensors).
    With `perturbed`, then once more on one fresh copy of the inputs, and again on the same
    tensors after the values of directory/perturbed.safetensors were copied into them (the same
    addresses, other values): that call's outputs go to perturbed_got.safetensors.
    JSON text: {"kinds": [...], "log": build log} or
    {"compile_error": log} or {"runtime_error": traceback}."""
    import json
    _forget_earlier_jobs(directory)
    function, log = built_solution(cache, solution)
    if function is None:
        return json.dumps({"compile_error": clip(log)})
    try:
        tensors = load_tensors(os.path.join(directory, "inputs.safetensors"), device)
        args = [tensors[n] if n in tensors else scalars[n] for n in input_names]
        dps = solution["dps"]
        setup = _SETUP.get(solution["key"])
        def prepare():
            outs = [torch.empty(shape, dtype=_TORCH_DTYPES[dtype], device=device)
                    for shape, dtype in output_specs] if dps else []
            return _fresh(args), outs
        def call(inputs, outs, mark=None):
            if setup is not None:
                result = _with_setup(setup, function)(list(inputs) + list(outs), mark)
            elif dps:
                function(*inputs, *outs)
                return outs
            else:
                result = function(*inputs)
            return outs if dps else _as_list(result, len(output_specs))
        with torch.no_grad():
            got = call(*prepare())
        if device == "cuda":
            torch.cuda.synchronize()
        kinds = ["tensor" if isinstance(v, torch.Tensor) else type(v).__name__ for v in got]
        save_tensors(os.path.join(directory, "got.safetensors"),
                     [(str(i), v) for i, v in enumerate(got) if isinstance(v, torch.Tensor)])
        def keep(index, result, inputs):
            save_tensors(os.path.join(directory, "timed_%d.safetensors" % index),
                         [(str(i), v) for i, v in enumerate(result) if isinstance(v, torch.Tensor)])
        timed(channel, call, prepare, warmup, iterations, device, keep, cold_cache=cold_cache,
              vary=_fresh_values(input_names, fresh_inputs), split=setup is not None)
        if perturbed:
            other = load_tensors(os.path.join(directory, "perturbed.safetensors"), device)
            inputs, outs = prepare()
            with torch.no_grad():
                call(inputs, outs)
                for i, name in enumerate(input_names):
                    if name in other and isinstance(inputs[i], torch.Tensor):
                        inputs[i].copy_(other[name])
                again = call(inputs, prepare()[1])
            if device == "cuda":
                torch.cuda.synchronize()
            save_tensors(os.path.join(directory, "perturbed_got.safetensors"),
                         [(str(i), v) for i, v in enumerate(again) if isinstance(v, torch.Tensor)])
    except BaseException:
        return json.dumps({"runtime_error": clip(log + traceback.format_exc())})
    return json.dumps({"kinds": kinds, "log": clip(log)})

def _count_samples(samples, rows, repeat, vocab, counts, out_of_range):
    """Adds one call's samples to `counts` ([rows, vocab]) and `out_of_range` ([rows]): the
    call's batch is the workload's `rows` repeated `repeat` times, each padded row's samples in
    row-major order. Returns the samples per row the call drew."""
    flat = samples.reshape(rows * repeat, -1).to(torch.int64)
    row = (torch.arange(rows * repeat, device=flat.device) % rows).unsqueeze(1).expand_as(flat)
    valid = (flat >= 0) & (flat < vocab)
    counts += torch.bincount((row * vocab + flat)[valid], minlength=rows * vocab).view(rows, vocab)
    out_of_range += torch.bincount(row[~valid], minlength=rows)
    return flat.shape[1] * repeat

def solution_samples(cache, solution, directory, input_names, scalars, output_specs, device,
                     sampling):
    """The sampling evaluator's calls of the solution on the inputs in
    directory/inputs.safetensors (docs/run.md, "Sampling kernels"): sampling["validation_calls"]
    calls whose samples (the output at sampling["samples_output"]) are stacked into
    validation.safetensors ("samples"), then sampling["distribution_calls"] calls on the inputs
    named in sampling["batched_inputs"] repeated sampling["repeat"] times along their first
    dimension (outputs of sampling["padded_output_specs"]), whose samples are counted per row of
    the workload into counts.safetensors ("counts", "out_of_range", "drawn", and
    "repeated_calls": the calls whose samples equal the previous call's). The global torch
    generator is seeded first, so that a run can be repeated. JSON text: {"drawn": n} or
    {"compile_error": log} or {"runtime_error": traceback}."""
    import json
    _forget_earlier_jobs(directory)
    function, log = built_solution(cache, solution)
    if function is None:
        return json.dumps({"compile_error": clip(log)})
    try:
        torch.manual_seed(0x5A4D)
        tensors = load_tensors(os.path.join(directory, "inputs.safetensors"), device)
        args = [tensors[n] if n in tensors else scalars[n] for n in input_names]
        dps, index = solution["dps"], sampling["samples_output"]
        def call(inputs, specs):
            outs = [torch.empty(shape, dtype=_TORCH_DTYPES[dtype], device=device)
                    for shape, dtype in specs] if dps else []
            with torch.no_grad():
                if dps:
                    function(*inputs, *outs)
                    result = outs
                else:
                    result = _as_list(function(*inputs), len(specs))
            if index >= len(result) or not isinstance(result[index], torch.Tensor):
                raise TypeError("the solution returned no tensor of samples at output %d" % index)
            return result[index]
        kept = [call(_fresh(args), output_specs).to(torch.int64)
                for _ in range(sampling["validation_calls"])]
        save_tensors(os.path.join(directory, "validation.safetensors"),
                     [("samples", torch.stack(kept) if kept else torch.empty(0, dtype=torch.int64))])
        rows, vocab, repeat = sampling["rows"], sampling["vocab"], sampling["repeat"]
        batched = set(sampling["batched_inputs"])
        padded = [v.repeat(repeat, *([1] * (v.dim() - 1)))
                  if n in batched and isinstance(v, torch.Tensor) and v.dim() > 0 and repeat > 1
                  else v for n, v in zip(input_names, args)]
        counts = torch.zeros((rows, vocab), dtype=torch.int64, device=device)
        out_of_range = torch.zeros(rows, dtype=torch.int64, device=device)
        drawn, repeated, previous = 0, 0, None
        for _ in range(sampling["distribution_calls"]):
            samples = call(_fresh(padded), sampling["padded_output_specs"])
            if samples.numel() == 0 or samples.numel() % (rows * repeat) != 0:
                raise ValueError("the solution returned %d samples for a batch of %d rows"
                                 % (samples.numel(), rows * repeat))
            if previous is not None and torch.equal(samples, previous):
                repeated += 1
            previous = samples.clone()
            drawn += _count_samples(samples, rows, repeat, vocab, counts, out_of_range)
        save_tensors(os.path.join(directory, "counts.safetensors"),
                     [("counts", counts), ("out_of_range", out_of_range),
                      ("drawn", torch.tensor([drawn], dtype=torch.int64)),
                      ("repeated_calls", torch.tensor([repeated], dtype=torch.int64))])
    except BaseException:
        return json.dumps({"runtime_error": clip(log + traceback.format_exc())})
    return json.dumps({"drawn": drawn})

_BUILT = {}
_SETUP = {}  # a Python solution's optional setup(), by solution key

def _with_setup(setup, function):
    """run(*inputs) as a solution with a setup() is called: its state (a dict, or None) computed
    from the same inputs, then passed to run as keywords; `mark` between the two when given."""
    def call(inputs, mark=None):
        state = setup(*inputs)
        if state is None:
            state = {}
        if not isinstance(state, dict):
            raise TypeError("setup() returned %s, not a dict of keyword arguments for run()"
                            % type(state).__name__)
        if mark is not None:
            mark()
        return function(*inputs, **state)
    return call

def built_solution(cache, solution):
    """(callable, log) from this worker's memory, else loaded (and remembered when it worked)."""
    key = solution["key"]
    if key not in _BUILT:
        function, log = load_solution(cache, key, solution["language"], solution.get("binding"),
                                      solution["entry_file"], solution["entry_symbol"])
        if function is None:
            return (None, log)
        _BUILT[key] = (function, log)
    return _BUILT[key]

def build_job(cache, solution):
    """(ok, log) of building a solution (its sources written and compiled, nothing loaded)."""
    return build_solution(cache, solution["key"], solution["language"], solution.get("binding"),
                          [(f["path"], f["content"]) for f in solution["sources"]])

def load_job(cache, solution):
    """(ok, log) of loading a built solution into this worker."""
    function, log = built_solution(cache, solution)
    return (function is not None, log)

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
            return ("name", clip(error.name), clip(_reference_trace(error)))
        return ("raise", clip("%s: %s" % (type(error).__name__, error)),
                clip(_reference_trace(error)))
    except BaseException as error:  # SystemExit and MemoryError too: the job reports them
        return ("raise", clip("%s: %s" % (type(error).__name__, error)),
                clip(_reference_trace(error)))
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
