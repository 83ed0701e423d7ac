#include "util/file_walk.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

namespace fib::detail {

FilesBelow list_files_below(const std::filesystem::path& directory,
                            std::initializer_list<std::string_view> extensions) {
  FilesBelow result;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(
      directory, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::filesystem::path& path = it->path();
    const bool is_report = path.parent_path().filename() == "reports" &&
                           path.filename().string().starts_with("report-");
    // A stray temporary of an atomic write is no input, whatever its extension looks like.
    const bool is_temporary = is_atomic_write_temporary(path.filename().string());
    const std::string extension = path.extension().string();
    const bool wanted =
        std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
    std::error_code type_ec;
    if (wanted && !is_report && !is_temporary && it->is_regular_file(type_ec)) {
      result.files.push_back(path);
    }
  }
  if (ec) {
    Diagnostic d = make_diagnostic(codes::k_io_read,
                                   fmt::format("cannot list the directory: {}", ec.message()));
    d.file = directory;
    result.error = std::move(d);
  }
  std::sort(result.files.begin(), result.files.end());
  return result;
}

} // namespace fib::detail
