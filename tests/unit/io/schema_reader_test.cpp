// The schema reader's pydantic-style lax coercion: what is accepted (and warned as schema.coerced),
// what is rejected, and the pointer each problem carries.

#include "test_support.hpp"

#include "io/schema_reader.hpp"

#include <fib/base/codes.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

namespace fib {
namespace {

using testing::code_pointers;
using Pairs = std::vector<std::pair<std::string, std::string>>;

struct Read {
  JsonDocument document;
  DiagnosticList sink;
};

TEST(SchemaReader, IntegersAcceptPydanticsLaxForms) {
  const JsonDocument document = testing::parse_or_die(
      R"({"a": 7, "b": 4.0, "c": " 7 ", "d": "7.0", "e": true, "f": 4.5, "g": "x", "h": -1})");
  DiagnosticList sink;
  detail::Reader reader(document, sink);
  const Json& root = document.root;
  EXPECT_EQ(reader.integer(root["a"], "/a", std::nullopt), 7);
  EXPECT_EQ(reader.integer(root["b"], "/b", std::nullopt), 4);
  EXPECT_EQ(reader.integer(root["c"], "/c", std::nullopt), 7);
  EXPECT_EQ(reader.integer(root["d"], "/d", std::nullopt), 7);
  EXPECT_EQ(reader.integer(root["e"], "/e", std::nullopt), 1);
  EXPECT_EQ(reader.integer(root["f"], "/f", std::nullopt), std::nullopt);
  EXPECT_EQ(reader.integer(root["g"], "/g", std::nullopt), std::nullopt);
  EXPECT_EQ(reader.integer(root["h"], "/h", std::int64_t{0}), std::nullopt);
  EXPECT_EQ(code_pointers(sink), (Pairs{{"schema.coerced", "/b"},
                                        {"schema.coerced", "/c"},
                                        {"schema.coerced", "/d"},
                                        {"schema.coerced", "/e"},
                                        {"schema.type", "/f"},
                                        {"schema.type", "/g"},
                                        {"schema.range", "/h"}}))
      << testing::describe(sink);
  EXPECT_EQ(reader.error_count(), 3);
}

TEST(SchemaReader, MissingRequiredKeyIsReportedAtTheKeysOwnPointer) {
  const JsonDocument document = testing::parse_or_die(R"({"name": ""})");
  DiagnosticList sink;
  detail::Reader reader(document, sink);
  EXPECT_EQ(reader.member(document.root, "", "op_type", detail::Presence::required), nullptr);
  EXPECT_EQ(reader.member(document.root, "", "tags", detail::Presence::optional), nullptr);
  const Json* name = reader.member(document.root, "", "name", detail::Presence::required);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(reader.string(*name, "/name", detail::EmptyString::forbidden), std::nullopt);
  EXPECT_EQ(code_pointers(sink),
            (Pairs{{"schema.required", "/op_type"}, {"schema.empty", "/name"}}))
      << testing::describe(sink);
}

TEST(SchemaReader, NumbersAndBooleans) {
  const JsonDocument document =
      testing::parse_or_die(R"({"n": "nan", "i": " Infinity ", "x": "1e", "t": "yes", "o": 2})");
  DiagnosticList sink;
  detail::Reader reader(document, sink);
  const auto nan = reader.number(document.root["n"], "/n");
  ASSERT_TRUE(nan.has_value());
  EXPECT_TRUE(std::isnan(*nan));
  EXPECT_EQ(reader.number(document.root["i"], "/i"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(reader.number(document.root["x"], "/x"), std::nullopt);
  EXPECT_EQ(reader.boolean(document.root["t"], "/t"), true);
  EXPECT_EQ(reader.boolean(document.root["o"], "/o"), std::nullopt);
  EXPECT_TRUE(testing::has(sink, "schema.type", "/x")) << testing::describe(sink);
  EXPECT_TRUE(testing::has(sink, "schema.type", "/o")) << testing::describe(sink);
  EXPECT_TRUE(testing::has(sink, "schema.coerced", "/t")) << testing::describe(sink);
}

} // namespace
} // namespace fib
