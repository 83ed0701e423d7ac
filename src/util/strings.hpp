#pragma once
// Text helpers shared by every layer: ASCII-only (locale-independent) case and whitespace
// handling, line splitting, UTF-8 sequences. The one home for them: no module keeps its own trim.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// --- Interface ---

// The text of `root / relative` (std::filesystem::path's operator/ on POSIX) without building
// a path, whose constructor splits the text into components: `relative` itself when it is
// absolute, else `root`, a '/' when `root` is not empty and does not end with one, and
// `relative`. For the many blob paths a dataset names.
inline std::string joined_path_text(std::string_view root, std::string_view relative) {
  if (relative.starts_with('/')) {
    return std::string(relative);
  }
  std::string out;
  out.reserve(root.size() + 1 + relative.size());
  out += root;
  if (!root.empty() && !root.ends_with('/')) {
    out += '/';
  }
  out += relative;
  return out;
}

// `text` with A–Z turned into a–z; every other byte unchanged.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// True for the C locale's whitespace: space, \t, \n, \v, \f, \r.
constexpr bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// `text` without leading and trailing ASCII whitespace (as Python's str.strip() for ASCII text).
constexpr std::string_view trim(std::string_view text) {
  while (!text.empty() && is_ascii_space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_ascii_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

// The pieces of `text` between '\n's, without them, as Python's text.split("\n"): "a\nb\n" gives
// "a", "b", "". Always at least one piece. The views point into `text`.
inline std::vector<std::string_view> split_on_newlines(std::string_view text) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      pieces.push_back(text.substr(start));
      return pieces;
    }
    pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

// The lines of `text`, each with its '\n' if it has one, as Python's text.splitlines(True) for
// '\n'-only text: "a\nb" gives "a\n", "b"; "" gives none. The views point into `text`.
inline std::vector<std::string_view> split_lines_keeping_ends(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t newline = text.find('\n', start);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// The items joined by ", ", or "(none)" when there are none (for messages).
inline std::string join_or_none(const std::vector<std::string>& items) {
  if (items.empty()) {
    return "(none)";
  }
  std::string out;
  for (const std::string& item : items) {
    out += out.empty() ? "" : ", ";
    out += item;
  }
  return out;
}

// Length of the UTF-8 sequence starting at text[i] (i < text.size()), or 0 when it is not valid
// UTF-8 (truncated, overlong, a surrogate, above U+10FFFF).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) {
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      return 0;
    }
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  constexpr std::array<std::uint32_t, 5> k_minimum = {0, 0, 0x80, 0x800, 0x10000};
  if (code < k_minimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return 0;
  }
  return length;
}

// Whether all of `text` is valid UTF-8 (utf8_sequence_length's rules).
inline bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

} // namespace fib::detail
