// fib.toml and pyproject.toml's [tool.fib]: where they are found, what they set, and how their
// problems are reported (code, file, line).

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/config.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

std::optional<FibConfig> load(const std::filesystem::path& file, DiagnosticList& problems) {
  return load_config(file, problems);
}

TEST(Config, TheNearestConfigUpwardIsFoundAndFibTomlWins) {
  testing::TempDir dir;
  dir.write("repo/pyproject.toml", "[project]\nname = \"x\"\n");
  dir.write("repo/ds/definitions/gemm/g.json", "{}");
  EXPECT_FALSE(find_config(dir.path() / "repo/ds/definitions/gemm/g.json"))
      << "a pyproject.toml without [tool.fib] is passed over";
  dir.write("repo/pyproject.toml", "[project]\nname = \"x\"\n[tool.fib]\nstrict = true\n");
  EXPECT_EQ(find_config(dir.path() / "repo/ds/definitions/gemm"),
            dir.path() / "repo/pyproject.toml");
  dir.write("repo/fib.toml", "strict = false\n");
  EXPECT_EQ(find_config(dir.path() / "repo/ds"), dir.path() / "repo/fib.toml");
  dir.write("repo/ds/fib.toml", "");
  EXPECT_EQ(find_config(dir.path() / "repo/ds/definitions/gemm/g.json"),
            dir.path() / "repo/ds/fib.toml");
}

TEST(Config, EveryKeyIsRead) {
  testing::TempDir dir;
  const auto file = dir.write("fib.toml", R"(strict = true
checks = ["layout", "definition"]
select = ["definition", "dataset.workload"]
ignore = ["definition.description.missing"]
baseline = "ci/fib-baseline.json"

[per-path-ignores]
"definitions/experimental/*" = ["dataset.definition"]

[severity]
"dataset.definition.name-convention" = "error"
"definition.tag" = "info"
)");
  DiagnosticList problems;
  const auto config = load(file, problems);
  ASSERT_TRUE(config) << (problems.items().empty() ? "" : problems.items()[0].message);
  EXPECT_TRUE(problems.items().empty());
  EXPECT_EQ(config->strict, true);
  EXPECT_EQ(config->checks, (std::vector<std::string>{"layout", "definition"}));
  EXPECT_EQ(config->policy.select, (std::vector<std::string>{"definition", "dataset.workload"}));
  EXPECT_EQ(config->policy.ignore, (std::vector<std::string>{"definition.description.missing"}));
  EXPECT_EQ(config->baseline, dir.path() / "ci/fib-baseline.json");
  EXPECT_EQ(config->policy.base, dir.path());
  ASSERT_EQ(config->policy.per_path_ignores.size(), 1u);
  EXPECT_EQ(config->policy.per_path_ignores[0].glob, "definitions/experimental/*");
  ASSERT_EQ(config->policy.severities.size(), 2u);
  EXPECT_EQ(config->policy.severities[0].severity, Severity::error);
  EXPECT_EQ(config->policy.severities[1].severity, Severity::note);
}

TEST(Config, PyprojectIsReadFromToolFibOnly) {
  testing::TempDir dir;
  const auto file = dir.write("pyproject.toml", R"([project]
name = "flashinfer-trace"
[tool.ruff]
select = ["E"]
[tool.fib]
ignore = ["definition.description"]
)");
  DiagnosticList problems;
  const auto config = load(file, problems);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->policy.ignore, (std::vector<std::string>{"definition.description"}));
  EXPECT_TRUE(config->policy.select.empty()) << "[tool.ruff] is not fib's";
}

TEST(Config, ProblemsAreConfigInvalidWithTheirLines) {
  testing::TempDir dir;
  const auto file = dir.write("fib.toml", R"(strict = "yes"
ignor = ["definition"]
select = ["definitio", 3]
checks = ["layout", "layuot"]
ignore = ["io.read"]

[severity]
"definition.tag" = "fatal"
"no.such.code" = "error"

[per-path-ignores]
"x/*" = "definition"
)");
  DiagnosticList problems;
  EXPECT_FALSE(load(file, problems));
  std::vector<std::pair<int, std::string>> seen;
  for (const Diagnostic& d : problems.items()) {
    EXPECT_EQ(d.code, codes::k_config_invalid);
    EXPECT_EQ(d.file, file);
    seen.emplace_back(d.line, d.message);
  }
  ASSERT_EQ(seen.size(), 8u);
  EXPECT_EQ(seen[0], std::make_pair(1, std::string("'strict' must be true or false")));
  EXPECT_EQ(seen[1], std::make_pair(2, std::string("unknown key 'ignor'; did you mean 'ignore'?")));
  EXPECT_EQ(seen[2].first, 3);
  EXPECT_EQ(seen[2].second, "'select' must be an array of strings");
  EXPECT_EQ(seen[3].first, 4);
  EXPECT_NE(seen[3].second.find("unknown check 'layuot'"), std::string::npos);
  EXPECT_EQ(seen[4].first, 5);
  EXPECT_NE(seen[4].second.find("always show"), std::string::npos);
  EXPECT_EQ(seen[5].first, 8);
  EXPECT_NE(seen[5].second.find("not 'fatal'"), std::string::npos);
  EXPECT_EQ(seen[6].first, 9);
  EXPECT_NE(seen[6].second.find("'no.such.code' is not a finding code"), std::string::npos);
  EXPECT_EQ(seen[7].first, 12);
}

TEST(Config, SyntaxErrorsAndHostileFilesAreReportedNotThrown) {
  testing::TempDir dir;
  DiagnosticList problems;
  EXPECT_FALSE(load(dir.write("fib.toml", "strict = \n"), problems));
  ASSERT_EQ(problems.items().size(), 1u);
  EXPECT_EQ(problems.items()[0].code, codes::k_config_invalid);
  EXPECT_EQ(problems.items()[0].line, 1);
  EXPECT_EQ(problems.items()[0].message.rfind("TOML: ", 0), 0u);

  DiagnosticList deep;
  EXPECT_FALSE(load(dir.write("fib.toml", "x = " + std::string(5000, '[') + "\n"), deep));
  ASSERT_FALSE(deep.items().empty());
  EXPECT_EQ(deep.items()[0].code, codes::k_config_invalid);

  DiagnosticList empty_pyproject;
  EXPECT_FALSE(load(dir.write("pyproject.toml", "[project]\n"), empty_pyproject));
  ASSERT_EQ(empty_pyproject.items().size(), 1u);
  EXPECT_NE(empty_pyproject.items()[0].message.find("no [tool.fib]"), std::string::npos);

  DiagnosticList missing;
  EXPECT_FALSE(load(dir.path() / "nope.toml", missing));
  ASSERT_EQ(missing.items().size(), 1u);
  EXPECT_EQ(missing.items()[0].code, codes::k_io_not_found);
}

} // namespace
} // namespace fib
