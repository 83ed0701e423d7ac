// Python repr() as the old tool's messages print it: fib's rendering against CPython's own repr()
// on generated strings (quotes of both kinds, backslashes, control characters, non-ASCII text).

#include "test_support.hpp"

#include "io/python_repr.hpp"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fib {
namespace {

namespace pyb = pybind11;

// repr() of `text` (UTF-8) in the embedded interpreter.
std::string python_repr(const std::string& text) {
  pyb::object value = pyb::str(text);
  return pyb::repr(value).cast<std::string>();
}

TEST(PythonRepr, QuotesFollowPythonsChoice) {
  EXPECT_EQ(detail::py_str_repr("abc"), "'abc'");
  EXPECT_EQ(detail::py_str_repr("it's"), "\"it's\"");
  EXPECT_EQ(detail::py_str_repr("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(detail::py_str_repr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(detail::py_list_repr({"a", "b"}), "['a', 'b']");
  EXPECT_EQ(detail::py_list_repr({}), "[]");
  EXPECT_EQ(detail::py_tuple_repr({8, 4}), "(8, 4)");
  EXPECT_EQ(detail::py_tuple_repr({8}), "(8,)");
  EXPECT_EQ(detail::py_tuple_repr({}), "()");
}

TEST(PythonRepr, GeneratedStringsMatchCPython) {
  if (auto probe = testing::python().check_expression("1"); !probe) {
    GTEST_SKIP() << "embedded Python unavailable: " << probe.error().message;
  }
  // Pieces a message may quote: plain text, both quotes, backslashes, ASCII controls (DEL too),
  // and printable non-ASCII text (which repr() keeps as is).
  const std::array<std::string, 16> pieces = {"a",  "Z",    " ",    "'",    "\"", "\\", "\n", "\r",
                                              "\t", "\x01", "\x1f", "\x7f", "é",  "中", "→",  "0"};
  std::mt19937 random(20261201);
  std::size_t compared = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int length = static_cast<int>(random() % 12);
    for (int i = 0; i < length; ++i) {
      text += pieces[random() % pieces.size()];
    }
    ASSERT_EQ(detail::py_str_repr(text), python_repr(text)) << "text: " << python_repr(text);
    ++compared;
  }
  // Lists and tuples through the same interpreter.
  pyb::dict scope;
  scope["__builtins__"] = pyb::module_::import("builtins");
  EXPECT_EQ(detail::py_list_repr({"x'", "y\"", "z\\"}),
            pyb::eval("repr(['x\\'', 'y\"', 'z\\\\'])", scope).cast<std::string>());
  EXPECT_EQ(detail::py_tuple_repr({-1, 0, 9223372036854775807}),
            pyb::eval("repr((-1, 0, 9223372036854775807))", scope).cast<std::string>());
  EXPECT_EQ(compared, 3000u);
}

} // namespace
} // namespace fib
