// The small helpers of the dataset checks (src/validate/dataset_job.hpp).

#include "validate/dataset_job.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace fib::dataset_checks {
namespace {

// What std::filesystem::path says of a blob path: the definition points_outside keeps.
bool outside_by_path(const std::string& text) {
  const std::filesystem::path path(text);
  return path.is_absolute() ||
         std::any_of(path.begin(), path.end(),
                     [](const std::filesystem::path& part) { return part == ".."; });
}

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

// Every path of up to five characters over {a, ., /} gets the same answer as from
// std::filesystem::path.
TEST(PointsOutside, AgreesWithFilesystemPathOnEveryShortPath) {
  const std::string alphabet = "a./";
  std::vector<std::string> paths{""};
  for (std::size_t length = 1, begin = 0; length <= 5; ++length) {
    const std::size_t end = paths.size();
    for (std::size_t i = begin; i < end; ++i) {
      for (const char c : alphabet) {
        paths.push_back(paths[i] + c);
      }
    }
    begin = end;
  }
  ASSERT_EQ(paths.size(), 1u + 3u + 9u + 27u + 81u + 243u);
  for (const std::string& path : paths) {
    EXPECT_EQ(points_outside(path), outside_by_path(path)) << "'" << path << "'";
  }
}

} // namespace
} // namespace fib::dataset_checks
