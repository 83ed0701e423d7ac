// The line of a build log that `fib run` shows for a COMPILE_ERROR, and where the whole log goes.

#include <fib/exec/worker_client.hpp>

#include <gtest/gtest.h>

#include <string>

namespace fib {
namespace {

TEST(BuildLog, TheFirstErrorLineNotNinjasLastWords) {
  const std::string gcc = "[1/2] c++ -MMD -Werror=return-type -c main.cpp\n"
                          "FAILED: main.o\n"
                          "/cache/solutions/abc/src/main.cpp:3:1: error: expected ';'\r\n"
                          "/cache/solutions/abc/src/main.cpp:9:1: error: a second one\n"
                          "ninja: build stopped: subcommand failed.\n";
  EXPECT_EQ(first_error_line(gcc), "/cache/solutions/abc/src/main.cpp:3:1: error: expected ';'");
  EXPECT_EQ(first_error_line("kernel.cu(3): ERROR: identifier \"x\" is undefined\n"),
            "kernel.cu(3): ERROR: identifier \"x\" is undefined");
  EXPECT_EQ(first_error_line("Traceback (most recent call last):\n  File \"main.py\", line 1\n"
                             "SyntaxError: invalid syntax\n"),
            "SyntaxError: invalid syntax");
  // Without an error line, the last line that says anything.
  EXPECT_EQ(first_error_line("the build ran past 900 s and was stopped\n\n  \n"),
            "the build ran past 900 s and was stopped");
  EXPECT_EQ(first_error_line(""), "");
  EXPECT_EQ(first_error_line("\n\n"), "");
}

TEST(BuildLog, TheWholeLogLivesOutsideTheSolutionsCacheEntry) {
  EXPECT_EQ(compile_log_path("/home/u/.cache/fib", "0123abcd"),
            std::filesystem::path("/home/u/.cache/fib/logs/0123abcd.compile.log"));
}

} // namespace
} // namespace fib
