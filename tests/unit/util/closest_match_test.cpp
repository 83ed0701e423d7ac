// The "did you mean" helpers.

#include <fib/util/closest_match.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fib {
namespace {

TEST(EditDistance, CountsEditsAndNeighbourSwapsAsOne) {
  EXPECT_EQ(edit_distance("", ""), 0U);
  EXPECT_EQ(edit_distance("gemm", "gemm"), 0U);
  EXPECT_EQ(edit_distance("", "abc"), 3U);
  EXPECT_EQ(edit_distance("abc", ""), 3U);
  EXPECT_EQ(edit_distance("gemm", "gem"), 1U);        // a deletion
  EXPECT_EQ(edit_distance("gemm", "gemmm"), 1U);      // an insertion
  EXPECT_EQ(edit_distance("gemm", "gexm"), 1U);       // a substitution
  EXPECT_EQ(edit_distance("rmsnorm", "rmsnrom"), 1U); // a swap of neighbours
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("ab", "ba"), 1U);
}

TEST(ClosestMatch, TheNearestCandidateWithinAThirdOfTheWord) {
  const std::vector<std::string> op_types = {"gemm", "gqa_paged", "mla_paged", "rmsnorm"};
  EXPECT_EQ(closest_match("rmsnrom", op_types), "rmsnorm");
  EXPECT_EQ(closest_match("GEMM", op_types), "gemm"); // case does not count
  EXPECT_EQ(closest_match("gqa_pagd", op_types), "gqa_paged");
  EXPECT_EQ(closest_match("nosuch", op_types), ""); // nothing is that close
  EXPECT_EQ(closest_match("gemm", op_types), "");   // itself a candidate
  EXPECT_EQ(closest_match("x", op_types), "");
  EXPECT_EQ(closest_match("a", std::vector<std::string>{"b", "c"}), "b"); // the first of equals
  EXPECT_EQ(closest_match("--local", std::vector<std::string>{"--dataset", "--locale"}),
            "--locale");
  EXPECT_EQ(closest_match("anything", std::vector<std::string>{}), "");
}

} // namespace
} // namespace fib
