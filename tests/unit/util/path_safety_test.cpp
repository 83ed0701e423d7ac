// unsafe_segment_reason: which names may be one path segment below a directory fib writes into.

#include <fib/util/path_safety.hpp>

#include <gtest/gtest.h>

#include <string>

namespace fib {
namespace {

TEST(PathSafety, RefusesEverySegmentThatCouldLeaveOrHide) {
  const std::string too_long(201, 'a');
  const std::string with_nul("a\0b", 3);
  for (const std::string& bad :
       {std::string(), std::string("."), std::string(".."), std::string("../x"), std::string("a/b"),
        std::string("a\\b"), with_nul, std::string("a\nb"), std::string("tab\there"),
        std::string("del\x7f"), std::string("-rf"), std::string(".hidden"), too_long}) {
    EXPECT_NE(unsafe_segment_reason(bad), "") << "accepted: " << bad;
  }
}

TEST(PathSafety, AcceptsOrdinaryNamesAndSaysWhyOtherwise) {
  for (const std::string& good : {std::string("rmsnorm_h128"), std::string("gemm-n128.k2048"),
                                  std::string("a"), std::string(200, 'x'), std::string("café")}) {
    EXPECT_EQ(unsafe_segment_reason(good), "") << "refused: " << good;
  }
  EXPECT_EQ(unsafe_segment_reason(".."), "it names a directory itself");
  EXPECT_EQ(unsafe_segment_reason("a/b"), "it contains a path separator");
  EXPECT_EQ(unsafe_segment_reason(std::string(201, 'a')), "it is longer than 200 bytes");
  EXPECT_EQ(unsafe_segment_reason("-x"), "it starts with '-' (it would read as an option)");
}

} // namespace
} // namespace fib
