#pragma once
// Incremental SHA-1 (FIPS 180-4), used for content identities. Not for security.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fib::detail {

class Sha1 {
public:
  void update(std::string_view data);
  // Finishes the digest and returns it as 40 lowercase hex digits. Call once.
  std::string hex_digest();

private:
  void process_block(const unsigned char* block);
  std::array<std::uint32_t, 5> m_state = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u,
                                          0xC3D2E1F0u};
  std::array<unsigned char, 64> m_buffer{};
  std::size_t m_buffered = 0;
  std::uint64_t m_total_bytes = 0;
};

} // namespace fib::detail
