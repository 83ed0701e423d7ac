// Custom GoogleTest main of fib_unit_tests (the Python binary): owns the one embedded-Python
// runtime of the test binary, so that it outlives every test and Python objects never outlive the
// interpreter. fib_core_tests uses GoogleTest's own main.

#include "test_support.hpp"

#include <gtest/gtest.h>

namespace {
fib::python::Runtime* g_python = nullptr;
}

namespace fib::testing {
python::Runtime& python() {
  return *g_python;
}
} // namespace fib::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  fib::python::Runtime runtime;
  g_python = &runtime;
  const int result = RUN_ALL_TESTS();
  g_python = nullptr;
  return result;
}
