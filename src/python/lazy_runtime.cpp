#include "fib/python/lazy_runtime.hpp"

#include "module_abi.hpp"
#include "unavailable.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/file_fingerprint.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <system_error>

// Defined by src/python/CMakeLists.txt and cmake/FibInstall.cmake:
//   FIB_PYTHON_LIBRARY               the libpython the build linked the module with (real path)
//   FIB_PYTHON_VERSION               its Python version ("3.11.2")
//   FIB_PYTHON_MODULE_TOKEN          this build's token (module_abi.hpp)
//   FIB_PYTHON_MODULE_FROM_BINDIR    where `cmake --install` puts the module relative to fib

namespace fib::python {
namespace {

using detail::unavailable;

// The stat_fingerprint of `path`, "" when it cannot be stat()ed.
std::string fingerprint(const std::filesystem::path& path) {
  const std::optional<FileStatus> status = file_status(path);
  return status ? stat_fingerprint(*status) : std::string();
}

// Whether two paths name the same file (device and inode).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  const std::optional<FileStatus> x = file_status(a);
  const std::optional<FileStatus> y = file_status(b);
  return x && y && x->device == y->device && x->inode == y->inode;
}

std::string dl_error() {
  const char* error = ::dlerror();
  return error != nullptr ? std::string(error) : std::string("unknown error");
}

constexpr const char* k_module_hint = "reinstall fib (its Python module is installed with it), or "
                                      "set FIB_PYTHON_MODULE to this fib's fib-python.so";

} // namespace

struct LazyRuntime::Loaded {
  const detail::ModuleFunctions* functions = nullptr;
  PythonFrontend* runtime = nullptr;
  std::filesystem::path library; // the libpython the module's calls go to
  std::string library_print;     // its fingerprint, taken when it was loaded

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
  if (!m_options.module.empty()) {
    // dlopen() searches the library path for a name without a slash; fib means the file.
    std::error_code ec;
    if (auto absolute = std::filesystem::absolute(m_options.module, ec); !ec) {
      m_options.module = std::move(absolute);
    }
  }
}

LazyRuntime::~LazyRuntime() = default;

std::optional<std::filesystem::path> LazyRuntime::pinned_python_library() {
  const std::filesystem::path library = FIB_PYTHON_LIBRARY;
  const char* preload = std::getenv("LD_PRELOAD");
  if (library.empty() || !library.is_absolute() || (preload != nullptr && *preload != '\0')) {
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

void LazyRuntime::take_prints() const {
  if (m_prints) {
    return;
  }
  Prints prints;
  prints.module = m_options.module.empty() ? "" : fingerprint(m_options.module);
  if (const auto library = pinned_python_library()) {
    prints.library_path = *library;
    prints.library = fingerprint(*library);
  }
  m_prints = std::move(prints);
}

std::string LazyRuntime::identity() const {
  if (m_identity) {
    return *m_identity;
  }
  take_prints();
  if (m_prints->module.empty()) {
    m_identity = std::string(); // no module: nothing answers, nothing is cached
  } else if (!m_prints->library.empty()) {
    // Pinned: known from the files alone (a load compares them again).
    m_identity = fmt::format("CPython {} library {} {} module {}", FIB_PYTHON_VERSION,
                             m_prints->library_path.string(), m_prints->library, m_prints->module);
  } else if (const Expected<PythonFrontend*> runtime =
                 const_cast<LazyRuntime*>(this)->ensure_loaded();
             runtime) {
    // What the loaded interpreter says (the module loads now, if it has not).
    m_identity = fmt::format("{} library {} {} module {}", (*runtime)->identity(),
                             m_loaded->library.string(), m_loaded->library_print, m_prints->module);
  } else {
    m_identity = std::string();
  }
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
  if (m_options.module.empty()) {
    return fail(unavailable(
        "cannot start the embedded Python: fib's Python module (fib-python.so) is not installed "
        "next to fib",
        k_module_hint));
  }
  // The files as the identity names them (or will): compared again once they are loaded.
  take_prints();
  const Prints& prints = *m_prints;
  // The pinned library first, by its path: the module's dependency on libpython (by its soname)
  // is then that library, already loaded. Global, as the module: the standard library's
  // extension modules take the interpreter's symbols from the global scope.
  if (!prints.library_path.empty() &&
      ::dlopen(prints.library_path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    return fail(unavailable(fmt::format("cannot start the embedded Python: cannot load {}: {}",
                                        prints.library_path.string(), dl_error())));
  }
  void* module = ::dlopen(m_options.module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (module == nullptr) {
    return fail(unavailable(fmt::format("cannot start the embedded Python: cannot load {}: {}",
                                        m_options.module.string(), dl_error()),
                            k_module_hint));
  }
  void* entry = ::dlsym(module, detail::k_module_entry);
  const detail::ModuleFunctions* functions =
      entry != nullptr ? reinterpret_cast<detail::ModuleEntry>(entry)() : nullptr;
  if (functions == nullptr || functions->abi != detail::k_module_abi ||
      functions->build_token == nullptr ||
      std::strcmp(functions->build_token, FIB_PYTHON_MODULE_TOKEN) != 0) {
    return fail(unavailable(
        fmt::format("cannot start the embedded Python: {} is not this fib's Python module",
                    m_options.module.string()),
        k_module_hint));
  }
  const std::filesystem::path library = functions->library_path();
  if (!prints.library_path.empty() && !same_file(library, prints.library_path)) {
    return fail(unavailable(
        fmt::format("cannot start the embedded Python: {} runs on {}, not on {}",
                    m_options.module.string(), library.string(), prints.library_path.string()),
        k_module_hint));
  }
  // A file replaced between the identity and the load would answer under another's name.
  if (fingerprint(m_options.module) != prints.module ||
      (!prints.library_path.empty() && fingerprint(prints.library_path) != prints.library)) {
    return fail(unavailable("cannot start the embedded Python: its files changed while fib ran",
                            "run fib again"));
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->functions = functions;
  loaded->library = library;
  loaded->library_print = fingerprint(library);
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
