#include "fib/exec/sandbox.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/subprocess.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <poll.h>
#include <random>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fib {
namespace {

// System directories bound read-only as they are (a link such as /lib -> usr/lib stays a link).
constexpr std::array<std::string_view, 8> k_system_paths{"/usr",   "/bin",   "/sbin",   "/lib",
                                                         "/lib32", "/lib64", "/libx32", "/opt"};

// The /etc files programs inside need; nothing with secrets (/etc/shadow, /etc/ssh, ...).
constexpr std::array<std::string_view, 14> k_etc_files{
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",   "/etc/alternatives",
    "/etc/passwd",      "/etc/group",      "/etc/localtime",      "/etc/nsswitch.conf",
    "/etc/python3",     "/etc/python3.11", "/etc/debian_version", "/etc/os-release",
    "/etc/OpenCL",      "/etc/nvidia"};

bool under_system_directory(const std::filesystem::path& path) {
  const std::string text = path.lexically_normal().string();
  return std::any_of(k_system_paths.begin(), k_system_paths.end(), [&](std::string_view root) {
    return text == root || text.starts_with(std::string(root) + "/");
  });
}

std::optional<std::filesystem::path> find_on_path(std::string_view program,
                                                  std::string_view path_variable) {
  std::string_view rest = !path_variable.empty() ? path_variable : "/usr/local/bin:/usr/bin:/bin";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view directory = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (directory.empty()) {
      continue;
    }
    std::filesystem::path candidate = std::filesystem::path(directory) / program;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

void add_system_binds(std::vector<std::string>& argv) {
  for (const std::string_view root : k_system_paths) {
    std::error_code ec;
    const std::filesystem::path path(root);
    const auto status = std::filesystem::symlink_status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
      continue;
    }
    if (std::filesystem::is_symlink(status)) {
      argv.insert(argv.end(),
                  {"--symlink", std::filesystem::read_symlink(path, ec).string(), path.string()});
    } else {
      argv.insert(argv.end(), {"--ro-bind", path.string(), path.string()});
    }
  }
  for (const std::string_view file : k_etc_files) {
    argv.insert(argv.end(), {"--ro-bind-try", std::string(file), std::string(file)});
  }
}

void add_gpu_binds(std::vector<std::string>& argv) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("nvidia") || name == "dri") {
      argv.insert(argv.end(), {"--dev-bind-try", entry.path().string(), entry.path().string()});
    }
  }
  argv.insert(argv.end(), {"--ro-bind-try", "/sys", "/sys"});
}

std::string environment_value(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr ? value : "";
}

// Whether bwrap with the options fib uses can start a program here; the reason when not.
std::optional<std::string> bwrap_problem(const std::filesystem::path& bwrap) {
  const SandboxLayout layout; // nothing of the host is writable
  const std::vector<std::string> argv = sandbox_command(bwrap, layout, {}, {"/usr/bin/true"});
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return fmt::format("cannot create a pipe: {}", std::strerror(errno));
  }
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.lookup = ProgramLookup::exact_path;
  spawn.output_descriptor = pipe_fds[1];
  const Spawned child = spawn_process(spawn);
  ::close(pipe_fds[1]);
  // Its output until EOF, within the trial's deadline (a bwrap that hangs must not hang fib).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string output;
  char chunk[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd fd{pipe_fds[0], POLLIN, 0};
    if (::poll(&fd, 1, 100) <= 0) {
      continue;
    }
    const ssize_t n = ::read(pipe_fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    if (output.size() < 4096) {
      output.append(chunk, static_cast<std::size_t>(n));
    }
  }
  ::close(pipe_fds[0]);
  if (child.failure) {
    return describe_spawn_failure(*child.failure, bwrap.string());
  }
  const WaitResult waited = wait_for_exit(child.pid, deadline);
  if (!waited.ended) {
    kill_process(child.pid);
    return std::string("bwrap did not finish a trial run within 30 s");
  }
  if (!waited.status || !WIFEXITED(*waited.status) || WEXITSTATUS(*waited.status) != 0) {
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) {
      output.pop_back();
    }
    return fmt::format("bwrap cannot create the sandbox's namespaces here ({}{}{})",
                       waited.status ? describe_wait_status(*waited.status) : "no status",
                       output.empty() ? "" : ": ", output);
  }
  return std::nullopt;
}

