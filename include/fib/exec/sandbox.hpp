#pragma once
// The sandbox untrusted code runs in (docs/execution.md, "Trust model"): every reference and every
// solution runs in fib-worker, and fib-worker runs under bubblewrap (`bwrap`, Debian's package
// `bubblewrap`), which builds it new kernel namespaces. Inside, the worker sees:
//   - the system read-only: /usr (with /bin, /lib, ... as on the host), /opt, and a short list
//     of /etc files programs need (the dynamic linker's cache, alternatives, passwd/group, time
//     zone, Python's config); no /etc/shadow, no /home, no /root, no /srv, no /var;
//   - a private, writable /tmp of a bounded size, a tmpfs of its own (HOME and TMPDIR point
//     there; fib reaches it through a descriptor the worker hands over), fib's channel directory
//     read-only at /run/fib, and the paths the caller binds: read-only (a dataset) or writable
//     (one entry of the build cache);
//   - its own /proc and a minimal /dev (null, zero, random, urandom, tty, shm), plus the NVIDIA
//     device nodes and /sys read-only when the job needs the GPU;
//   - no network (an empty network namespace: only a loopback of its own), its own PID, IPC, UTS
//     and user namespaces (it cannot see or signal fib or anything else of the host), no
//     capabilities, no new privileges (PR_SET_NO_NEW_PRIVS), no nested user namespaces;
//   - an environment of fib's choosing (--clearenv, then a short allow-list: no tokens or keys).
// bwrap dies with fib (PR_SET_PDEATHSIG) and the sandbox's first process dies with bwrap
// (--die-with-parent); when it dies, the kernel kills everything else in its PID namespace, so no
// process started inside outlives the sandbox, `setsid` or not.
//
// A process-count limit comes from RLIMIT_NPROC, which fib-worker sets on itself; the kernel does
// not apply it to processes of the host's root, so when fib runs as root the limit is a pids
// cgroup instead (ProcessCgroup), which needs a writable cgroup v1 `pids` hierarchy or a cgroup v2
// directory with the pids controller delegated.

#include <fib/base/expected.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// enforced: untrusted code runs only inside the sandbox; when the machine cannot give one, it does
// not run (`sandbox.unavailable`). unsafe_disabled (--unsafe-no-sandbox): it runs without one,
// with the user's full rights (rlimits, timeouts and the process tree kill still apply).
enum class SandboxMode { enforced, unsafe_disabled };

enum class ProcessLimitKind { rlimit, cgroup, none };

// The `sandbox.disabled` warning a command says once when --unsafe-no-sandbox is given.
Diagnostic unsafe_sandbox_warning();

// What this machine allows, probed once per fib process (the first call runs bwrap once: a few
// milliseconds). Thread-safe.
struct SandboxSupport {
  std::filesystem::path bwrap; // empty when not found on PATH
  ProcessLimitKind process_limit = ProcessLimitKind::none;
  std::filesystem::path cgroup_parent; // where ProcessCgroup creates its groups (kind cgroup)
  // Each protection that cannot be had, in words ("bubblewrap (bwrap) is not installed", "bwrap
  // cannot create namespaces here: …", "no process-count limit: …"). Empty: the sandbox works.
  std::vector<std::string> missing;

  bool usable() const { return missing.empty(); }
};
const SandboxSupport& sandbox_support();

// The probe itself, looking for bwrap in `path_variable` (a PATH value; empty: the default
// /usr/local/bin:/usr/bin:/bin). sandbox_support() is probe_sandbox($PATH), once.
SandboxSupport probe_sandbox(std::string_view path_variable);

enum class DeviceAccess { none, gpu };

// The size of the sandbox's /dev/shm (a tmpfs of its own, like /tmp).
inline constexpr std::uint64_t k_sandbox_shm_bytes = std::uint64_t{64} << 20;

// What the sandbox holds besides the system (all paths absolute and existing).
struct SandboxLayout {
  // The sandbox's /tmp (HOME, TMPDIR and the working directory) is a tmpfs of its own, of
  // `scratch_bytes` (0: bwrap's default, half the memory): what the code can write in all, and
  // gone when the sandbox ends. `channel_directory` (fib's, holding the channel's socket) is
  // bound read-only at /run/fib (empty: not bound).
  std::uint64_t scratch_bytes = 0;
  std::filesystem::path channel_directory;
  std::vector<std::filesystem::path> read_only; // bound at the same path, read-only
  std::vector<std::filesystem::path> writable;  // bound at the same path, read-write
  // Executables and interpreter prefixes outside the system directories (a build tree's
  // fib-worker, a virtual environment): bound read-only at the same path.
  std::vector<std::filesystem::path> programs;
  DeviceAccess device = DeviceAccess::none;
};

