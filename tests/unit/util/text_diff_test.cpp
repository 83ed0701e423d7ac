#include "test_support.hpp"

#include <fib/util/text_diff.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;

constexpr std::string_view k_header = "--- a/x\n+++ b/x\n";

std::string diff(std::string_view before, std::string_view after, int context_lines = 3) {
  return unified_diff(before, after, "a/x", "b/x", context_lines);
}

// "<prefix>1\n<prefix>2\n...<prefix>count\n".
std::string numbered_lines(int first, int last, std::string_view prefix = "") {
  std::string text;
  for (int line = first; line <= last; ++line) {
    text += std::string(prefix) + std::to_string(line) + "\n";
  }
  return text;
}

// The lines of `text`, each with its '\n' (the last one may lack it).
std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t newline = text.find('\n', start);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    text += line;
  }
  return text;
}

// Applies a unified diff made by unified_diff to `before`, checking every context and removed
// line; independent of /usr/bin/patch. Fails the test (and returns what it has) on a mismatch.
std::string apply_unified_diff(std::string_view before, std::string_view patch) {
  const std::vector<std::string> source = split_lines(before);
  const std::vector<std::string> lines = split_lines(patch);
  std::string result;
  std::size_t next_source = 0;
  std::size_t index = 2; // past "---" and "+++"
  while (index < lines.size()) {
    const std::string& header = lines[index];
    EXPECT_EQ(header.rfind("@@ -", 0), 0U) << header;
    // "@@ -start[,count] +...": an empty range names the line before it.
    const std::size_t number_end = header.find_first_of(", ", 4);
    const std::size_t start = std::stoul(header.substr(4, number_end - 4));
    const bool empty_range = header.compare(number_end, 3, ",0 ") == 0;
    const std::size_t hunk_start = empty_range ? start : start - 1;
    EXPECT_GE(hunk_start, next_source) << header;
    while (next_source < hunk_start && next_source < source.size()) {
      result += source[next_source++];
    }
    ++index;
    while (index < lines.size() && lines[index].rfind("@@ ", 0) != 0) {
      const char kind = lines[index][0];
      std::string content = lines[index].substr(1);
      ++index;
      if (index < lines.size() && lines[index].rfind("\\ No newline at end of file\n", 0) == 0) {
        content.pop_back();
        ++index;
      }
      if (kind == ' ' || kind == '-') {
        EXPECT_LT(next_source, source.size());
        if (next_source >= source.size()) {
          return result;
        }
        EXPECT_EQ(source[next_source], content);
        ++next_source;
      }
      if (kind == ' ' || kind == '+') {
        result += content;
      }
      EXPECT_TRUE(kind == ' ' || kind == '-' || kind == '+') << lines[index - 1];
    }
  }
  while (next_source < source.size()) {
    result += source[next_source++];
  }
  return result;
}

// Lines changed by a diff ('-' plus '+'), for comparing against the shortest possible.
std::size_t changed_line_count(std::string_view patch) {
  std::size_t count = 0;
  const std::vector<std::string> lines = split_lines(patch);
  for (std::size_t index = 2; index < lines.size(); ++index) {
    if (lines[index][0] == '-' || lines[index][0] == '+') {
      ++count;
    }
  }
  return count;
}

