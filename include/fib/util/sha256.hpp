#pragma once
// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface: the digest fib's result cache uses for its
// keys (include/fib/util/result_cache.hpp), where a collision would hand one file the findings of
// another, so a cryptographic hash is the right tool.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

using Sha256Digest = std::array<std::uint8_t, 32>;

// An incremental SHA-256: update() any number of times, then finish() once. After finish() the
// object may only be destroyed or assigned over (a moved-from object likewise). Non-copyable,
// movable. OpenSSL failures (out of memory) abort the process: the digest has no error path.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&& other) noexcept;
  Sha256& operator=(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Feeds `bytes`; returns *this so that updates can be chained.
  Sha256& update(std::string_view bytes);
  // The digest of everything fed so far. Call once.
  Sha256Digest finish();

private:
  void* m_context = nullptr; // EVP_MD_CTX*, kept opaque so that OpenSSL stays out of this header
};

// The digest of `bytes` in one call.
Sha256Digest sha256(std::string_view bytes);

// `digest` as 64 lowercase hexadecimal digits.
std::string to_hex(const Sha256Digest& digest);

} // namespace fib
