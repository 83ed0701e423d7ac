#pragma once
// SHA-256 (FIPS 180-4): the digest fib's result cache uses for its keys
// (include/fib/util/result_cache.hpp), where a collision would hand one file the findings of
// another, so a cryptographic hash is the right tool. fib's own implementation: the x86 SHA
// instructions where the processor has them (about as fast as OpenSSL), portable code elsewhere.
// It replaced OpenSSL's, whose library load and start-up (reading its configuration, setting up
// its providers) cost every fib process about 4 ms before the first byte was hashed.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

using Sha256Digest = std::array<std::uint8_t, 32>;

// An incremental SHA-256: update() any number of times, then finish() once. After finish() the
// object may only be destroyed or assigned over (a moved-from object likewise); using it
// otherwise aborts the process with a message (a programming error: the digest has no error
// path). Non-copyable, movable. Allocates nothing.
// Which code computes the digest: the fastest this processor has (the x86 SHA extensions where
// present), or the portable code, which tests compare against it. Both give the same digests.
enum class Sha256Code { fastest, portable };

class Sha256 {
public:
  explicit Sha256(Sha256Code code = Sha256Code::fastest);
  ~Sha256() = default;
  Sha256(Sha256&& other) noexcept;
  Sha256& operator=(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Feeds `bytes`; returns *this so that updates can be chained.
  Sha256& update(std::string_view bytes);
  // The digest of everything fed so far. Call once.
  Sha256Digest finish();

private:
  std::array<std::uint32_t, 8> m_state{};
  std::array<std::uint8_t, 64> m_pending{}; // the bytes of the block not yet complete
  std::uint64_t m_length = 0;               // bytes fed so far
  Sha256Code m_code = Sha256Code::fastest;
  bool m_usable = true; // false once finished or moved from
};

// Whether this processor has the x86 SHA extensions that Sha256Code::fastest uses.
bool sha256_uses_sha_extensions();

// The digest of `bytes` in one call.
Sha256Digest sha256(std::string_view bytes);

// `digest` as 64 lowercase hexadecimal digits.
std::string to_hex(const Sha256Digest& digest);

} // namespace fib
