#pragma once
// Shared helpers for fib's GoogleTest binaries (fib_core_tests and fib_unit_tests).

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/python/runtime.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fib::testing {

// The one embedded-Python runtime of the test binary, owned by its custom gtest main
// (support/python_main.cpp). Only fib_unit_tests, the Python binary, defines it: a test that calls
// it is listed under PYTHON in its layer's CMakeLists (in fib_core_tests it would not link).
python::Runtime& python();

// Parses `text` as a document named `name` (no file is written). Aborts the test on a syntax error.
JsonDocument parse_or_die(std::string_view text, std::string_view name = "test.json");

// (code, pointer) pairs of `list`, in order: what tests assert on.
std::vector<std::pair<std::string, std::string>> code_pointers(const DiagnosticList& list);

// Whether `list` holds a diagnostic with `code` at `pointer`.
bool has(const DiagnosticList& list, std::string_view code, std::string_view pointer);

// Every diagnostic of `list` on its own line (severity, code, pointer, message, hint), for
// failure messages.
std::string describe(const DiagnosticList& list);

// Codes of error-severity diagnostics only.
std::vector<std::string> error_codes(const DiagnosticList& list);

// ../shared/corpus seen from the source tree, or an empty path when absent (tests then skip).
std::filesystem::path corpus_dir();

// The whole content of `file` ("" when it cannot be read).
std::string read_file(const std::filesystem::path& file);

// Every entry below `root` (symbolic links listed, not followed), relative, generic form, sorted.
std::vector<std::string> tree(const std::filesystem::path& root);

// Runs `action` in a forked child with FIB_FAULT_INJECTION=kill-before-rename, so that its first
// atomic write dies after the temporary file is complete and before the rename. True when the
// child died of SIGKILL (the fault fired).
bool dies_in_an_atomic_write(const std::function<void()>& action);

// Runs `action` in a forked child with FIB_FAULT_INJECTION=stop-before-rename, calls `inspect`
// while the child's first atomic write is stopped between its complete temporary and the rename,
// then kills the child. False when the child did not stop there.
bool inspect_a_stopped_atomic_write(const std::function<void()>& action,
                                    const std::function<void()>& inspect);

// The entries below `root` whose name is an atomic write's temporary (is_atomic_write_temporary),
// relative, generic form, sorted.
std::vector<std::string> temporaries_below(const std::filesystem::path& root);

// While it lives, writes past `bytes` in any file of the process fail with EFBIG (RLIMIT_FSIZE,
// with SIGXFSZ ignored); the limit and the signal's handler are restored when it goes.
class FileSizeLimit {
public:
  explicit FileSizeLimit(std::uint64_t bytes);
  ~FileSizeLimit();
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

private:
  std::uint64_t m_saved_soft = 0;
  void (*m_saved_handler)(int) = nullptr;
};

// Sets an environment variable (unsets it for a null `value`) for the life of the object, then
// restores what it was.
class ScopedVariable {
public:
  ScopedVariable(const char* name, const char* value);
  ~ScopedVariable();
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
  const char* m_name;
  std::optional<std::string> m_old;
};

// A fresh directory under the system temp dir, removed on destruction unless the test failed.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }
  // Writes `content` to path()/relative, creating parent directories; returns the full path.
  std::filesystem::path write(const std::filesystem::path& relative,
                              std::string_view content) const;

private:
  std::filesystem::path m_path;
};

enum class Restriction {
  unlistable, // mode 000: it cannot be listed (nor opened, nor written)
  read_only,  // mode 0555: it can be listed, but nothing can be created in it
};

// Restricts `directory` for this process while it lives: its mode, and, when the process runs as
// root (which ignores modes), without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH in the calling
// thread's effective set (threads started meanwhile inherit that). `works()` is false when the
// restriction does not hold anyway: the test should GTEST_SKIP then. The mode (0755) and the
// capabilities come back on destruction.
class RestrictedDirectory {
public:
  RestrictedDirectory(std::filesystem::path directory, Restriction restriction);
  ~RestrictedDirectory();
  RestrictedDirectory(const RestrictedDirectory&) = delete;
  RestrictedDirectory& operator=(const RestrictedDirectory&) = delete;
  bool works() const { return m_works; }

private:
  std::filesystem::path m_directory;
  bool m_capabilities_dropped = false;
  bool m_works = false;
};

} // namespace fib::testing
