#include "util/xxh64.hpp"

namespace fib::detail {
namespace {

constexpr std::uint64_t k_prime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t k_prime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t k_prime3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t k_prime4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t k_prime5 = 0x27D4EB2F165667C5ull;

std::uint64_t rotl(std::uint64_t value, int bits) {
  return (value << bits) | (value >> (64 - bits));
}

// Little-endian loads, whatever the host's byte order.
std::uint64_t load64(const unsigned char* p) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | p[i];
  }
  return value;
}

std::uint32_t load32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

std::uint64_t round(std::uint64_t accumulator, std::uint64_t lane) {
  accumulator += lane * k_prime2;
  accumulator = rotl(accumulator, 31);
  return accumulator * k_prime1;
}

std::uint64_t merge_round(std::uint64_t hash, std::uint64_t accumulator) {
  hash ^= round(0, accumulator);
  return hash * k_prime1 + k_prime4;
}

} // namespace

std::uint64_t xxh64(std::string_view bytes, std::uint64_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char* const end = p + bytes.size();
  std::uint64_t hash = 0;
  if (bytes.size() >= 32) {
    std::uint64_t v1 = seed + k_prime1 + k_prime2;
    std::uint64_t v2 = seed + k_prime2;
    std::uint64_t v3 = seed;
    std::uint64_t v4 = seed - k_prime1;
    const unsigned char* const last_stripe = end - 32;
    do {
      v1 = round(v1, load64(p));
      v2 = round(v2, load64(p + 8));
      v3 = round(v3, load64(p + 16));
      v4 = round(v4, load64(p + 24));
      p += 32;
    } while (p <= last_stripe);
    hash = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    hash = merge_round(hash, v1);
    hash = merge_round(hash, v2);
    hash = merge_round(hash, v3);
    hash = merge_round(hash, v4);
  } else {
    hash = seed + k_prime5;
  }
  hash += static_cast<std::uint64_t>(bytes.size());
  for (; p + 8 <= end; p += 8) {
    hash ^= round(0, load64(p));
    hash = rotl(hash, 27) * k_prime1 + k_prime4;
  }
  if (p + 4 <= end) {
    hash ^= static_cast<std::uint64_t>(load32(p)) * k_prime1;
    hash = rotl(hash, 23) * k_prime2 + k_prime3;
    p += 4;
  }
  for (; p < end; ++p) {
    hash ^= static_cast<std::uint64_t>(*p) * k_prime5;
    hash = rotl(hash, 11) * k_prime1;
  }
  hash ^= hash >> 33;
  hash *= k_prime2;
  hash ^= hash >> 29;
  hash *= k_prime3;
  hash ^= hash >> 32;
  return hash;
}

} // namespace fib::detail
