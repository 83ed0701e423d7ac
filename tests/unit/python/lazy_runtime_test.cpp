// python::LazyRuntime in a program that does not link libpython (this test binary links only
// fib_python_lazy): nothing of Python is mapped until a check needs it, the identity is known
// before, and a missing or foreign module is a `python.unavailable` diagnostic.

#include <fib/base/codes.hpp>
#include <fib/python/lazy_runtime.hpp>

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <dlfcn.h>
#include <filesystem>
#include <optional>
#include <string>

namespace fib::python {
namespace {

// FIB_TEST_PYTHON_MODULE: the build's fib-python.so (tests/CMakeLists.txt).
LazyRuntimeOptions options_with_module(std::filesystem::path module = FIB_TEST_PYTHON_MODULE) {
  LazyRuntimeOptions options;
  options.module = std::move(module);
  return options;
}

bool libpython_mapped() {
  return testing::read_file("/proc/self/maps").find("libpython") != std::string::npos;
}

TEST(LazyRuntime, NothingOfPythonIsLoadedUntilACheckNeedsIt) {
  if (libpython_mapped()) {
    GTEST_SKIP() << "another test of this process loaded libpython (ctest runs each alone)";
  }
  LazyRuntime runtime(options_with_module());
  const std::string identity = runtime.identity();
  ASSERT_FALSE(identity.empty());
  EXPECT_EQ(identity.rfind("CPython 3.", 0), 0U) << identity;
  if (LazyRuntime::pinned_python_library()) {
    // Known from the files alone.
    EXPECT_FALSE(runtime.loaded());
    EXPECT_FALSE(libpython_mapped());
    EXPECT_NE(identity.find(LazyRuntime::pinned_python_library()->string()), std::string::npos)
        << identity;
  }

  const Expected<std::optional<PythonSyntaxError>> result = runtime.check_expression("1 +");
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_TRUE(result->has_value());
  EXPECT_EQ((*result)->line, 1);
  EXPECT_TRUE(runtime.loaded());
  EXPECT_TRUE(libpython_mapped());
  // The same answer for the life of the object.
  EXPECT_EQ(runtime.identity(), identity);

  const Expected<std::optional<PythonSyntaxError>> fine = runtime.check_expression("a + 1");
  ASSERT_TRUE(fine.has_value());
  EXPECT_FALSE(fine->has_value());
}

TEST(LazyRuntime, AMissingModuleIsUnavailableAndCachesNothing) {
  LazyRuntime runtime(options_with_module("/nonexistent/fib-python.so"));
  // Without the module nothing can say which interpreter would answer.
  EXPECT_EQ(runtime.identity(), "");
  for (int attempt = 0; attempt < 2; ++attempt) {
    const Expected<ReferenceAnalysis> result = runtime.analyze_reference("def run(x):\n  pass\n");
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, codes::k_python_unavailable);
    EXPECT_NE(result.error().message.find("/nonexistent/fib-python.so"), std::string::npos)
        << result.error().message;
    EXPECT_FALSE(result.error().hint.empty());
  }
  EXPECT_FALSE(runtime.loaded());
}

TEST(LazyRuntime, AFileThatIsNotAModuleIsUnavailable) {
  const testing::TempDir scratch;
  const std::filesystem::path text = scratch.write("fib-python.so", "not a shared object\n");
  LazyRuntime runtime(options_with_module(text));
  const Expected<SourceStructure> result = runtime.analyze_structure("x = 1\n");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, codes::k_python_unavailable);
  EXPECT_NE(result.error().message.find("cannot load"), std::string::npos)
      << result.error().message;
}

TEST(LazyRuntime, ASharedObjectThatIsNotFibsModuleIsRefused) {
  // libm: a loadable shared object without the module's entry point.
  Dl_info info{};
  double (*const cosine)(double) = &std::cos;
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(cosine), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  LazyRuntime runtime(options_with_module(info.dli_fname));
  const Expected<std::optional<PythonSyntaxError>> result = runtime.check_expression("1");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, codes::k_python_unavailable);
  EXPECT_NE(result.error().message.find("is not this fib's Python module"), std::string::npos)
      << result.error().message;
}

TEST(LazyRuntime, TheIdentityChangesWithTheModuleFile) {
  if (!LazyRuntime::pinned_python_library()) {
    GTEST_SKIP() << "LD_PRELOAD is set: the identity comes from the module";
  }
  const testing::TempDir scratch;
  const std::filesystem::path copy = scratch.path() / "fib-python.so";
  std::filesystem::copy_file(FIB_TEST_PYTHON_MODULE, copy);
  const std::string before = LazyRuntime(options_with_module(copy)).identity();
  EXPECT_EQ(LazyRuntime(options_with_module(copy)).identity(), before);
  // The same bytes, written again: a new status-change time.
  const std::filesystem::path other = scratch.path() / "other.so";
  std::filesystem::copy_file(copy, other);
  std::filesystem::rename(other, copy);
  const std::string after = LazyRuntime(options_with_module(copy)).identity();
  EXPECT_NE(after, before);
  EXPECT_FALSE(after.empty());
}

TEST(LazyRuntime, LdLibraryPathKeepsThePinnedLibrary) {
  // The pinned library is loaded by its path, which LD_LIBRARY_PATH does not change.
  const auto before = LazyRuntime::pinned_python_library();
  const testing::ScopedVariable search("LD_LIBRARY_PATH", "/nonexistent-fib-test");
  EXPECT_EQ(LazyRuntime::pinned_python_library(), before);
}

TEST(LazyRuntime, WithAPreloadTheIdentityIsTheInterpretersOwn) {
  std::string identity;
  bool loaded = false;
  {
    // Only read by fib here: this process has no child the value could reach.
    const testing::ScopedVariable preload("LD_PRELOAD", "/nonexistent-fib-test.so");
    EXPECT_FALSE(LazyRuntime::pinned_python_library().has_value());
    LazyRuntime runtime(options_with_module());
    identity = runtime.identity();
    loaded = runtime.loaded();
  }
  // "CPython " and Py_GetVersion() (the version, then the build in parentheses), the libpython
  // the module's calls go to, and the module.
  EXPECT_EQ(identity.rfind("CPython 3.", 0), 0U) << identity;
  EXPECT_NE(identity.find('('), std::string::npos) << identity;
  EXPECT_NE(identity.find(" library /"), std::string::npos) << identity;
  EXPECT_NE(identity.find("libpython"), std::string::npos) << identity;
  EXPECT_NE(identity.find(" module "), std::string::npos) << identity;
  EXPECT_TRUE(loaded);
}

TEST(LazyRuntime, AModuleThatChangedSinceTheIdentityIsRefused) {
  if (!LazyRuntime::pinned_python_library()) {
    GTEST_SKIP() << "LD_PRELOAD is set: the identity comes from loading the module";
  }
  const testing::TempDir scratch;
  const std::filesystem::path copy = scratch.path() / "fib-python.so";
  std::filesystem::copy_file(FIB_TEST_PYTHON_MODULE, copy);
  LazyRuntime runtime(options_with_module(copy));
  const std::string identity = runtime.identity();
  ASSERT_FALSE(identity.empty());
  // Replaced (the same bytes, a new file) after the identity named it.
  const std::filesystem::path other = scratch.path() / "other.so";
  std::filesystem::copy_file(copy, other);
  std::filesystem::rename(other, copy);
  const Expected<std::optional<PythonSyntaxError>> result = runtime.check_expression("1");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, codes::k_python_unavailable);
  EXPECT_NE(result.error().message.find("changed while fib ran"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(runtime.identity(), identity);
}

} // namespace
} // namespace fib::python
