#include "util/sha1.hpp"

#include <fmt/format.h>

namespace fib::detail {
namespace {

std::uint32_t rotl(std::uint32_t value, int bits) {
  return (value << bits) | (value >> (32 - bits));
}

} // namespace

void Sha1::process_block(const unsigned char* block) {
  std::array<std::uint32_t, 80> w{};
  for (int i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) {
    w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  }
  auto [a, b, c, d, e] = m_state;
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f = 0;
    std::uint32_t k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    const std::uint32_t temp = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = temp;
  }
  m_state[0] += a;
  m_state[1] += b;
  m_state[2] += c;
  m_state[3] += d;
  m_state[4] += e;
}

void Sha1::update(std::string_view data) {
  m_total_bytes += data.size();
  for (const char ch : data) {
    m_buffer[m_buffered++] = static_cast<unsigned char>(ch);
    if (m_buffered == 64) {
      process_block(m_buffer.data());
      m_buffered = 0;
    }
  }
}

std::string Sha1::hex_digest() {
  const std::uint64_t bit_length = m_total_bytes * 8;
  m_buffer[m_buffered++] = 0x80;
  if (m_buffered > 56) {
    while (m_buffered < 64) {
      m_buffer[m_buffered++] = 0;
    }
    process_block(m_buffer.data());
    m_buffered = 0;
  }
  while (m_buffered < 56) {
    m_buffer[m_buffered++] = 0;
  }
  for (int i = 7; i >= 0; --i) {
    m_buffer[m_buffered++] = static_cast<unsigned char>(bit_length >> (8 * i));
  }
  process_block(m_buffer.data());
  std::string out;
  for (const std::uint32_t word : m_state) {
    out += fmt::format("{:08x}", word);
  }
  return out;
}

} // namespace fib::detail
