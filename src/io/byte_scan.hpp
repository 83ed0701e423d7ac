#pragma once
// Block-at-a-time scans for the JSON reader: skip over the bytes that need no attention (plain
// printable ASCII) sixteen at a time with SSE2 (eight at a time without it), and let the caller
// look at the rest one by one. Private to src/io.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fib::detail {

// --- Interface ---

// The first position at or after `pos` holding a byte below 0x20 or at or above 0x80 (a control
// character, or part of a UTF-8 sequence), or text.size(). Every line break str.splitlines()
// knows is such a byte.
std::size_t find_control_or_non_ascii(std::string_view text, std::size_t pos);

// The first position at or after `pos` holding '"', '\\', a byte below 0x20 or at or above 0x80
// (what ends a plain run inside a JSON string), or text.size().
std::size_t find_string_special(std::string_view text, std::size_t pos);

// --- Implementation ---

namespace byte_scan {

inline constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
inline constexpr std::uint64_t k_high_bits = 0x8080808080808080ULL;

inline std::uint64_t load_word(const char* at) {
  std::uint64_t word = 0;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// Non-zero when some byte of `word` is below `limit` (limit <= 0x80) or has its high bit set.
// Exact as to whether there is one (not as to where): a word flagged holds such a byte.
constexpr std::uint64_t flags_below_or_high(std::uint64_t word, std::uint8_t limit) {
  return ((word - k_ones * limit) | word) & k_high_bits;
}

// Non-zero when some byte of `word` equals `byte` (exact as to whether there is one).
constexpr std::uint64_t flags_equal(std::uint64_t word, std::uint8_t byte) {
  const std::uint64_t x = word ^ (k_ones * byte);
  return (x - k_ones) & ~x & k_high_bits;
}

} // namespace byte_scan

inline std::size_t find_control_or_non_ascii(std::string_view text, std::size_t pos) {
  const char* data = text.data();
  const std::size_t size = text.size();
#if defined(__SSE2__)
  // Sixteen at a time: as signed bytes, the ones wanted are exactly those below 0x20.
  const __m128i space = _mm_set1_epi8(0x20);
  while (pos + 16 <= size) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos));
    if (const int hits = _mm_movemask_epi8(_mm_cmplt_epi8(block, space)); hits != 0) {
      return pos + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(hits)));
    }
    pos += 16;
  }
#endif
  while (pos + 8 <= size &&
         byte_scan::flags_below_or_high(byte_scan::load_word(data + pos), 0x20) == 0) {
    pos += 8;
  }
  while (pos < size) {
    const auto c = static_cast<unsigned char>(data[pos]);
    if (c < 0x20 || c >= 0x80) {
      return pos;
    }
    ++pos;
  }
  return size;
}

inline std::size_t find_string_special(std::string_view text, std::size_t pos) {
  const char* data = text.data();
  const std::size_t size = text.size();
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (pos + 16 <= size) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + pos));
    const __m128i wanted =
        _mm_or_si128(_mm_cmplt_epi8(block, space),
                     _mm_or_si128(_mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash)));
    if (const int hits = _mm_movemask_epi8(wanted); hits != 0) {
      return pos + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(hits)));
    }
    pos += 16;
  }
#endif
  while (pos + 8 <= size) {
    const std::uint64_t word = byte_scan::load_word(data + pos);
    if ((byte_scan::flags_below_or_high(word, 0x20) | byte_scan::flags_equal(word, '"') |
         byte_scan::flags_equal(word, '\\')) != 0) {
      break;
    }
    pos += 8;
  }
  while (pos < size) {
    const auto c = static_cast<unsigned char>(data[pos]);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) {
      return pos;
    }
    ++pos;
  }
  return size;
}

} // namespace fib::detail
