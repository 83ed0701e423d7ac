// run_in_forked_workers: every item's result arrives once, intact; a child that dies loses only
// its item; nothing is left running.

#include "util/forked_pool.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>

namespace fib::detail {
namespace {

std::string result_of(std::size_t i) {
  return "item " + std::to_string(i) + " from " + std::to_string(::getpid());
}

// True when this process has no child left to reap.
bool no_children_left() {
  return ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

TEST(ForkedPool, EveryItemArrivesOnceFromAChild) {
  std::map<std::size_t, std::string> results;
  const ForkedWorkOutcome outcome =
      run_in_forked_workers(50, 3, result_of, [&](std::size_t i, std::string_view bytes) {
        EXPECT_TRUE(results.emplace(i, std::string(bytes)).second) << "item " << i << " twice";
      });
  EXPECT_EQ(outcome.workers_started, 3u);
  EXPECT_TRUE(outcome.unfinished.empty());
  ASSERT_EQ(results.size(), 50u);
  for (const auto& [i, text] : results) {
    EXPECT_EQ(text.rfind("item " + std::to_string(i) + " from ", 0), 0u) << text;
    EXPECT_EQ(text.find(" from " + std::to_string(::getpid())), std::string::npos)
        << "item " << i << " ran in the parent";
  }
  EXPECT_TRUE(no_children_left());
}

TEST(ForkedPool, LargeResultsArriveIntact) {
  const auto big = [](std::size_t i) {
    std::string text(3u << 20, static_cast<char>('a' + i));
    text[12345] = '\0';
    return text;
  };
  std::size_t received = 0;
  const ForkedWorkOutcome outcome =
      run_in_forked_workers(4, 2, big, [&](std::size_t i, std::string_view bytes) {
        EXPECT_EQ(bytes, big(i));
        ++received;
      });
  EXPECT_EQ(received, 4u);
  EXPECT_TRUE(outcome.unfinished.empty());
}

TEST(ForkedPool, AChildThatDiesLosesOnlyItsItem) {
  std::map<std::size_t, std::string> results;
  const auto work = [](std::size_t i) -> std::string {
    if (i == 7) {
      _exit(9);
    }
    if (i == 11) {
      throw std::runtime_error("boom");
    }
    return result_of(i);
  };
  const ForkedWorkOutcome outcome =
      run_in_forked_workers(20, 4, work, [&](std::size_t i, std::string_view bytes) {
        results.emplace(i, std::string(bytes));
      });
  EXPECT_EQ(outcome.unfinished, (std::vector<std::size_t>{7, 11}));
  EXPECT_EQ(results.size(), 18u);
  EXPECT_FALSE(results.contains(7));
  EXPECT_FALSE(results.contains(11));
  EXPECT_TRUE(no_children_left());
}

TEST(ForkedPool, WhenEveryChildDiesTheRestIsUnfinished) {
  const auto work = [](std::size_t i) -> std::string {
    if (i >= 3) {
      _exit(1);
    }
    return result_of(i);
  };
  std::size_t received = 0;
  const ForkedWorkOutcome outcome =
      run_in_forked_workers(10, 2, work, [&](std::size_t, std::string_view) { ++received; });
  EXPECT_EQ(received, 3u);
  EXPECT_EQ(outcome.unfinished, (std::vector<std::size_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(no_children_left());
}

TEST(ForkedPool, NoWorkersLeavesEveryItemUnfinished) {
  const ForkedWorkOutcome outcome = run_in_forked_workers(
      3, 0, result_of, [](std::size_t, std::string_view) { ADD_FAILURE() << "no child ran"; });
  EXPECT_EQ(outcome.workers_started, 0u);
  EXPECT_EQ(outcome.unfinished, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(ForkedPool, HooksRunAroundEachFork) {
  int before = 0;
  int parent = 0;
  ForkHooks hooks;
  hooks.before_fork = [&] { ++before; };
  hooks.parent_after = [&] { ++parent; };
  bool child_hook_ran = false;
  hooks.child_after = [&] { child_hook_ran = true; };
  std::size_t received = 0;
  run_in_forked_workers(
      6, 3, [&](std::size_t) { return std::string(child_hook_ran ? "hook ran" : "hook missing"); },
      [&](std::size_t, std::string_view bytes) {
        EXPECT_EQ(bytes, "hook ran");
        ++received;
      },
      hooks);
  EXPECT_EQ(before, 3);
  EXPECT_EQ(parent, 3);
  EXPECT_FALSE(child_hook_ran) << "the child hook runs in the children only";
  EXPECT_EQ(received, 6u);
}

} // namespace
} // namespace fib::detail
