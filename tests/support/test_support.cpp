#include "test_support.hpp"

#include <fib/util/atomic_file.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fib::testing {

JsonDocument parse_or_die(std::string_view text, std::string_view name) {
  DiagnosticList sink;
  auto doc = parse_json(text, std::filesystem::path(name), sink);
  if (!doc) {
    ADD_FAILURE() << "test JSON does not parse: " << doc.error().message;
    return JsonDocument{};
  }
  return std::move(doc).value();
}

std::vector<std::pair<std::string, std::string>> code_pointers(const DiagnosticList& list) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Diagnostic& d : list.items()) {
    out.emplace_back(d.code, d.pointer);
  }
  return out;
}

bool has(const DiagnosticList& list, std::string_view code, std::string_view pointer) {
  for (const Diagnostic& d : list.items()) {
    if (d.code == code && d.pointer == pointer) {
      return true;
    }
  }
  return false;
}

std::string describe(const DiagnosticList& list) {
  std::string out;
  for (const Diagnostic& d : list.items()) {
    out += std::string(to_string(d.severity)) + " " + d.code + " at '" + d.pointer +
           "': " + d.message + " [hint: " + d.hint + "]\n";
  }
  return out;
}

std::vector<std::string> error_codes(const DiagnosticList& list) {
  std::vector<std::string> out;
  for (const Diagnostic& d : list.items()) {
    if (d.severity == Severity::error) {
      out.push_back(d.code);
    }
  }
  return out;
}

std::filesystem::path corpus_dir() {
  const std::filesystem::path dir =
      std::filesystem::path(FIB_SOURCE_DIR) / ".." / "shared" / "corpus";
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir.lexically_normal() : std::filesystem::path{};
}

ScopedVariable::ScopedVariable(const char* name, const char* value) : m_name(name) {
  if (const char* old = std::getenv(name)) {
    m_old = old;
  }
  if (value != nullptr) {
    ::setenv(name, value, 1);
  } else {
    ::unsetenv(name);
  }
}

ScopedVariable::~ScopedVariable() {
  if (m_old) {
    ::setenv(m_name, m_old->c_str(), 1);
  } else {
    ::unsetenv(m_name);
  }
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  m_path = std::filesystem::temp_directory_path() /
           ("fib-test-" + std::to_string(::getpid()) + "-" + std::to_string(stamp) + "-" +
            std::to_string(counter++));
  std::filesystem::create_directories(m_path);
}

TempDir::~TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const bool failed = info != nullptr && info->result() != nullptr && info->result()->Failed();
  if (!failed) {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool dies_in_an_atomic_write(const std::function<void()>& action) {
  const pid_t child = ::fork();
  if (child < 0) {
    return false;
  }
  if (child == 0) {
    ::setenv(std::string(k_fault_injection_variable).c_str(), "kill-before-rename", 1);
    action();
    ::_exit(0); // not reached when the fault fires
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) {
    return false;
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

bool inspect_a_stopped_atomic_write(const std::function<void()>& action,
                                    const std::function<void()>& inspect) {
  const pid_t child = ::fork();
  if (child < 0) {
    return false;
  }
  if (child == 0) {
    ::setenv(std::string(k_fault_injection_variable).c_str(), "stop-before-rename", 1);
    action();
    ::_exit(0); // the fault stops it first; the kill below ends it
  }
  int status = 0;
  const bool stopped = ::waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status);
  if (stopped) {
    inspect();
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return stopped;
}

FileSizeLimit::FileSizeLimit(std::uint64_t bytes) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0) {
    throw std::runtime_error("getrlimit(RLIMIT_FSIZE) failed");
  }
  m_saved_soft = limit.rlim_cur;
  m_saved_handler = std::signal(SIGXFSZ, SIG_IGN);
  limit.rlim_cur = bytes;
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
    std::signal(SIGXFSZ, m_saved_handler);
    throw std::runtime_error("setrlimit(RLIMIT_FSIZE) failed");
  }
}

FileSizeLimit::~FileSizeLimit() {
  struct rlimit limit {};
  ::getrlimit(RLIMIT_FSIZE, &limit);
  limit.rlim_cur = m_saved_soft;
  ::setrlimit(RLIMIT_FSIZE, &limit);
  std::signal(SIGXFSZ, m_saved_handler);
}

std::vector<std::string> temporaries_below(const std::filesystem::path& root) {
  std::vector<std::string> found;
  for (const auto& entry : tree(root)) {
    if (is_atomic_write_temporary(std::filesystem::path(entry).filename().string())) {
      found.push_back(entry);
    }
  }
  return found;
}

std::vector<std::string> tree(const std::filesystem::path& root) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    names.push_back(entry.path().lexically_relative(root).generic_string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path TempDir::write(const std::filesystem::path& relative,
                                     std::string_view content) const {
  const auto full = m_path / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  return full;
}

namespace {

// Sets (or clears) CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH in the calling thread's effective
// set; false when the kernel refuses.
bool set_dac_capabilities(bool effective) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) {
    return false;
  }
  const unsigned mask = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
  data[0].effective =
      effective ? (data[0].effective | (data[0].permitted & mask)) : (data[0].effective & ~mask);
  return syscall(SYS_capset, &header, data) == 0;
}

bool can_list(const std::filesystem::path& directory) {
  DIR* handle = opendir(directory.c_str());
  if (handle == nullptr) {
    return false;
  }
  closedir(handle);
  return true;
}

bool can_create_in(const std::filesystem::path& directory) {
  const std::filesystem::path probe = directory / ".fib-test-probe";
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    return false;
  }
  close(fd);
  unlink(probe.c_str());
  return true;
}

} // namespace

RestrictedDirectory::RestrictedDirectory(std::filesystem::path directory, Restriction restriction)
    : m_directory(std::move(directory)) {
  const bool unlistable = restriction == Restriction::unlistable;
  std::error_code ec;
  std::filesystem::permissions(
      m_directory,
      unlistable ? std::filesystem::perms::none : static_cast<std::filesystem::perms>(0555), ec);
  if (ec) {
    return;
  }
  if (geteuid() == 0) {
    m_capabilities_dropped = set_dac_capabilities(false);
  }
  m_works =
      unlistable ? !can_list(m_directory) : can_list(m_directory) && !can_create_in(m_directory);
}

RestrictedDirectory::~RestrictedDirectory() {
  if (m_capabilities_dropped) {
    set_dac_capabilities(true);
  }
  std::error_code ec;
  std::filesystem::permissions(m_directory, static_cast<std::filesystem::perms>(0755), ec);
}

} // namespace fib::testing
