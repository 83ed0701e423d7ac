#pragma once
// XXH64, Yann Collet's fast non-cryptographic 64-bit hash (the published xxHash specification,
// version 0.1.1), written from the specification. fib uses it to detect accidental damage (a
// flipped bit, a torn page) in its result cache's pack files: it is fast enough to check every
// value on every read, and not meant to resist anyone forging data on purpose.

#include <cstdint>
#include <string_view>

namespace fib::detail {

// The XXH64 hash of `bytes` with `seed`; equal to the reference implementation's XXH64().
std::uint64_t xxh64(std::string_view bytes, std::uint64_t seed = 0);

} // namespace fib::detail
