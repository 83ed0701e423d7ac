#include "fib/util/sha256.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FIB_SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace fib {
namespace {

// The round constants and the initial hash value of FIPS 180-4, section 4.2.2 and 5.3.3 (the first
// 32 bits of the fractional parts of the cube roots of the first 64 primes, and of the square
// roots of the first 8).
alignas(16) constexpr std::uint32_t k_rounds[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
constexpr std::array<std::uint32_t, 8> k_initial_state = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

// Misuse (update or finish after finish, or on a moved-from object) is a programming error with no
// sensible recovery: the process stops with a message.
void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fib: SHA-256: %s\n", what);
    std::abort();
  }
}

constexpr std::uint32_t rotate_right(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

std::uint32_t load_big_endian(const std::uint8_t* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

// The compression function of section 6.2.2 over `count` consecutive 64-byte blocks.
void compress_portable(std::uint32_t* state, const std::uint8_t* blocks, std::size_t count) {
  for (std::size_t b = 0; b < count; ++b, blocks += 64) {
    std::uint32_t w[64];
    for (int t = 0; t < 16; ++t) {
      w[t] = load_big_endian(blocks + 4 * t);
    }
    for (int t = 16; t < 64; ++t) {
      const std::uint32_t s0 =
          rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 =
          rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], b2 = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      const std::uint32_t sum1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
      const std::uint32_t choice = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + sum1 + choice + k_rounds[t] + w[t];
      const std::uint32_t sum0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
      const std::uint32_t majority = (a & b2) ^ (a & c) ^ (b2 & c);
      const std::uint32_t t2 = sum0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b2;
      b2 = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b2;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#ifdef FIB_SHA256_X86

// The same function with the SHA extensions. SHA256RNDS2 does two rounds on the state split as
// {A, B, E, F} and {C, D, G, H} (the first in the high lanes), taking the two rounds' W + K from
// the low half of its third operand; SHA256MSG1 and SHA256MSG2 compute the message schedule four
// words at a time (the σ0 part, then the σ1 part, which needs the words just made).
__attribute__((target("sha,sse4.1,ssse3"))) void
compress_sha_extensions(std::uint32_t* state, const std::uint8_t* blocks, std::size_t count) {
  // Lanes (low to high) of the loads: {a, b, c, d} and {e, f, g, h}.
  const __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  const __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  const __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);
  const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);    // lanes {f, e, b, a}
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0); // lanes {h, g, d, c}
  // Each 32-bit word of the block is big-endian.
  const __m128i byte_order = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  for (std::size_t b = 0; b < count; ++b, blocks += 64) {
    const __m128i abef_before = abef;
    const __m128i cdgh_before = cdgh;
    __m128i w[4]; // w[g % 4] holds W[4g .. 4g+3] while group g of four rounds runs
    // Unrolled whole, w[] lives in registers and the schedule of later groups overlaps the rounds
    // of earlier ones: 1.3 -> 1.6 GB/s on the benchmark machine (bench/sha256_throughput.cpp).
#pragma GCC unroll 16
    for (int group = 0; group < 16; ++group) {
      __m128i& words = w[group % 4];
      if (group < 4) {
        words = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks + 16 * group)), byte_order);
      } else {
        // Before: words = W[t-16 .. t-13], w[+1] = W[t-12 ..], w[+2] = W[t-8 ..], w[+3] = W[t-4 ..]
        // for t = 4 * group. W[t-7 .. t-4] are the middle four words of w[+2] and w[+3].
        const __m128i& next = w[(group + 1) % 4];
        const __m128i& third = w[(group + 2) % 4];
        const __m128i& last = w[(group + 3) % 4];
        words = _mm_sha256msg1_epu32(words, next);
        words = _mm_add_epi32(words, _mm_alignr_epi8(last, third, 4));
        words = _mm_sha256msg2_epu32(words, last);
      }
      __m128i schedule = _mm_add_epi32(
          words, _mm_load_si128(reinterpret_cast<const __m128i*>(k_rounds + 4 * group)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, schedule);
      schedule = _mm_shuffle_epi32(schedule, 0x0E); // the high two words to the low half
      abef = _mm_sha256rnds2_epu32(abef, cdgh, schedule);
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

// Whether the processor has the SHA extensions and the SSSE3 and SSE4.1 instructions used beside
// them (CPUID leaf 7 EBX bit 29; leaf 1 ECX bits 9 and 19).
bool has_sha_extensions() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  const bool ssse3_and_sse41 = (ecx & (1u << 9)) != 0 && (ecx & (1u << 19)) != 0;
  if (!ssse3_and_sse41 || __get_cpuid_max(0, nullptr) < 7) {
    return false;
  }
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  return (ebx & (1u << 29)) != 0;
}

#endif

using Compress = void (*)(std::uint32_t*, const std::uint8_t*, std::size_t);

// The compression function of `code` on this processor (the processor is asked once).
Compress compress_function(Sha256Code code) {
#ifdef FIB_SHA256_X86
  static const bool extensions = has_sha_extensions();
  return code == Sha256Code::fastest && extensions ? compress_sha_extensions : compress_portable;
#else
  (void)code;
  return compress_portable;
#endif
}

} // namespace

