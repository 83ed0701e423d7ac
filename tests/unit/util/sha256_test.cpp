// SHA-256 against the FIPS 180-4 example vectors; incremental updates, moves and the hex form.

#include <fib/util/sha256.hpp>

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace fib {
namespace {

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1'000'000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) {
    data += static_cast<char>(i * 31 + 7);
  }
  const Sha256Digest whole = sha256(data);
  for (const std::size_t split : {0, 1, 55, 56, 63, 64, 65, 500, 999, 1000}) {
    SCOPED_TRACE(split);
    Sha256 incremental;
    incremental.update(std::string_view(data).substr(0, split));
    incremental.update(std::string_view(data).substr(split));
    EXPECT_EQ(incremental.finish(), whole);
  }
  Sha256 byte_by_byte;
  for (const char c : data) {
    byte_by_byte.update(std::string_view(&c, 1));
  }
  EXPECT_EQ(byte_by_byte.finish(), whole);
}

TEST(Sha256, MovedObjectKeepsItsState) {
  Sha256 first;
  first.update("ab");
  Sha256 second(std::move(first));
  second.update("c");
  Sha256 third;
  third = std::move(second);
  EXPECT_EQ(to_hex(third.finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, HexIsLowercaseAndFull) {
  Sha256Digest digest{};
  digest[0] = 0xAB;
  digest[31] = 0x0F;
  const std::string hex = to_hex(digest);
  EXPECT_EQ(hex.size(), 64u);
  EXPECT_EQ(hex.substr(0, 4), "ab00");
  EXPECT_EQ(hex.substr(60), "000f");
}

} // namespace
} // namespace fib
