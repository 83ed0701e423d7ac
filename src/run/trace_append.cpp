#include "fib/run/trace_append.hpp"

#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>

namespace fib {

std::optional<Diagnostic> append_trace_lines(const std::filesystem::path& root,
                                             const std::filesystem::path& relative,
                                             const std::vector<std::string>& lines,
                                             std::chrono::milliseconds lock_timeout) {
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
  std::string text = old->value_or(std::string());
  if (!text.empty() && text.back() != '\n') {
    text += '\n';
  }
  for (const auto& line : lines) {
    text += line;
    text += '\n';
  }
  auto written = write_file_atomically_in(*directory, name, text, Overwrite::allowed);
  if (!written) {
    return written.error();
  }
  return std::nullopt;
}

} // namespace fib
