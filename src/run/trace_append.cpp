#include "fib/run/trace_append.hpp"

#include <fib/io/json_io.hpp>
#include <fib/model/trace.hpp>
#include <fib/util/atomic_file.hpp>

#include <functional>

namespace fib {
namespace {

// The file's text as `edit` makes it from the current one ("" when the file does not exist), put in
// place under the directory's lock in one rename.
std::optional<Diagnostic> rewrite_under_lock(const std::filesystem::path& root,
                                             const std::filesystem::path& relative,
                                             std::chrono::milliseconds lock_timeout,
                                             const std::function<std::string(std::string)>& edit) {
  auto directory = open_parent_directory_below(root, relative, CreateMissing::yes);
  if (!directory) {
    return directory.error();
  }
  // Held until the new file has taken the name: another run's append waits here, then reads the
  // file this one wrote.
  const auto lock = lock_directory(*directory, lock_timeout);
  if (!lock) {
    return lock.error();
  }
  // A run killed in the middle of an earlier append left its temporary here.
  StaleTemporarySweeper().remove_stale_in(*directory);
  const std::string name = relative.filename().string();
  auto old = read_file_in(*directory, name, k_default_max_file_bytes);
  if (!old) {
    return old.error();
  }
  std::string text = edit(old->value_or(std::string()));
  auto written = write_file_atomically_in(*directory, name, text, Overwrite::allowed);
  if (!written) {
    return written.error();
  }
  return std::nullopt;
}

void end_last_line(std::string& text) {
  if (!text.empty() && text.back() != '\n') {
    text += '\n';
  }
}

// Whether the physical line `raw` is an evaluated trace with `identity`. Only lines that mention
// the workload's uuid are parsed.
bool has_identity(std::string_view raw, const TraceIdentity& identity) {
  if (raw.find(identity.workload_uuid) == std::string_view::npos) {
    return false;
  }
  DiagnosticList ignored;
  const auto lines = parse_trace_lines(raw, {}, TraceFileKind::any, ignored, LineIndex::skipped);
  if (lines.size() != 1 || !lines.front().valid) {
    return false;
  }
  const auto found = trace_identity(lines.front().trace);
  return found && *found == identity;
}

} // namespace

std::optional<Diagnostic> append_trace_lines(const std::filesystem::path& root,
                                             const std::filesystem::path& relative,
                                             const std::vector<std::string>& lines,
                                             std::chrono::milliseconds lock_timeout) {
  return rewrite_under_lock(root, relative, lock_timeout, [&](std::string text) {
    end_last_line(text);
    for (const auto& line : lines) {
      text += line;
      text += '\n';
    }
    return text;
  });
}

Expected<std::size_t> record_trace_line(const std::filesystem::path& root,
                                        const std::filesystem::path& relative,
                                        std::string_view line, const TraceIdentity& identity,
                                        std::chrono::milliseconds lock_timeout) {
  std::size_t replaced = 0;
  auto problem = rewrite_under_lock(root, relative, lock_timeout, [&](const std::string& old) {
    std::string text;
    text.reserve(old.size() + line.size() + 1);
    std::size_t start = 0;
    while (start < old.size()) {
      std::size_t end = old.find('\n', start);
      end = end == std::string::npos ? old.size() : end + 1;
      const std::string_view raw(old.data() + start, end - start);
      if (has_identity(raw, identity)) {
        ++replaced;
      } else {
        text += raw;
      }
      start = end;
    }
    end_last_line(text);
    text += line;
    text += '\n';
    return text;
  });
  if (problem) {
    return unexpected(std::move(*problem));
  }
  return replaced;
}

} // namespace fib
