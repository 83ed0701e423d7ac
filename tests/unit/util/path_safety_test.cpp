// unsafe_segment_reason: which names may be one path segment below a directory fib writes into;
// joined_path_text: the text of joining a path to a root; has_parent_segment: whether a relative
// path climbs.

#include <fib/util/path_safety.hpp>

#include "util/strings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// Every path of up to five characters over {a, ., /} gets the answer std::filesystem::path's parts
// give: one of them is "..".
TEST(PathSafety, HasParentSegmentAgreesWithFilesystemPathOnEveryShortPath) {
  std::vector<std::string> paths{""};
  for (std::size_t begin = 0, length = 1; length <= 5; ++length) {
    const std::size_t end = paths.size();
    for (std::size_t i = begin; i < end; ++i) {
      for (const char c : std::string_view("a./")) {
        paths.push_back(paths[i] + c);
      }
    }
    begin = end;
  }
  ASSERT_EQ(paths.size(), 1u + 3u + 9u + 27u + 81u + 243u);
  for (const std::string& text : paths) {
    const std::filesystem::path path(text);
    const bool climbs = std::any_of(path.begin(), path.end(),
                                    [](const std::filesystem::path& part) { return part == ".."; });
    EXPECT_EQ(has_parent_segment(text), climbs) << "'" << text << "'";
  }
}

} // namespace
} // namespace fib