// The cgroup directory under which fib may create pids groups, when one is writable.
std::optional<std::filesystem::path> writable_pids_cgroup() {
  std::error_code ec;
  const std::filesystem::path v1 = "/sys/fs/cgroup/pids";
  if (std::filesystem::exists(v1 / "cgroup.procs", ec) && ::access(v1.c_str(), W_OK) == 0) {
    return v1;
  }
  // cgroup v2: fib's own group, when the pids controller is delegated to its children.
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  while (std::getline(self, line)) {
    if (!line.starts_with("0::")) {
      continue;
    }
    const std::filesystem::path own = std::filesystem::path("/sys/fs/cgroup") /
                                      std::filesystem::path(line.substr(3)).relative_path();
    std::ifstream controllers(own / "cgroup.subtree_control");
    std::string enabled((std::istreambuf_iterator<char>(controllers)),
                        std::istreambuf_iterator<char>());
    if (enabled.find("pids") != std::string::npos && ::access(own.c_str(), W_OK) == 0) {
      return own;
    }
  }
  return std::nullopt;
}

std::atomic<unsigned> g_cgroup_counter{0};

} // namespace

SandboxSupport probe_sandbox(std::string_view path_variable) {
  SandboxSupport support;
  if (auto bwrap = find_on_path("bwrap", path_variable)) {
    support.bwrap = *bwrap;
    if (auto problem = bwrap_problem(*bwrap)) {
      support.missing.push_back(std::move(*problem));
    }
  } else {
    support.missing.push_back("bubblewrap (bwrap) is not installed (Debian: apt-get install "
                              "bubblewrap)");
  }
  if (::getuid() != 0) {
    support.process_limit = ProcessLimitKind::rlimit;
  } else if (auto parent = writable_pids_cgroup()) {
    support.process_limit = ProcessLimitKind::cgroup;
    support.cgroup_parent = *parent;
  } else {
    support.missing.push_back(
        "no process-count limit: fib runs as root, whose processes RLIMIT_NPROC does not "
        "limit, and no pids cgroup is writable (run fib as another user, or delegate a cgroup)");
  }
  return support;
}

Diagnostic unsafe_sandbox_warning() {
  Diagnostic d = make_diagnostic(
      codes::k_sandbox_disabled,
      "--unsafe-no-sandbox: references and solutions run without fib's sandbox, with your full "
      "rights (your files, the network, the dataset); only the limits and timeouts hold");
  d.hint = "use it only for code you trust";
  return d;
}

const SandboxSupport& sandbox_support() {
  static const SandboxSupport support = probe_sandbox(environment_value("PATH"));
  return support;
}

const std::vector<std::string>& sandbox_environment_allow_list() {
  static const std::vector<std::string> names{"LANG",
                                              "LC_ALL",
                                              "LC_CTYPE",
                                              "TZ",
                                              "OMP_NUM_THREADS",
                                              "MKL_NUM_THREADS",
                                              "OPENBLAS_NUM_THREADS",
                                              "CUDA_HOME",
                                              "CUDA_VISIBLE_DEVICES",
                                              "NVIDIA_VISIBLE_DEVICES",
                                              "NVIDIA_DRIVER_CAPABILITIES",
                                              "TORCH_CUDA_ARCH_LIST",
                                              "MAX_JOBS",
                                              "CC",
                                              "CXX",
                                              "FIB_PYTHON"};
  return names;
}

std::vector<std::string>
sandbox_command(const std::filesystem::path& bwrap, const SandboxLayout& layout,
                const std::vector<std::pair<std::string, std::string>>& environment,
                const std::vector<std::string>& program) {
  std::vector<std::string> argv{
      bwrap.string(),   "--die-with-parent", "--new-session", "--unshare-all",
      "--unshare-user", "--disable-userns",  "--cap-drop",    "ALL",
      "--hostname",     "fib-sandbox",       "--clearenv"};
  add_system_binds(argv);
  // bwrap's /dev/shm is a tmpfs of half the memory: a small one instead (POSIX semaphores and
  // shared memory need a little), so that /tmp is the one place of any size to write.
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--size",
                           std::to_string(k_sandbox_shm_bytes), "--tmpfs", "/dev/shm"});
  if (layout.scratch_bytes > 0) {
    argv.insert(argv.end(), {"--size", std::to_string(layout.scratch_bytes)});
  }
  argv.insert(argv.end(), {"--tmpfs", "/tmp"});
  if (!layout.channel_directory.empty()) {
    argv.insert(argv.end(), {"--ro-bind", layout.channel_directory.string(), "/run/fib"});
  }
  for (const auto& path : layout.programs) {
    if (!under_system_directory(path)) {
      argv.insert(argv.end(), {"--ro-bind", path.string(), path.string()});
    }
  }
  for (const auto& path : layout.read_only) {
    argv.insert(argv.end(), {"--ro-bind", path.string(), path.string()});
  }
  for (const auto& path : layout.writable) {
    argv.insert(argv.end(), {"--bind", path.string(), path.string()});
  }
  if (layout.device == DeviceAccess::gpu) {
    add_gpu_binds(argv);
  }
  std::string path_variable = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  if (const std::string cuda = environment_value("CUDA_HOME"); !cuda.empty()) {
    path_variable += ":" + cuda + "/bin";
  }
  argv.insert(argv.end(), {"--setenv", "PATH", path_variable, "--setenv", "HOME", "/tmp",
                           "--setenv", "TMPDIR", "/tmp"});
  for (const std::string& name : sandbox_environment_allow_list()) {
    if (const std::string value = environment_value(name); !value.empty()) {
      argv.insert(argv.end(), {"--setenv", name, value});
    }
  }
  for (const auto& [name, value] : environment) {
    argv.insert(argv.end(), {"--setenv", name, value});
  }
  // bwrap builds the root and /dev as tmpfs of half the memory, writable: read-only once built,
  // so that /tmp and /dev/shm, of bounded sizes, are all the code can write.
  argv.insert(argv.end(), {"--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--"});
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

