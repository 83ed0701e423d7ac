#include "test_support.hpp"

#include <fib/base/codes.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace fib {
namespace {

TEST(CodesTable, IsSortedUniqueAndWellFormed) {
  const auto table = all_codes();
  ASSERT_FALSE(table.empty());
  const std::regex shape("[a-z]+(-[a-z]+)*(\\.[a-z0-9]+(-[a-z0-9]+)*)+");
  for (std::size_t i = 0; i < table.size(); ++i) {
    SCOPED_TRACE(std::string(table[i].code));
    EXPECT_TRUE(std::regex_match(std::string(table[i].code), shape));
    EXPECT_FALSE(table[i].summary.empty());
    if (i > 0) {
      EXPECT_LT(table[i - 1].code, table[i].code) << "the table must stay sorted and unique";
    }
    EXPECT_EQ(find_code(table[i].code), &table[i]);
  }
  EXPECT_EQ(find_code("no.such-code"), nullptr);
}

TEST(CodesTable, MakeDiagnosticTakesTheTableSeverity) {
  EXPECT_EQ(make_diagnostic(codes::k_description_missing, "m").severity, Severity::warning);
  EXPECT_EQ(make_diagnostic(codes::k_axis_unused, "m").severity, Severity::note);
  EXPECT_EQ(make_diagnostic(codes::k_axis_undefined, "m").severity, Severity::error);
}

// docs/diagnostics.md is generated from the table. Set FIB_UPDATE_DOCS=1 to rewrite it.
TEST(CodesTable, DiagnosticsDocIsCurrent) {
  const std::filesystem::path doc =
      std::filesystem::path(FIB_SOURCE_DIR) / "docs" / "diagnostics.md";
  const std::string expected = render_codes_markdown();
  if (const char* update = std::getenv("FIB_UPDATE_DOCS"); update != nullptr && *update == '1') {
    std::ofstream(doc, std::ios::binary) << expected;
  }
  std::ifstream in(doc, std::ios::binary);
  std::stringstream actual;
  actual << in.rdbuf();
  EXPECT_EQ(actual.str(), expected)
      << "docs/diagnostics.md is stale: run `FIB_UPDATE_DOCS=1 build/tests/fib_core_tests "
         "--gtest_filter=CodesTable.DiagnosticsDocIsCurrent`";
}

} // namespace
} // namespace fib
