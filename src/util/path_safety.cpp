#include "fib/util/path_safety.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fib {
namespace {

constexpr std::size_t k_max_segment_bytes = 200;

} // namespace

std::string unsafe_segment_reason(std::string_view segment) {
  if (segment.empty()) {
    return "it is empty";
  }
  if (segment == "." || segment == "..") {
    return "it names a directory itself";
  }
  if (segment.size() > k_max_segment_bytes) {
    return fmt::format("it is longer than {} bytes", k_max_segment_bytes);
  }
  if (segment.find_first_of("/\\") != std::string_view::npos) {
    return "it contains a path separator";
  }
  for (const char c : segment) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return "it contains a control character";
    }
  }
  if (segment.front() == '-') {
    return "it starts with '-' (it would read as an option)";
  }
  if (segment.front() == '.') {
    return "it starts with '.' (a hidden file)";
  }
  return "";
}

bool has_parent_segment(std::string_view path) {
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    if (path.substr(start, slash - start) == "..") {
      return true;
    }
    start = slash + 1;
  }
  return false;
}

} // namespace fib