// The bwrap command line that runs `program` (argv, program[0] an absolute path) inside the
// sandbox described by `layout`, with the allow-listed environment plus `environment`.
// Standard input, output and error, and every descriptor without FD_CLOEXEC, pass through.
std::vector<std::string>
sandbox_command(const std::filesystem::path& bwrap, const SandboxLayout& layout,
                const std::vector<std::pair<std::string, std::string>>& environment,
                const std::vector<std::string>& program);

// The variables fib passes into the sandbox when set in its own environment (locale, thread
// counts, CUDA and compiler selection); everything else is cleared.
const std::vector<std::string>& sandbox_environment_allow_list();

// A fresh directory `fib-scratch-XXXXXX` under $TMPDIR (else /tmp), mode 0700, removed with
// everything in it when the object goes (permissions taken away inside are restored first; links
// are removed, never followed). While it exists the object holds an exclusive flock(2) on it,
// which the kernel drops when the process ends, however it ends; create() takes the lock before the
// directory counts as created (a sweep that took the unlocked one in that instant sends it on to a
// new name). The first create() of a process, and the end of every one, removes the scratch
// directories that SIGKILLed fib processes left under that parent
// (remove_stale_scratch_directories).
class ScratchDirectory {
public:
  static Expected<ScratchDirectory> create();
  ScratchDirectory(ScratchDirectory&& other) noexcept;
  ScratchDirectory& operator=(ScratchDirectory&& other) noexcept;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory();

  const std::filesystem::path& path() const { return m_path; }

private:
  ScratchDirectory(std::filesystem::path path, int lock_fd)
      : m_path(std::move(path)), m_lock_fd(lock_fd) {}
  void release();
  std::filesystem::path m_path;
  int m_lock_fd = -1;
};

// Removes (with everything in them) the entries of `parent` that are stale scratch directories: the
// name is `fib-scratch-` and six ASCII letters or digits, it is a directory (looked at without
// following a link) of this user, and no process holds its lock (flock with LOCK_NB succeeds). No
// clock is compared: a live scratch directory is locked before its creator uses it, and a creator
// whose new directory was swept before the lock makes another, so only those of processes that are
// gone are removed. Best effort: what cannot be listed, opened or locked is left
// alone. Returns the number removed. (Earlier fib versions named their unlocked scratch
// directories `fib-sandbox-XXXXXX`: those are never touched, live or not.)
std::size_t remove_stale_scratch_directories(const std::filesystem::path& parent);

// Clears the setuid and setgid bits of `root` and everything below it (links not followed): a
// sandbox's writable bind (a build cache entry) must not leave a set-id program for others to run.
void strip_set_id_bits(const std::filesystem::path& root);

// A pids cgroup of its own (SandboxSupport::cgroup_parent/fib-PID-N) with pids.max = `max`. A
// child spawned with `procs_descriptor()` as SpawnOptions::cgroup_procs_descriptor joins it before
// exec, so everything it starts is counted. Going away kills what is still in it (SIGKILL to each
// listed process) and removes the group.
class ProcessCgroup {
public:
  static Expected<ProcessCgroup> create(const SandboxSupport& support, std::uint64_t max);
  ProcessCgroup(ProcessCgroup&& other) noexcept;
  ProcessCgroup& operator=(ProcessCgroup&& other) noexcept;
  ProcessCgroup(const ProcessCgroup&) = delete;
  ProcessCgroup& operator=(const ProcessCgroup&) = delete;
  ~ProcessCgroup();

  int procs_descriptor() const { return m_procs; }
  // SIGKILL to every process in the group (repeated until it is empty, at most ~1 s).
  void kill_all() const;

private:
  ProcessCgroup(std::filesystem::path path, int procs) : m_path(std::move(path)), m_procs(procs) {}
  void release();
  std::filesystem::path m_path;
  int m_procs = -1;
};

} // namespace fib
