#include "fib/python/lazy_runtime.hpp"

#include "module_abi.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>

// Defined by src/python/CMakeLists.txt and cmake/FibInstall.cmake:
//   FIB_PYTHON_LIBRARY               the libpython the build linked the module with (real path)
//   FIB_PYTHON_VERSION               its PY_VERSION ("3.11.2")
//   FIB_PYTHON_MODULE_FROM_BINDIR    where `cmake --install` puts the module relative to fib

namespace fib::python {
namespace {

Diagnostic unavailable(std::string message, std::string hint = {}) {
  Diagnostic d = make_diagnostic(codes::k_python_unavailable, std::move(message));
  d.hint = std::move(hint);
  return d;
}

bool environment_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

// "device:inode:size:modified:changed" of `path`, "" when it cannot be stat()ed.
std::string fingerprint(const std::filesystem::path& path) {
  const std::optional<FileStatus> status = file_status(path);
  if (!status) {
    return {};
  }
  return fmt::format("{}:{}:{}:{}:{}", status->device, status->inode, status->size,
                     status->modified_ns, status->changed_ns);
}

std::string dl_error() {
  const char* error = ::dlerror();
  return error != nullptr ? std::string(error) : std::string("unknown error");
}

} // namespace

struct LazyRuntime::Loaded {
  const detail::ModuleFunctions* functions = nullptr;
  PythonFrontend* runtime = nullptr;

  Loaded() = default;
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
  ~Loaded() {
    if (runtime != nullptr) {
      functions->destroy(runtime);
    }
  }
};

std::optional<std::filesystem::path> find_python_module() {
  if (const char* configured = std::getenv("FIB_PYTHON_MODULE");
      configured != nullptr && *configured != '\0') {
    return std::filesystem::path(configured);
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return std::nullopt;
  }
  const std::filesystem::path directory = self.parent_path();
  for (const std::filesystem::path& candidate :
       {(directory / FIB_PYTHON_MODULE_FROM_BINDIR).lexically_normal(),
        directory / "fib-python.so"}) {
    if (::access(candidate.c_str(), R_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

LazyRuntime::LazyRuntime(LazyRuntimeOptions options) : m_options(std::move(options)) {
  if (m_options.module.empty()) {
    if (auto found = find_python_module()) {
      m_options.module = std::move(*found);
    }
  }
}

LazyRuntime::~LazyRuntime() = default;

std::optional<std::filesystem::path> LazyRuntime::pinned_python_library() {
  const std::filesystem::path library = FIB_PYTHON_LIBRARY;
  if (library.empty() || !library.is_absolute() || environment_set("LD_LIBRARY_PATH") ||
      environment_set("LD_PRELOAD")) {
    return std::nullopt;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(library, ec)) {
    return std::nullopt;
  }
  return library;
}

bool LazyRuntime::loaded() const {
  return m_loaded != nullptr;
}

std::string LazyRuntime::identity() const {
  if (m_identity) {
    return *m_identity;
  }
  // The module's code answers too (the helper is in it), and a rebuild of the module alone
  // leaves fib's own build identity as it was.
  const std::string module_print = m_options.module.empty() ? "" : fingerprint(m_options.module);
  if (module_print.empty()) {
    m_identity = std::string(); // no module: nothing answers, nothing is cached
    return *m_identity;
  }
  if (const auto library = pinned_python_library()) {
    if (std::string library_print = fingerprint(*library); !library_print.empty()) {
      m_identity = fmt::format("CPython {} library {} {} module {}", FIB_PYTHON_VERSION,
                               library->string(), library_print, module_print);
      m_library_fingerprint = std::move(library_print);
      return *m_identity;
    }
  }
  // Nothing pinned: what the loaded interpreter says (the module loads now).
  auto* self = const_cast<LazyRuntime*>(this);
  const Expected<PythonFrontend*> runtime = self->ensure_loaded();
  m_identity =
      runtime ? fmt::format("{} module {}", (*runtime)->identity(), module_print) : std::string();
  return *m_identity;
}

Expected<PythonFrontend*> LazyRuntime::ensure_loaded() {
  if (m_loaded) {
    return m_loaded->runtime;
  }
  if (m_load_error) {
    return unexpected(*m_load_error);
  }
  const auto fail = [&](Diagnostic d) -> Expected<PythonFrontend*> {
    m_load_error = d;
    return unexpected(std::move(d));
  };
  const char* const hint = "reinstall fib (its Python module is installed with it), or set "
                           "FIB_PYTHON_MODULE to fib's fib-python.so";
  if (m_options.module.empty()) {
    return fail(unavailable(
        "cannot start the embedded Python: fib's Python module (fib-python.so) is not installed "
        "next to fib",
        hint));
  }
  // The pinned library first, by its path: the module's dependency on libpython is then that
  // library, already loaded. Global, as the module: the standard library's extension modules
  // take the interpreter's symbols from the global scope.
  if (const auto library = pinned_python_library()) {
    if (::dlopen(library->c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      return fail(unavailable(fmt::format("cannot start the embedded Python: cannot load {}: {}",
                                          library->string(), dl_error())));
    }
    if (!m_library_fingerprint.empty() && fingerprint(*library) != m_library_fingerprint) {
      return fail(
          unavailable(fmt::format("cannot start the embedded Python: {} changed while fib ran",
                                  library->string()),
                      "run fib again"));
    }
  } else if (!m_library_fingerprint.empty()) {
    // The identity named a pinned library that is no longer the one to load.
    return fail(unavailable("cannot start the embedded Python: the Python library fib uses "
                            "changed while fib ran",
                            "run fib again"));
  }
  void* module = ::dlopen(m_options.module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (module == nullptr) {
    return fail(unavailable(fmt::format("cannot start the embedded Python: cannot load {}: {}",
                                        m_options.module.string(), dl_error()),
                            hint));
  }
  void* entry = ::dlsym(module, detail::k_module_entry);
  const detail::ModuleFunctions* functions =
      entry != nullptr ? reinterpret_cast<detail::ModuleEntry>(entry)() : nullptr;
  if (functions == nullptr || functions->abi != detail::k_module_abi) {
    return fail(unavailable(
        fmt::format("cannot start the embedded Python: {} is not this fib's Python module",
                    m_options.module.string()),
        hint));
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->functions = functions;
  loaded->runtime = functions->create(m_options.runtime);
  m_loaded = std::move(loaded);
  return m_loaded->runtime;
}

Expected<ReferenceAnalysis> LazyRuntime::analyze_reference(std::string_view source) {
  FIB_TRY_ASSIGN(PythonFrontend* const runtime, ensure_loaded());
  return runtime->analyze_reference(source);
}

Expected<std::optional<PythonSyntaxError>> LazyRuntime::check_expression(std::string_view source) {
  FIB_TRY_ASSIGN(PythonFrontend* const runtime, ensure_loaded());
  return runtime->check_expression(source);
}

Expected<SourceStructure> LazyRuntime::analyze_structure(std::string_view source) {
  FIB_TRY_ASSIGN(PythonFrontend* const runtime, ensure_loaded());
  return runtime->analyze_structure(source);
}

Expected<HelperResolution> LazyRuntime::resolve_helpers(const HelperQuery& query) {
  FIB_TRY_ASSIGN(PythonFrontend* const runtime, ensure_loaded());
  return runtime->resolve_helpers(query);
}

void LazyRuntime::prepare_fork() {
  if (m_loaded) {
    m_loaded->runtime->prepare_fork();
  }
}

void LazyRuntime::after_fork(ForkSide side) {
  if (m_loaded) {
    m_loaded->runtime->after_fork(side);
  }
}

} // namespace fib::python
