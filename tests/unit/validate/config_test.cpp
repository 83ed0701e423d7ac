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
  ASSERT_EQ(seen.size(), 9u);
  EXPECT_EQ(seen[0], std::make_pair(1, std::string("'strict' must be true or false")));
  EXPECT_EQ(seen[1], std::make_pair(2, std::string("unknown key 'ignor'; did you mean 'ignore'?")));
  EXPECT_EQ(seen[2], std::make_pair(3, std::string("'select' must be an array of strings, not one "
                                                   "with a value of type integer")));
  EXPECT_EQ(seen[3], std::make_pair(3, std::string("select: 'definitio' is not a finding code or "
                                                   "code prefix; did you mean 'definition'?")))
      << "the strings of an array with a bad item are still judged";
  EXPECT_EQ(seen[4].first, 4);
  EXPECT_NE(seen[4].second.find("unknown check 'layuot'"), std::string::npos);
  EXPECT_EQ(seen[5].first, 5);
  EXPECT_NE(seen[5].second.find("always show"), std::string::npos);
  EXPECT_EQ(seen[6].first, 8);
  EXPECT_NE(seen[6].second.find("not 'fatal'"), std::string::npos);
  EXPECT_EQ(seen[7].first, 9);
  EXPECT_NE(seen[7].second.find("'no.such.code' is not a finding code"), std::string::npos);
  EXPECT_EQ(seen[8].first, 12);
}

TEST(Config, EveryItemOfAnArrayIsJudged) {
  testing::TempDir dir;
  DiagnosticList problems;
  EXPECT_FALSE(load(dir.write("fib.toml", "checks = [\"layout\", 3, \"bogus\"]\n"
                                          "[severity]\ndefinition.tag = \"info\"\n"),
                    problems));
  ASSERT_EQ(problems.items().size(), 3u);
  EXPECT_EQ(problems.items()[0].message,
            "'checks' must be an array of strings, not one with a value of type integer");
  EXPECT_NE(problems.items()[1].message.find("unknown check 'bogus'"), std::string::npos);
  EXPECT_NE(problems.items()[2].message.find("quote a dotted code"), std::string::npos);
  EXPECT_EQ(problems.items()[2].line, 3);
}

TEST(Config, DiscoveryPassesOverABrokenPyprojectOfAnotherTool) {
  testing::TempDir dir;
  dir.write("pyproject.toml", "[project\nname = \"x\"\n");
  dir.write("ds/definitions/g.json", "{}");
  EXPECT_FALSE(find_config(dir.path() / "ds"));
  dir.write("pyproject.toml", "[tool.fib\nstrict = true\n");
  EXPECT_EQ(find_config(dir.path() / "ds"), dir.path() / "pyproject.toml")
      << "a broken one that names tool.fib is taken, and load_config says what is wrong";
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

  DiagnosticList dotted;
  EXPECT_FALSE(load(dir.write(
                        "fib.toml", "strict = true\n" + std::string("a") +
                                        [] {
                                          std::string parts;
                                          for (int i = 0; i < 50000; ++i) {
                                            parts += ".a";
                                          }
                                          return parts;
                                        }() +
                                        " = 1\n"),
                    dotted))
      << "a key of 50,000 dotted parts is refused before toml++ recurses into it";
  ASSERT_EQ(dotted.items().size(), 1u);
  EXPECT_EQ(dotted.items()[0].line, 2);
  EXPECT_NE(dotted.items()[0].message.find("more than 128 dotted parts"), std::string::npos);

  DiagnosticList floats;
  std::string many_floats = "x = [";
  for (int i = 0; i < 1000; ++i) {
    many_floats += "1.5, ";
  }
  many_floats += "2.5]\n";
  EXPECT_FALSE(load(dir.write("fib.toml", many_floats), floats));
  ASSERT_EQ(floats.items().size(), 1u);
  EXPECT_EQ(floats.items()[0].message, "unknown key 'x'") << "floats are no dotted key";

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
