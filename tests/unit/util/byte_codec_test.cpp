// ByteWriter / ByteReader: values round-trip; a short or damaged input fails the reader and never
// reads past its end.

#include "util/byte_codec.hpp"

#include <gtest/gtest.h>

namespace fib::detail {
namespace {

TEST(ByteCodec, ValuesRoundTrip) {
  ByteWriter out;
  out.u8(200);
  out.u32(0xdeadbeefu);
  out.u64(0x0123456789abcdefull);
  out.str(std::string("a\0b", 3));
  out.str("");
  ByteReader in(out.bytes());
  EXPECT_EQ(in.u8(), 200u);
  EXPECT_EQ(in.u32(), 0xdeadbeefu);
  EXPECT_EQ(in.u64(), 0x0123456789abcdefull);
  EXPECT_EQ(in.str(), std::string_view("a\0b", 3));
  EXPECT_EQ(in.str(), "");
  EXPECT_TRUE(in.finished());
}

TEST(ByteCodec, EveryTruncationFails) {
  ByteWriter out;
  out.u32(7);
  out.str("hello");
  out.u64(1);
  const std::string bytes = out.bytes();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    ByteReader in(std::string_view(bytes).substr(0, size));
    in.u32();
    in.str();
    in.u64();
    EXPECT_FALSE(in.ok()) << size << " bytes";
  }
}

TEST(ByteCodec, ALengthBeyondTheInputFailsAndStaysFailed) {
  ByteWriter out;
  out.u32(1000);
  out.str("abc");
  ByteReader in(out.bytes());
  EXPECT_EQ(in.str(), "");
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(in.u8(), 0u);
  EXPECT_FALSE(in.finished());
}

} // namespace
} // namespace fib::detail
