// unsafe_segment_reason: which names may be one path segment below a directory fib writes into;
// joined_path_text: the text of joining a path to a root.

#include <fib/util/path_safety.hpp>

#include "util/strings.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

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

namespace fib {
namespace {

// joined_path_text gives exactly the text of std::filesystem::path's operator/, for the roots
// and relative paths datasets name, odd ones included.
TEST(JoinedPathText, IsTheTextOfPathJoining) {
  const std::vector<std::string> roots = {"/tmp/ds", "/tmp/ds/", "/",     "",    "ds",
                                          "./ds",    "/a/.",     "/a/..", "a//b"};
  const std::vector<std::string> relatives = {"./blob/w.safetensors",
                                              "blob/w.safetensors",
                                              "/etc/passwd",
                                              "",
                                              ".",
                                              "..",
                                              "../../x",
                                              "a//b/",
                                              "//net/share",
                                              "blob/é.safetensors"};
  for (const std::string& root : roots) {
    for (const std::string& relative : relatives) {
      EXPECT_EQ(detail::joined_path_text(root, relative),
                (std::filesystem::path(root) / relative).native())
          << "root '" << root << "', relative '" << relative << "'";
    }
  }
}

} // namespace
} // namespace fib