// --- ScratchDirectory ---

namespace {

// Makes every directory below `path` (links not followed) searchable and writable again, which
// code in the sandbox may have taken away (chmod 000) to make the removal fail.
void restore_permissions(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return;
  }
  ::chmod(path.c_str(), 0700);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    restore_permissions(entry.path());
  }
}

void remove_tree(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::remove_all(path, ec) == static_cast<std::uintmax_t>(-1) || ec) {
    restore_permissions(path);
    std::filesystem::remove_all(path, ec);
  }
}

constexpr std::string_view k_scratch_prefix = "fib-scratch-";

bool is_scratch_directory_name(std::string_view name) {
  if (name.size() != k_scratch_prefix.size() + 6 ||
      name.substr(0, k_scratch_prefix.size()) != k_scratch_prefix) {
    return false;
  }
  return std::all_of(
      name.begin() + static_cast<std::ptrdiff_t>(k_scratch_prefix.size()), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      });
}

// The directory `path` opened (no link followed) and locked exclusively without waiting; -1 when
// either fails.
int open_locked_directory(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Removes the stale scratch directories below $TMPDIR (or /tmp) once per process.
void remove_stale_scratch_directories_once(const std::filesystem::path& parent) {
  static std::once_flag once;
  std::call_once(once, [&] { remove_stale_scratch_directories(parent); });
}

} // namespace

std::size_t remove_stale_scratch_directories(const std::filesystem::path& parent) {
  std::size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto path = it->path();
    struct stat info {};
    if (!is_scratch_directory_name(path.filename().string()) || ::lstat(path.c_str(), &info) != 0 ||
        !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid()) {
      continue;
    }
    const int lock = open_locked_directory(path);
    if (lock < 0) {
      continue; // a live fib's, or not ours to open
    }
    remove_tree(path);
    ::close(lock);
    removed += std::filesystem::exists(std::filesystem::symlink_status(path)) ? 0 : 1;
  }
  return removed;
}

namespace {

// True when `path` still names the directory open as `fd` (a sweep may have taken the unlocked
// directory in the instant between its creation and its lock, and removed it).
bool path_leads_to(const std::string& path, int fd) {
  struct stat named {};
  struct stat opened {};
  return ::lstat(path.c_str(), &named) == 0 && ::fstat(fd, &opened) == 0 &&
         named.st_dev == opened.st_dev && named.st_ino == opened.st_ino && opened.st_nlink > 0;
}

std::string scratch_parent() {
  return environment_value("TMPDIR").empty() ? "/tmp" : environment_value("TMPDIR");
}

} // namespace

Expected<ScratchDirectory> ScratchDirectory::create() {
  const std::string base = scratch_parent();
  remove_stale_scratch_directories_once(base);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string pattern = base + "/fib-scratch-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return unexpected(
          make_diagnostic(codes::k_sandbox_unavailable,
                          fmt::format("cannot create a scratch directory under {}: {}", base,
                                      std::strerror(errno))));
    }
    // Locked before it counts as created: a sweep (which takes any unlocked one for a dead
    // process's) that removed it first, or holds it locked to remove it, sends us on to a new name.
    const int lock = open_locked_directory(pattern);
    if (lock < 0) {
      continue;
    }
    if (!path_leads_to(pattern, lock)) {
      ::close(lock);
      continue;
    }
    return ScratchDirectory(std::filesystem::path(pattern), lock);
  }
  return unexpected(make_diagnostic(
      codes::k_sandbox_unavailable,
      fmt::format("cannot create a scratch directory under {}: each new one was taken by another "
                  "process's sweep before it could be locked",
                  base)));
}

ScratchDirectory::ScratchDirectory(ScratchDirectory&& other) noexcept
    : m_path(std::exchange(other.m_path, {})), m_lock_fd(std::exchange(other.m_lock_fd, -1)) {}

