#pragma once
// scan_json_keys: a quick look at JSON text without parsing it (no allocation): the keys of its
// objects, with their depth, and where each key's value starts. For valid JSON the keys are
// exactly those a parser sees (raw: escapes are not decoded); for invalid JSON they are a guess.
// Callers use it only to rule work out ("this file cannot be what we look for"), and parse when
// it cannot.

#include <cstddef>
#include <string_view>

namespace fib::detail {

// --- Interface ---

inline bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The position of the first non-space byte at or after `pos` (text.size() when none).
inline std::size_t skip_json_space(std::string_view text, std::size_t pos) {
  while (pos < text.size() && is_json_space(text[pos])) {
    ++pos;
  }
  return pos;
}

// The position just after the string literal whose opening quote is at `open` (text.size() when
// it is not closed).
inline std::size_t end_of_json_string(std::string_view text, std::size_t open) {
  for (std::size_t pos = open + 1; pos < text.size(); ++pos) {
    if (text[pos] == '\\') {
      ++pos;
    } else if (text[pos] == '"') {
      return pos + 1;
    }
  }
  return text.size();
}

// Calls on_key(depth, raw_key, value_position) for every key, in text order: depth 1 is a key of
// the outermost object, raw_key the bytes between the quotes, value_position the first byte of
// the value. Stops early when on_key returns false.
template <class OnKey> void scan_json_keys(std::string_view text, OnKey&& on_key) {
  int depth = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const char c = text[pos];
    if (c == '"') {
      const std::size_t end = end_of_json_string(text, pos);
      const std::size_t after = skip_json_space(text, end);
      if (after < text.size() && text[after] == ':' && depth > 0) {
        const std::string_view key = text.substr(pos + 1, end - pos - 2);
        if (!on_key(depth, key, skip_json_space(text, after + 1))) {
          return;
        }
      }
      pos = end;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
    ++pos;
  }
}

} // namespace fib::detail
