#pragma once
// ASCII-only text helpers (locale-independent).

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace fib::detail {

// `text` with A–Z turned into a–z; every other byte unchanged.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

} // namespace fib::detail
