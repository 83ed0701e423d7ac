// XXH64, the checksum of the result cache's packs, against values of the reference implementation
// (libxxhash 0.8.1).

#include "util/xxh64.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fib {
namespace {

// Lengths that take each path of the algorithm: the short path, the 8-, 4- and 1-byte tails, and
// the 32-byte stripes.
TEST(Xxh64, MatchesTheReferenceImplementation) {
  EXPECT_EQ(detail::xxh64(""), 0xef46db3751d8e999ull);
  EXPECT_EQ(detail::xxh64("abc"), 0x44bc2cf5ad770999ull);
  EXPECT_EQ(detail::xxh64("abcdefghijkl"), 0x4b09b7d3a233d4b3ull);
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(detail::xxh64(fox), 0x0b242d361fda71bcull);
  EXPECT_EQ(detail::xxh64(fox, 42), 0xaa9f288a8baa3d3full);
  std::string bytes;
  for (int i = 0; i < 100; ++i) {
    bytes += static_cast<char>(i);
  }
  EXPECT_EQ(detail::xxh64(bytes), 0x6ac1e58032166597ull);
}

} // namespace
} // namespace fib
