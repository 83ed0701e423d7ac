// The small helpers of the dataset checks (src/validate/dataset_job.hpp).

#include "validate/dataset_job.hpp"

#include <gtest/gtest.h>

namespace fib::dataset_checks {
namespace {

// Absolute, or climbing (has_parent_segment, tested on every short path in path_safety_test.cpp).
TEST(PointsOutside, AbsoluteOrWithADotDotPart) {
  EXPECT_FALSE(points_outside("blob/workloads/op/w.safetensors"));
  EXPECT_FALSE(points_outside(""));
  EXPECT_FALSE(points_outside("a..b/..c/d.."));
  EXPECT_FALSE(points_outside("./a/./b"));
  EXPECT_TRUE(points_outside("/etc/passwd"));
  EXPECT_TRUE(points_outside("//x"));
  EXPECT_TRUE(points_outside(".."));
  EXPECT_TRUE(points_outside("../x"));
  EXPECT_TRUE(points_outside("a/../b"));
  EXPECT_TRUE(points_outside("a//../b"));
  EXPECT_TRUE(points_outside("a/.."));
  EXPECT_TRUE(points_outside("a/../"));
}

} // namespace
} // namespace fib::dataset_checks
