#pragma once
// Python identifiers as they appear in FlashInfer's dumps (fi_api tags, signatures, argument
// references): letters, digits and '_', not starting with a digit; bytes of non-ASCII letters
// are accepted as Python accepts such names. Keywords are not excluded (normalize's
// is_python_identifier does that for names it writes).

#include <algorithm>
#include <cctype>
#include <string_view>

namespace fib::collect_detail {

inline bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) != 0) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

} // namespace fib::collect_detail
