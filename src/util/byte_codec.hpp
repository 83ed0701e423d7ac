#pragma once
// ByteWriter / ByteReader: the one home of fib's small binary encodings (results passed between
// processes, cache values). Integers are little-endian fixed width; strings are a u32 length and
// the bytes. The reader never reads past its input: every read reports failure instead, and a
// failed reader stays failed, so a caller checks ok() once after decoding a whole record.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace fib::detail {

// --- Interface ---

class ByteWriter {
public:
  void u8(std::uint8_t value) { m_bytes.push_back(static_cast<char>(value)); }
  void u32(std::uint32_t value) { fixed(value); }
  void u64(std::uint64_t value) { fixed(value); }
  // A string of at most 4 GiB − 1 bytes (longer ones are cut; no value fib encodes comes near).
  void str(std::string_view text) {
    const auto size = static_cast<std::uint32_t>(std::min<std::size_t>(text.size(), 0xffffffffu));
    u32(size);
    m_bytes.append(text.data(), size);
  }

  const std::string& bytes() const { return m_bytes; }
  std::string take() { return std::move(m_bytes); }

private:
  template <class T> void fixed(T value) {
    char buffer[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      buffer[i] = static_cast<char>((value >> (8 * i)) & 0xffu);
    }
    m_bytes.append(buffer, sizeof(T));
  }

  std::string m_bytes;
};

class ByteReader {
public:
  explicit ByteReader(std::string_view bytes) : m_rest(bytes) {}

  std::uint8_t u8() { return static_cast<std::uint8_t>(fixed<std::uint8_t>()); }
  std::uint32_t u32() { return fixed<std::uint32_t>(); }
  std::uint64_t u64() { return fixed<std::uint64_t>(); }
  // A view into the input (valid as long as the input is).
  std::string_view str() {
    const std::uint32_t size = u32();
    if (!m_ok || size > m_rest.size()) {
      m_ok = false;
      return {};
    }
    const std::string_view out = m_rest.substr(0, size);
    m_rest.remove_prefix(size);
    return out;
  }

  // False once any read ran past the end.
  bool ok() const { return m_ok; }
  // The bytes not read yet.
  std::size_t remaining() const { return m_rest.size(); }
  // True when everything was read and nothing failed.
  bool finished() const { return m_ok && m_rest.empty(); }
  // Marks the input as invalid (a decoded value out of range).
  void fail() { m_ok = false; }

private:
  template <class T> T fixed() {
    if (!m_ok || m_rest.size() < sizeof(T)) {
      m_ok = false;
      return 0;
    }
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(m_rest[i])) << (8 * i));
    }
    m_rest.remove_prefix(sizeof(T));
    return value;
  }

  std::string_view m_rest;
  bool m_ok = true;
};

} // namespace fib::detail
