// Diagnostics and their sinks: ContextSink stamps file and pointer prefix, CountingSink counts by
// severity and exit class; FIB_TRY propagation; EnumNames lookups.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/dtype.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

TEST(ContextSink, StampsFileAndPrefixesPointer) {
  DiagnosticList list;
  ContextSink sink(list, "defs/a.json", "/inputs/x");
  sink.report(make_diagnostic(codes::k_dtype_invalid, "bad dtype"));
  Diagnostic own_file = make_diagnostic(codes::k_schema_type, "wrong type");
  own_file.file = "other.json";
  own_file.pointer = "/dtype";
  sink.report(own_file);
  ASSERT_EQ(list.items().size(), 2u);
  EXPECT_EQ(list.items()[0].file, "defs/a.json");
  EXPECT_EQ(list.items()[0].pointer, "/inputs/x");
  EXPECT_EQ(list.items()[1].file, "other.json");
  EXPECT_EQ(list.items()[1].pointer, "/inputs/x/dtype");
}

TEST(ContextSink, Nests) {
  DiagnosticList list;
  ContextSink outer(list, "a.json", "/outputs");
  ContextSink inner(outer, "", "/y");
  Diagnostic d = make_diagnostic(codes::k_schema_required, "missing");
  d.pointer = "/shape";
  inner.report(d);
  ASSERT_EQ(list.items().size(), 1u);
  EXPECT_EQ(list.items()[0].pointer, "/outputs/y/shape");
  EXPECT_EQ(list.items()[0].file, "a.json");
}

TEST(CountingSink, CountsBySeverityAndEnvironment) {
  DiagnosticList list;
  CountingSink sink(list);
  sink.report(make_diagnostic(codes::k_dtype_invalid, "finding"));
  sink.report(make_diagnostic(codes::k_io_read, "cannot read"));
  Diagnostic warning = make_diagnostic(codes::k_schema_coerced, "coerced");
  sink.report(warning);
  Diagnostic demoted = make_diagnostic(codes::k_io_read, "demoted");
  demoted.severity = Severity::warning;
  sink.report(demoted);
  EXPECT_EQ(list.items().size(), 4u);
  EXPECT_EQ(sink.counts().errors, 2u);
  EXPECT_EQ(sink.counts().environment_errors, 1u);
  EXPECT_EQ(sink.counts().warnings, 2u);
  EXPECT_TRUE(sink.has_environment_errors());
  const DiagnosticCounts again = count_diagnostics(list.items());
  EXPECT_EQ(again.errors, 2u);
  EXPECT_EQ(again.environment_errors, 1u);
  EXPECT_EQ(again.warnings, 2u);
}

TEST(ExitClass, OfKnownAndUnknownCodes) {
  EXPECT_EQ(exit_class_of(make_diagnostic(codes::k_io_read, "x")), ExitClass::environment);
  EXPECT_EQ(exit_class_of(make_diagnostic(codes::k_usage, "x")), ExitClass::usage);
  EXPECT_EQ(exit_class_of(make_diagnostic(codes::k_dtype_invalid, "x")), ExitClass::finding);
  Diagnostic unknown;
  unknown.code = "no.such-code";
  EXPECT_EQ(exit_class_of(unknown), ExitClass::finding);
  EXPECT_FALSE(is_environment_failure(unknown));
  EXPECT_TRUE(is_environment_failure(make_diagnostic(codes::k_python_unavailable, "x")));
}

Expected<int> half(int value) {
  if (value % 2 != 0) {
    return unexpected(make_diagnostic(codes::k_schema_range, "odd"));
  }
  return value / 2;
}

Expected<int> quarter(int value) {
  FIB_TRY_ASSIGN(const int halved, half(value));
  FIB_TRY_ASSIGN(const int quartered, half(halved));
  return quartered;
}

Expected<std::string> check_even(int value) {
  FIB_TRY(half(value));
  return std::string("even");
}

TEST(Expected, TryPropagatesTheFirstError) {
  ASSERT_TRUE(quarter(8).has_value());
  EXPECT_EQ(*quarter(8), 2);
  const auto odd = quarter(6); // 6 → 3 → odd
  ASSERT_FALSE(odd.has_value());
  EXPECT_EQ(odd.error().code, codes::k_schema_range);
  EXPECT_EQ(*check_even(4), "even");
  EXPECT_EQ(check_even(5).error().code, codes::k_schema_range);
}

TEST(EnumNames, RoundTripsEveryEntry) {
  for (const auto& entry : EnumNames<DType>::k_table) {
    EXPECT_EQ(parse_enum<DType>(entry.name), entry.value);
    EXPECT_EQ(enum_name(entry.value), entry.name);
  }
  for (const DType dtype : k_all_dtypes) {
    EXPECT_FALSE(enum_name(dtype).empty());
  }
  EXPECT_EQ(to_string(DType::boolean), "bool");
  EXPECT_EQ(parse_dtype("Float32"), std::nullopt);
  EXPECT_EQ(to_string(Severity::warning), "warning");
  EXPECT_EQ(parse_enum<Severity>("fatal"), std::nullopt);
}

} // namespace
} // namespace fib