// Size of the shortest edit script (lines removed plus lines added), by quadratic dynamic
// programming over the longest common subsequence.
std::size_t shortest_edit_size(const std::vector<std::string>& before,
                               const std::vector<std::string>& after) {
  std::vector<std::vector<std::size_t>> common(before.size() + 1,
                                               std::vector<std::size_t>(after.size() + 1, 0));
  for (std::size_t i = before.size(); i-- > 0;) {
    for (std::size_t j = after.size(); j-- > 0;) {
      common[i][j] = before[i] == after[j] ? common[i + 1][j + 1] + 1
                                           : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  return before.size() + after.size() - 2 * common[0][0];
}

// A text and a random edit of it, from a deterministic generator. Lines come from an alphabet of
// `distinct_lines` values, so small alphabets give many repeated lines (ambiguous diffs).
struct EditCase {
  std::string before;
  std::string after;
};

EditCase random_edit(std::mt19937& random, int distinct_lines, int max_lines, int max_edits) {
  const auto draw = [&random](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int fresh = 0; // inserted lines get names never used before when the alphabet is large
  const auto make_line = [&]() {
    if (distinct_lines > 0) {
      return "line " + std::to_string(draw(0, distinct_lines - 1)) + "\n";
    }
    return "unique " + std::to_string(fresh++) + "\n";
  };
  std::vector<std::string> lines;
  const int count = draw(0, max_lines);
  for (int line = 0; line < count; ++line) {
    lines.push_back(make_line());
  }
  std::vector<std::string> edited = lines;
  const int edits = draw(1, max_edits);
  for (int edit = 0; edit < edits; ++edit) {
    const int size = static_cast<int>(edited.size());
    const int position = draw(0, size);
    const int length = draw(1, 4);
    const auto at = edited.begin() + position;
    switch (draw(0, 2)) {
    case 0: // remove
      edited.erase(at, edited.begin() + std::min(size, position + length));
      break;
    case 1: // insert
      for (int line = 0; line < length; ++line) {
        edited.insert(edited.begin() + position, make_line());
      }
      break;
    default: // replace one line
      if (position < size) {
        *at = make_line();
      }
      break;
    }
  }
  EditCase result{join(lines), join(edited)};
  // Sometimes drop the final newline on one side or both.
  const int newline_edit = draw(0, 7);
  if ((newline_edit == 1 || newline_edit == 3) && !result.before.empty()) {
    result.before.pop_back();
  }
  if ((newline_edit == 2 || newline_edit == 3) && !result.after.empty()) {
    result.after.pop_back();
  }
  return result;
}

std::string quoted(const std::filesystem::path& path) {
  return std::string("'") + path.string() + "'";
}

// Everything after the first two lines (the "---" and "+++" headers).
std::string body(std::string_view patch) {
  std::size_t start = 0;
  for (int line = 0; line < 2 && start != std::string_view::npos; ++line) {
    start = patch.find('\n', start);
    start = start == std::string_view::npos ? start : start + 1;
  }
  return start == std::string_view::npos ? std::string() : std::string(patch.substr(start));
}

TEST(TextDiff, EqualTextsGiveEmptyDiff) {
  EXPECT_EQ(diff("", ""), "");
  EXPECT_EQ(diff("a\nb\n", "a\nb\n"), "");
  EXPECT_EQ(diff("a\nb", "a\nb"), "");
}

TEST(TextDiff, SingleChangeInTheMiddleHasThreeLinesOfContext) {
  const std::string before = numbered_lines(1, 10);
  std::string after = numbered_lines(1, 4) + "five\n" + numbered_lines(6, 10);
  EXPECT_EQ(diff(before, after), std::string(k_header) + "@@ -2,7 +2,7 @@\n"
                                                         " 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
  EXPECT_EQ(unified_diff(before, after, "old.json", "new.json"),
            "--- old.json\n+++ new.json\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(TextDiff, ContextLinesCountIsHonoured) {
  const std::string before = numbered_lines(1, 10);
  const std::string after = numbered_lines(1, 4) + "five\n" + numbered_lines(6, 10);
  EXPECT_EQ(diff(before, after, 1), std::string(k_header) + "@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n");
  EXPECT_EQ(diff(before, after, 0), std::string(k_header) + "@@ -5 +5 @@\n-5\n+five\n");
  EXPECT_EQ(diff(before, after, -2), diff(before, after, 0));
}

TEST(TextDiff, EmptyRangesNameTheLineBefore) {
  const std::string before = numbered_lines(1, 10);
  // Insertion after line 4 and removal of line 8, without context.
  const std::string after =
      numbered_lines(1, 4) + "new\n" + numbered_lines(5, 7) + numbered_lines(9, 10);
  EXPECT_EQ(diff(before, after, 0),
            std::string(k_header) + "@@ -4,0 +5 @@\n+new\n@@ -8 +8,0 @@\n-8\n");
}

TEST(TextDiff, InsertionAtStart) {
  const std::string before = numbered_lines(1, 6);
  EXPECT_EQ(diff(before, "zero\n" + before),
            std::string(k_header) + "@@ -1,3 +1,4 @@\n+zero\n 1\n 2\n 3\n");
  EXPECT_EQ(diff(before, "zero\n" + before, 0), std::string(k_header) + "@@ -0,0 +1 @@\n+zero\n");
}

TEST(TextDiff, DeletionAtEnd) {
  const std::string before = numbered_lines(1, 6);
  EXPECT_EQ(diff(before, numbered_lines(1, 4)),
            std::string(k_header) + "@@ -2,5 +2,3 @@\n 2\n 3\n 4\n-5\n-6\n");
}

TEST(TextDiff, MissingTrailingNewlineBefore) {
  EXPECT_EQ(diff("a\nb\nc", "a\nb\nc\n"), std::string(k_header) +
                                              "@@ -1,3 +1,3 @@\n a\n b\n-c\n"
                                              "\\ No newline at end of file\n+c\n");
}

TEST(TextDiff, MissingTrailingNewlineAfter) {
  EXPECT_EQ(diff("a\nb\nc\n", "a\nb\nd"), std::string(k_header) +
                                              "@@ -1,3 +1,3 @@\n a\n b\n-c\n+d\n"
                                              "\\ No newline at end of file\n");
}

TEST(TextDiff, MissingTrailingNewlineOnBothSidesInContext) {
  EXPECT_EQ(diff("a\nb\nc", "x\nb\nc"), std::string(k_header) + "@@ -1,3 +1,3 @@\n-a\n+x\n b\n c\n"
                                                                "\\ No newline at end of file\n");
  EXPECT_EQ(diff("a", "b"), std::string(k_header) + "@@ -1 +1 @@\n-a\n"
                                                    "\\ No newline at end of file\n+b\n"
                                                    "\\ No newline at end of file\n");
}

TEST(TextDiff, DistantChangesMakeTwoHunks) {
  const std::string before = numbered_lines(1, 20);
  // Lines 3 and 11 change: 7 unchanged lines between them, one more than 2 * 3.
  const std::string after = numbered_lines(1, 2) + "three\n" + numbered_lines(4, 10) + "eleven\n" +
                            numbered_lines(12, 20);
  EXPECT_EQ(diff(before, after), std::string(k_header) +
                                     "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
                                     "@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+eleven\n 12\n 13\n 14\n");
}

TEST(TextDiff, CloseChangesMergeIntoOneHunk) {
  const std::string before = numbered_lines(1, 20);
  // Lines 3 and 10 change: 6 unchanged lines between them, so the contexts touch.
  const std::string after =
      numbered_lines(1, 2) + "three\n" + numbered_lines(4, 9) + "ten\n" + numbered_lines(11, 20);
  EXPECT_EQ(diff(before, after), std::string(k_header) +
                                     "@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n"
                                     " 9\n-10\n+ten\n 11\n 12\n 13\n");
}

TEST(TextDiff, EmptyBeforeAddsEverything) {
  EXPECT_EQ(diff("", "a\nb\nc\n"), std::string(k_header) + "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n");
  EXPECT_EQ(diff("", "a\n"), std::string(k_header) + "@@ -0,0 +1 @@\n+a\n");
}

TEST(TextDiff, EmptyAfterRemovesEverything) {
  EXPECT_EQ(diff("a\nb\n", ""), std::string(k_header) + "@@ -1,2 +0,0 @@\n-a\n-b\n");
}

TEST(TextDiff, CarriageReturnsAreCompared) {
  EXPECT_EQ(diff("a\r\nb\n", "a\nb\n"), std::string(k_header) + "@@ -1,2 +1,2 @@\n-a\r\n+a\n b\n");
}

TEST(TextDiff, IsMinimalAndAppliesOnSmallRandomEdits) {
  std::mt19937 random(20240611);
  for (int round = 0; round < 400; ++round) {
    const EditCase edit = random_edit(random, round % 2 == 0 ? 3 : 8, 30, 6);
    const std::string patch = diff(edit.before, edit.after);
    SCOPED_TRACE("round " + std::to_string(round) + "\n" + patch);
    if (edit.before == edit.after) {
      EXPECT_EQ(patch, "");
      continue;
    }
    EXPECT_EQ(apply_unified_diff(edit.before, patch), edit.after);
    EXPECT_EQ(changed_line_count(patch),
              shortest_edit_size(split_lines(edit.before), split_lines(edit.after)));
  }
}

TEST(TextDiff, RoundTripsThroughPatch) {
  const std::filesystem::path patch_program = "/usr/bin/patch";
  if (!std::filesystem::exists(patch_program)) {
    GTEST_SKIP() << "no " << patch_program;
  }
  const TempDir dir;
  std::mt19937 random(7);
  for (int round = 0; round < 40; ++round) {
    const EditCase edit = random_edit(random, round % 3 == 0 ? 4 : 50, 60, 8);
    const std::string patch = diff(edit.before, edit.after);
    SCOPED_TRACE("round " + std::to_string(round) + "\n" + patch);
    if (patch.empty()) {
      EXPECT_EQ(edit.before, edit.after);
      continue;
    }
    const auto before_file = dir.write("before-" + std::to_string(round), edit.before);
    const auto patch_file = dir.write("diff-" + std::to_string(round), patch);
    const auto result_file = dir.path() / ("result-" + std::to_string(round));
    const std::string command = patch_program.string() + " --silent --batch --force -o " +
                                quoted(result_file) + " " + quoted(before_file) + " " +
                                quoted(patch_file);
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    EXPECT_EQ(read_file(result_file), edit.after);
  }
}

TEST(TextDiff, MatchesGnuDiffWhenTheDiffIsUnambiguous) {
  const std::filesystem::path diff_program = "/usr/bin/diff";
  if (!std::filesystem::exists(diff_program)) {
    GTEST_SKIP() << "no " << diff_program;
  }
  const TempDir dir;
  // Unique lines and no moves: the longest common subsequence is the set of kept lines, so every
  // correct minimal diff is the same.
  std::vector<EditCase> cases = {
      {numbered_lines(1, 10), numbered_lines(1, 4) + "five\n" + numbered_lines(6, 10)},
      {numbered_lines(1, 20),
       numbered_lines(1, 2) + numbered_lines(5, 12) + "x\n" + numbered_lines(13, 20)},
      {"", "a\nb\n"},
      {"a\nb\n", ""},
      {"a\nb\nc", "a\nb\nc\n"},
      {"a\nb\nc\n", "a\nb\nd"},
      {"a\nb\nc", "z\nb\nc"},
  };
  std::mt19937 random(99);
  for (int round = 0; round < 30; ++round) {
    cases.push_back(random_edit(random, 0, 80, 6));
  }
  for (std::size_t index = 0; index < cases.size(); ++index) {
    const EditCase& edit = cases[index];
    SCOPED_TRACE("case " + std::to_string(index));
    const auto before_file = dir.write("before-" + std::to_string(index), edit.before);
    const auto after_file = dir.write("after-" + std::to_string(index), edit.after);
    const auto output_file = dir.path() / ("gnu-" + std::to_string(index));
    const std::string command = diff_program.string() + " -u " + quoted(before_file) + " " +
                                quoted(after_file) + " > " + quoted(output_file);
    const int status = std::system(command.c_str());
    ASSERT_NE(status, -1);
    const std::string gnu = read_file(output_file);
    EXPECT_EQ(body(diff(edit.before, edit.after)), body(gnu));
  }
}

TEST(TextDiff, LargeTextsWithFewChangesGiveAMinimalDiff) {
  const std::string before = numbered_lines(1, 20000, "line ");
  std::string after = before;
  after.replace(after.find("line 5000\n"), 10, "changed 5000\n");
  after.insert(after.find("line 12000\n"), "inserted\n");
  after.erase(after.find("line 19990\n"), 11);
  const std::string patch = diff(before, after);
  EXPECT_EQ(changed_line_count(patch), 4U);
  EXPECT_EQ(apply_unified_diff(before, patch), after);
}

TEST(TextDiff, CompletelyDifferentLargeTextsStayCorrectAndBounded) {
  const std::string before = numbered_lines(1, 20000, "old ");
  const std::string after = numbered_lines(1, 20000, "new ");
  const std::string patch = diff(before, after);
  EXPECT_EQ(changed_line_count(patch), 40000U);
  EXPECT_EQ(apply_unified_diff(before, patch), after);
}

TEST(TextDiff, ManyScatteredChangesInLargeTextsStayCorrect) {
  // Far more differences than the exact search is allowed to explore: the diff may be coarser
  // than the shortest, but it must still apply.
  std::mt19937 random(3);
  std::vector<std::string> before_lines;
  std::vector<std::string> after_lines;
  for (int line = 0; line < 20000; ++line) {
    const std::string value = std::to_string(std::uniform_int_distribution<int>(0, 9)(random));
    before_lines.push_back("v" + value + "\n");
    after_lines.push_back(line % 3 == 0 ? "w" + value + "\n" : before_lines.back());
  }
  const std::string before = join(before_lines);
  const std::string after = join(after_lines);
  const std::string patch = diff(before, after);
  EXPECT_EQ(apply_unified_diff(before, patch), after);
}

} // namespace
} // namespace fib