ScratchDirectory& ScratchDirectory::operator=(ScratchDirectory&& other) noexcept {
  if (this != &other) {
    release();
    m_path = std::exchange(other.m_path, {});
    m_lock_fd = std::exchange(other.m_lock_fd, -1);
  }
  return *this;
}

ScratchDirectory::~ScratchDirectory() {
  release();
}

void ScratchDirectory::release() {
  const std::filesystem::path path = std::exchange(m_path, {});
  if (!path.empty()) {
    remove_tree(path);
  }
  if (m_lock_fd >= 0) {
    ::close(m_lock_fd);
    m_lock_fd = -1;
  }
  if (!path.empty()) {
    // Again at each worker's end: what a killed fib's workers were still writing when this
    // process's first sweep ran (and so could not be removed then) is gone by now.
    remove_stale_scratch_directories(path.parent_path());
  }
}

void strip_set_id_bits(const std::filesystem::path& root) {
  struct stat info {};
  if (::lstat(root.c_str(), &info) != 0 || S_ISLNK(info.st_mode)) {
    return;
  }
  if ((info.st_mode & (S_ISUID | S_ISGID)) != 0) {
    ::chmod(root.c_str(), info.st_mode & 07777 & ~static_cast<mode_t>(S_ISUID | S_ISGID));
  }
  if (S_ISDIR(info.st_mode)) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
      strip_set_id_bits(entry.path());
    }
  }
}

// --- ProcessCgroup ---

namespace {

// Removes the empty groups `fib-PID-…` of fib processes that no longer run (a fib killed with
// SIGKILL cannot remove its own). A group still in use is not empty and rmdir refuses it; one of
// a live fib is never touched.
void remove_abandoned_cgroups(const std::filesystem::path& parent) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("fib-")) {
      continue;
    }
    const long owner = std::strtol(name.c_str() + 4, nullptr, 10);
    if (owner > 0 && owner != ::getpid() && ::kill(static_cast<pid_t>(owner), 0) != 0 &&
        errno == ESRCH) {
      ::rmdir(entry.path().c_str());
    }
  }
}

} // namespace

Expected<ProcessCgroup> ProcessCgroup::create(const SandboxSupport& support, std::uint64_t max) {
  static std::once_flag swept;
  std::call_once(swept, [&] { remove_abandoned_cgroups(support.cgroup_parent); });
  // The pid alone may repeat (a killed fib's group, a reused pid): a random part makes it new.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  const std::filesystem::path path =
      support.cgroup_parent /
      fmt::format("fib-{}-{}-{:08x}", ::getpid(), ++g_cgroup_counter, generator() & 0xffffffffU);
  const auto failed = [&](std::string_view what) {
    return unexpected(make_diagnostic(codes::k_sandbox_unavailable,
                                      fmt::format("cannot {} the pids cgroup {}: {}", what,
                                                  path.string(), std::strerror(errno))));
  };
  if (::mkdir(path.c_str(), 0755) != 0) {
    return failed("create");
  }
  {
    const int limit = ::open((path / "pids.max").c_str(), O_WRONLY | O_CLOEXEC);
    const std::string text = std::to_string(max);
    const bool written =
        limit >= 0 && ::write(limit, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (limit >= 0) {
      ::close(limit);
    }
    if (!written) {
      auto error = failed("limit");
      ::rmdir(path.c_str());
      return error;
    }
  }
  const int procs = ::open((path / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (procs < 0) {
    auto error = failed("open");
    ::rmdir(path.c_str());
    return error;
  }
  return ProcessCgroup(path, procs);
}

ProcessCgroup::ProcessCgroup(ProcessCgroup&& other) noexcept
    : m_path(std::exchange(other.m_path, {})), m_procs(std::exchange(other.m_procs, -1)) {}

ProcessCgroup& ProcessCgroup::operator=(ProcessCgroup&& other) noexcept {
  if (this != &other) {
    release();
    m_path = std::exchange(other.m_path, {});
    m_procs = std::exchange(other.m_procs, -1);
  }
  return *this;
}

ProcessCgroup::~ProcessCgroup() {
  release();
}

void ProcessCgroup::kill_all() const {
  if (m_path.empty()) {
    return;
  }
  for (int round = 0; round < 50; ++round) {
    std::ifstream members(m_path / "cgroup.procs");
    bool any = false;
    pid_t pid = 0;
    while (members >> pid) {
      any = true;
      ::kill(pid, SIGKILL);
    }
    if (!any) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ProcessCgroup::release() {
  if (m_procs >= 0) {
    ::close(m_procs);
    m_procs = -1;
  }
  if (!m_path.empty()) {
    kill_all();
    // The group is busy until its last member is reaped by the kernel: a few tries.
    for (int attempt = 0; attempt < 50 && ::rmdir(m_path.c_str()) != 0 && errno == EBUSY;
         ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    m_path.clear();
  }
}

} // namespace fib
