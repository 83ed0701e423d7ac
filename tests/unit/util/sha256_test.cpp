// SHA-256 against the FIPS 180-4 example vectors, with both codes (the x86 SHA extensions where
// the processor has them, and the portable code); incremental updates, moves and the hex form.

#include <fib/util/sha256.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <utility>

namespace fib {
namespace {

Sha256Digest digest_with(Sha256Code code, std::string_view bytes) {
  return Sha256(code).update(bytes).finish();
}

TEST(Sha256, KnownAnswers) {
  for (const Sha256Code code : {Sha256Code::fastest, Sha256Code::portable}) {
    SCOPED_TRACE(code == Sha256Code::fastest ? "fastest" : "portable");
    EXPECT_EQ(to_hex(digest_with(code, "")),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(to_hex(digest_with(code, "abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(to_hex(digest_with(code, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(to_hex(digest_with(code, "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                                       "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    EXPECT_EQ(to_hex(digest_with(code, std::string(1'000'000, 'a'))),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// Every length around the block and padding boundaries, and random bytes in random pieces: the
// processor's code and the portable one agree.
TEST(Sha256, BothCodesAgreeOnEveryLengthAndSplit) {
  std::mt19937 random(20261206);
  std::string data(5000, '\0');
  for (char& c : data) {
    c = static_cast<char>(random());
  }
  for (std::size_t length = 0; length <= 300; ++length) {
    SCOPED_TRACE(length);
    const std::string_view bytes = std::string_view(data).substr(0, length);
    ASSERT_EQ(digest_with(Sha256Code::fastest, bytes), digest_with(Sha256Code::portable, bytes));
  }
  for (int trial = 0; trial < 50; ++trial) {
    Sha256 fastest(Sha256Code::fastest);
    Sha256 portable(Sha256Code::portable);
    std::size_t at = 0;
    while (at < data.size()) {
      const std::size_t piece = std::min<std::size_t>(random() % 200, data.size() - at);
      fastest.update(std::string_view(data).substr(at, piece));
      portable.update(std::string_view(data).substr(at, piece));
      at += piece;
    }
    ASSERT_EQ(fastest.finish(), portable.finish()) << "trial " << trial;
  }
}

// Where the processor says it has the SHA extensions (Linux's "sha_ni" flag), they are used.
TEST(Sha256, TheProcessorsShaExtensionsAreUsedWhereItHasThem) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  if (!cpuinfo) {
    GTEST_SKIP() << "no /proc/cpuinfo";
  }
  std::string flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) == 0) {
      flags = line + " ";
      break;
    }
  }
  if (flags.empty()) {
    GTEST_SKIP() << "/proc/cpuinfo lists no flags (not an x86 processor)";
  }
  const bool listed = flags.find(" sha_ni ") != std::string::npos &&
                      flags.find(" sse4_1 ") != std::string::npos &&
                      flags.find(" ssse3 ") != std::string::npos;
  EXPECT_EQ(sha256_uses_sha_extensions(), listed) << flags;
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