bool sha256_uses_sha_extensions() {
  return compress_function(Sha256Code::fastest) != compress_portable;
}

Sha256::Sha256(Sha256Code code) : m_state(k_initial_state), m_code(code) {}

Sha256::Sha256(Sha256&& other) noexcept
    : m_state(other.m_state), m_pending(other.m_pending), m_length(other.m_length),
      m_code(other.m_code), m_usable(std::exchange(other.m_usable, false)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    m_state = other.m_state;
    m_pending = other.m_pending;
    m_length = other.m_length;
    m_code = other.m_code;
    m_usable = std::exchange(other.m_usable, false);
  }
  return *this;
}

Sha256& Sha256::update(std::string_view bytes) {
  require(m_usable, "update after finish");
  if (bytes.empty()) {
    return *this; // (and no memcpy from a null pointer)
  }
  const Compress compress = compress_function(m_code);
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t size = bytes.size();
  std::size_t pending = static_cast<std::size_t>(m_length % 64);
  m_length += size;
  if (pending > 0) {
    const std::size_t taken = std::min(size, 64 - pending);
    std::memcpy(m_pending.data() + pending, data, taken);
    data += taken;
    size -= taken;
    pending += taken;
    if (pending < 64) {
      return *this;
    }
    compress(m_state.data(), m_pending.data(), 1);
  }
  if (const std::size_t whole = size / 64; whole > 0) {
    compress(m_state.data(), data, whole);
    data += whole * 64;
    size -= whole * 64;
  }
  if (size > 0) {
    std::memcpy(m_pending.data(), data, size);
  }
  return *this;
}

Sha256Digest Sha256::finish() {
  require(m_usable, "finish after finish");
  m_usable = false;
  // Padding (section 5.1.1): a 1 bit, zeros up to 56 bytes mod 64, the length in bits, big-endian.
  const std::uint64_t bits = m_length * 8;
  std::size_t pending = static_cast<std::size_t>(m_length % 64);
  const Compress compress = compress_function(m_code);
  m_pending[pending++] = 0x80;
  if (pending > 56) {
    std::memset(m_pending.data() + pending, 0, 64 - pending);
    compress(m_state.data(), m_pending.data(), 1);
    pending = 0;
  }
  std::memset(m_pending.data() + pending, 0, 56 - pending);
  for (std::size_t i = 0; i < 8; ++i) {
    m_pending[56 + i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  }
  compress(m_state.data(), m_pending.data(), 1);
  Sha256Digest digest{};
  for (std::size_t i = 0; i < m_state.size(); ++i) {
    digest[4 * i] = static_cast<std::uint8_t>(m_state[i] >> 24);
    digest[4 * i + 1] = static_cast<std::uint8_t>(m_state[i] >> 16);
    digest[4 * i + 2] = static_cast<std::uint8_t>(m_state[i] >> 8);
    digest[4 * i + 3] = static_cast<std::uint8_t>(m_state[i]);
  }
  return digest;
}

Sha256Digest sha256(std::string_view bytes) {
  return Sha256().update(bytes).finish();
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr std::string_view k_digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (const std::uint8_t byte : digest) {
    hex += k_digits[byte >> 4];
    hex += k_digits[byte & 0x0f];
  }
  return hex;
}

} // namespace fib
