// SHA-1 against the FIPS 180-4 / RFC 3174 vectors and values from Python's hashlib (multi-block
// messages, a million bytes, and updates split at every boundary, which must not change the
// digest).

#include "util/sha1.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fib {
namespace {

std::string sha1_of(std::string_view data) {
  detail::Sha1 sha;
  sha.update(data);
  return sha.hex_digest();
}

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(sha1_of(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_of("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_of("The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
  EXPECT_EQ(sha1_of(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1, SplitUpdatesGiveTheSameDigest) {
  std::string data;
  for (int repeat = 0; repeat < 3; ++repeat) {
    for (int byte = 0; byte < 256; ++byte) {
      data += static_cast<char>(byte);
    }
  }
  const std::string whole = "ac2a264c8ec1f4232a40854e8239bc3a697ab1d2"; // hashlib, 768 bytes
  ASSERT_EQ(sha1_of(data), whole);
  for (std::size_t split = 0; split <= data.size(); split += 7) {
    detail::Sha1 sha;
    sha.update(std::string_view(data).substr(0, split));
    sha.update(std::string_view(data).substr(split));
    EXPECT_EQ(sha.hex_digest(), whole) << "split at " << split;
  }
}

} // namespace
} // namespace fib
