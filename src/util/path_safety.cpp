#include "fib/util/path_safety.hpp"

#include <fmt/format.h>

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

} // namespace fib
