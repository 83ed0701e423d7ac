// Differential test of the constraint evaluator against CPython's own `eval`, run in the test
// binary's embedded interpreter: every constraint of the corpus definitions, and a few thousand
// generated expressions, must give the same outcome on both sides (True: satisfied, False:
// violated, an exception: not evaluable; a non-bool result is judged by bool()), and
// evaluate_integer must give the value exactly when Python's result is an int.
//
// The Python side (constraint_oracle.py) models what the evaluator promises and nothing more:
// tensors are small classes (torch is never imported) with .shape, .ndim, .dim(), .numel(),
// .size(), len() and, on 1-D tensors, t[i] giving a 0-d tensor that behaves as its number; ints
// are 64-bit (an int result or literal outside int64 is not evaluable), and a complex result is
// not evaluable. Those rules are applied by rewriting the parsed expression so that every
// arithmetic operator and call goes through a check; the operators themselves are Python's.
//
// Left out on purpose, because the evaluator refuses them by design (its header says so):
// slices, indexing a str, `is` between values other than None/True/False, min()/max() of a str,
// and string escapes such as \x or \u.

#include "test_support.hpp"

#include <fib/constraint/constraint.hpp>

#include <gtest/gtest.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fib {
namespace {

namespace py = pybind11;

// The oracle, next to this file.
constexpr std::string_view k_oracle_file =
    FIB_SOURCE_DIR "/tests/unit/constraint/constraint_oracle.py";

// The oracle's functions, taken from one run of k_oracle_file. Lives inside a test body, so it
// dies before the interpreter.
struct Oracle {
  py::object judge;
  py::object tensor;
  py::object corpus_definitions;
};

// The oracle, or nullopt with `why`. The interpreter must have started.
std::optional<Oracle> start_oracle(std::string& why) {
  const std::string source = testing::read_file(std::string(k_oracle_file));
  if (source.empty()) {
    why = "cannot read " + std::string(k_oracle_file);
    return std::nullopt;
  }
  try {
    py::dict scope;
    scope["__builtins__"] = py::module_::import("builtins");
    py::exec(py::str(source), scope);
    return Oracle{scope["judge"], scope["Tensor"], scope["corpus_definitions"]};
  } catch (const std::exception& error) {
    why = error.what();
    return std::nullopt;
  }
}

// Skips the test when the embedded interpreter cannot start; fails it when the oracle cannot be
// loaded (it is part of the source tree).
#define FIB_REQUIRE_ORACLE(oracle)                                                                 \
  if (auto probe_ = testing::python().check_expression("1"); !probe_) {                            \
    GTEST_SKIP() << "embedded Python unavailable: " << probe_.error().message;                     \
  }                                                                                                \
  std::string oracle##_why;                                                                        \
  const std::optional<Oracle> oracle = start_oracle(oracle##_why);                                 \
  ASSERT_TRUE(oracle.has_value()) << "the oracle did not load: " << oracle##_why

// The environment as Python names, looked up in the same order as the evaluator does (axes, then
// scalars, tensors and absent names): later insertions win.
py::dict to_python(const ConstraintEnvironment& environment, const Oracle& oracle) {
  py::dict names;
  for (const std::string& name : environment.absent) {
    names[py::str(name)] = py::none();
  }
  for (const auto& [name, facts] : environment.tensors) {
    py::object values = py::none();
    if (facts.values) {
      values = py::cast(*facts.values);
    }
    names[py::str(name)] = oracle.tensor(py::cast(facts.shape), values, facts.integral);
  }
  for (const auto& [name, scalar] : environment.scalars) {
    names[py::str(name)] = std::visit(
        [](const auto& value) -> py::object {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            return py::none();
          } else {
            return py::cast(value);
          }
        },
        scalar);
  }
  for (const auto& [name, value] : environment.axes) {
    names[py::str(name)] = py::int_(value);
  }
  return names;
}

struct PythonVerdict {
  std::string outcome;
  std::optional<std::int64_t> integer;
  std::string detail;
};

PythonVerdict python_verdict(const Oracle& oracle, std::string_view expression,
                             const py::dict& names) {
  const py::tuple result = oracle.judge(py::str(expression.data(), expression.size()), names);
  PythonVerdict verdict;
  verdict.outcome = result[0].cast<std::string>();
  if (!result[1].is_none()) {
    verdict.integer = result[1].cast<std::int64_t>();
  }
  verdict.detail = result[2].cast<std::string>();
  return verdict;
}

std::string describe_integer(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : std::string("none");
}

// Compares both sides on many expressions; reports each mismatch with the expression, the
// environment and both results, and counts the outcomes.
class Comparison {
public:
  explicit Comparison(const Oracle& oracle) : m_oracle(oracle) {}

  void check(std::string_view expression, const ConstraintEnvironment& environment,
             const py::dict& names, std::string_view where) {
    const ConstraintResult fib_result = evaluate_constraint(expression, environment);
    const std::optional<std::int64_t> fib_integer = evaluate_integer(expression, environment);
    const PythonVerdict python = python_verdict(m_oracle, expression, names);
    ++m_compared;
    ++m_outcomes[python.outcome];
    if (python.outcome == to_string(fib_result.outcome) && python.integer == fib_integer) {
      return;
    }
    ++m_mismatches;
    if (m_mismatches <= k_reported_mismatches) {
      ADD_FAILURE() << "mismatch for: " << expression << "\n  in " << where
                    << "\n  fib:    " << to_string(fib_result.outcome) << " (" << fib_result.detail
                    << "), evaluate_integer " << describe_integer(fib_integer)
                    << "\n  Python: " << python.outcome << " (" << python.detail << "), int "
                    << describe_integer(python.integer);
    }
  }

  int compared() const { return m_compared; }
  int mismatches() const { return m_mismatches; }
  int count(const std::string& outcome) const {
    const auto found = m_outcomes.find(outcome);
    return found == m_outcomes.end() ? 0 : found->second;
  }
  std::string summary() const {
    return std::to_string(m_compared) + " compared: " + std::to_string(count("satisfied")) +
           " satisfied, " + std::to_string(count("violated")) + " violated, " +
           std::to_string(count("not evaluable")) + " not evaluable; " +
           std::to_string(m_mismatches) + " mismatches";
  }

private:
  static constexpr int k_reported_mismatches = 30;
  const Oracle& m_oracle;
  int m_compared = 0;
  int m_mismatches = 0;
  std::map<std::string, int> m_outcomes;
};

// splitmix64: the same sequence on every platform (std distributions are not).
class Random {
public:
  explicit Random(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }
  // 0 <= result < bound.
  int below(int bound) { return static_cast<int>(next() % static_cast<std::uint64_t>(bound)); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T, std::size_t N> const T& pick(const std::array<T, N>& items) {
    return items[static_cast<std::size_t>(below(static_cast<int>(N)))];
  }

private:
  std::uint64_t m_state;
};

// ---------------------------------------------------------------------------------------------
// Generated expressions

TensorFacts tensor(std::vector<std::int64_t> shape, std::optional<std::vector<double>> values,
                   bool integral = true) {
  return TensorFacts{std::move(shape), std::move(values), integral};
}

// Two environments over the same names: ints a b c n m one k (c is 0 in the first, n in the
// second, for division by zero), big (2^53 + 1 in magnitude), huge and tiny (the int64 limits);
// bools p q; floats x y; strs s e; None nothing and opt; tensors t r (no data), v (ints), f
// (floats), u (1-D, no data), z (0-d), w (one element), h (an integral tensor whose first
// element is not an integer).
std::vector<std::pair<std::string, ConstraintEnvironment>> generated_environments() {
  ConstraintEnvironment first;
  first.axes = {{"a", 7},
                {"b", -3},
                {"c", 0},
                {"n", 12},
                {"m", -12},
                {"one", 1},
                {"big", 9007199254740993},
                {"huge", std::numeric_limits<std::int64_t>::max()},
                {"tiny", std::numeric_limits<std::int64_t>::min()}};
  first.scalars = {{"k", std::int64_t{3}},
                   {"p", true},
                   {"q", false},
                   {"x", 2.5},
                   {"y", -0.5},
                   {"s", std::string("causal")},
                   {"e", std::string()},
                   {"nothing", std::monostate{}}};
  first.tensors = {{"t", tensor({4, 6}, std::nullopt)},
                   {"r", tensor({2, 3, 4}, std::nullopt)},
                   {"v", tensor({5}, std::vector<double>{3, -2, 0, 7, 5})},
                   {"f", tensor({3}, std::vector<double>{0.5, -1.25, 2.0}, false)},
                   {"u", tensor({4}, std::nullopt)},
                   {"z", tensor({}, std::vector<double>{4})},
                   {"w", tensor({1}, std::vector<double>{0})},
                   {"h", tensor({2}, std::vector<double>{1.5, 2})}};
  first.absent = {"opt"};

  ConstraintEnvironment second;
  second.axes = {{"a", -5},
                 {"b", 4},
                 {"c", 3},
                 {"n", 0},
                 {"m", 5},
                 {"one", 1},
                 {"big", -9007199254740993},
                 {"huge", std::numeric_limits<std::int64_t>::max()},
                 {"tiny", std::numeric_limits<std::int64_t>::min()}};
  second.scalars = {{"k", std::int64_t{-2}},
                    {"p", false},
                    {"q", true},
                    {"x", -3.0},
                    {"y", 0.0},
                    {"s", std::string("dense")},
                    {"e", std::string("x")},
                    {"nothing", std::monostate{}}};
  second.tensors = {{"t", tensor({0, 3}, std::nullopt)},
                    {"r", tensor({1, 1, 1}, std::nullopt)},
                    {"v", tensor({3}, std::vector<double>{-1, 8, 2})},
                    {"f", tensor({2}, std::vector<double>{0.0, 3.5}, false)},
                    {"u", tensor({1}, std::nullopt)},
                    {"z", tensor({}, std::vector<double>{0})},
                    {"w", tensor({1}, std::vector<double>{5})},
                    {"h", tensor({2}, std::vector<double>{2, 0.25})}};
  second.absent = {"opt"};
  return {{"the first environment", std::move(first)},
          {"the second environment", std::move(second)}};
}

// Random expressions in the subset the evaluator supports, with Python's precedence left to
// both parsers (operands are parenthesised only some of the time).
class ExpressionGenerator {
public:
  explicit ExpressionGenerator(std::uint64_t seed) : m_random(seed) {}

  std::string expression() {
    const int roll = m_random.below(100);
    if (roll < 72) {
      return condition(3);
    }
    if (roll < 87) {
      return integer(3);
    }
    if (roll < 95) {
      return number(3);
    }
    return sequence(2);
  }

private:
  std::string maybe_parenthesised(std::string text) {
    return m_random.chance(55) ? "(" + text + ")" : text;
  }

  std::string integer_atom() {
    static constexpr std::array<std::string_view, 30> k_atoms = {
        "a",  "b",  "c",   "n",    "m",    "one", "k",   "p",  "q",          "a",
        "b",  "c",  "n",   "m",    "0",    "1",   "2",   "3",  "7",          "-1",
        "-2", "-7", "big", "huge", "tiny", "64",  "100", "-9", "2147483648", "4611686018427387904"};
    return std::string(m_random.pick(k_atoms));
  }

  std::string tensor_integer() {
    const std::string index = std::to_string(m_random.below(12) - 6);
    const std::string dim = std::to_string(m_random.below(8) - 4);
    switch (m_random.below(14)) {
    case 0:
      return "len(v)";
    case 1:
      return "t.shape[" + dim + "]";
    case 2:
      return "r.size(" + dim + ")";
    case 3:
      return "t.ndim";
    case 4:
      return "r.dim()";
    case 5:
      return "t.numel()";
    case 6:
      return "len(t.shape)";
    case 7:
    case 8:
      return "v[" + index + "].item()";
    case 9:
      return "v[" + index + "]";
    case 10:
      return m_random.chance(50) ? "z.item()" : "w.item()";
    case 11:
      return m_random.chance(50) ? "len(s)" : "len(e)";
    case 12:
      return "len(t)";
    default:
      return m_random.chance(50) ? "u[0].item()" : "h[0].item()";
    }
  }

  std::string integer(int depth) {
    if (depth <= 0 || m_random.chance(22)) {
      return integer_atom();
    }
    static constexpr std::array<std::string_view, 8> k_operators = {"+",  "-", "*", "//",
                                                                    "//", "%", "%", "-"};
    static constexpr std::array<std::string_view, 8> k_exponents = {"0", "1",  "2",  "3",
                                                                    "5", "-1", "-2", "63"};
    switch (m_random.below(10)) {
    case 0:
    case 1:
    case 2:
      return maybe_parenthesised(integer(depth - 1) + " " +
                                 std::string(m_random.pick(k_operators)) + " " +
                                 integer(depth - 1));
    case 3: {
      const std::string base =
          m_random.chance(50) ? integer_atom() : "(" + integer(depth - 1) + ")";
      const std::string exponent = m_random.chance(75) ? std::string(m_random.pick(k_exponents))
                                                       : "(" + integer(depth - 1) + ")";
      return maybe_parenthesised(base + " ** " + exponent);
    }
    case 4:
      return (m_random.chance(80) ? "-" : "+") + integer(depth - 1);
    case 5:
      return builtin(depth);
    case 6:
    case 7:
      return tensor_integer();
    case 8:
      return "(" + condition(depth - 1) + ")";
    default:
      return integer_atom();
    }
  }

  std::string builtin(int depth) {
    switch (m_random.below(5)) {
    case 0:
      return "abs(" + integer(depth - 1) + ")";
    case 1:
      return "min(" + number(depth - 1) + ", " + number(depth - 1) + ")";
    case 2:
      return "max(" + integer(depth - 1) + ", " + number(depth - 1) + ", " + integer(depth - 1) +
             ")";
    case 3:
      return "min((" + integer(depth - 1) + ", " + integer(depth - 1) + "))";
    default:
      return "max([" + number(depth - 1) + ", " + integer(depth - 1) + "])";
    }
  }

  std::string float_atom() {
    static constexpr std::array<std::string_view, 14> k_atoms = {
        "x",   "y",           "0.5",          "2.5",  "-0.0", "1e300", "1e-3",
        "3.0", "f[0].item()", "f[-1].item()", "f[1]", "x",    "y",     "1.5"};
    return std::string(m_random.pick(k_atoms));
  }

  std::string number(int depth) {
    if (depth <= 0 || m_random.chance(60)) {
      return m_random.chance(70) ? integer(depth) : float_atom();
    }
    static constexpr std::array<std::string_view, 7> k_operators = {"+", "-",  "*", "/",
                                                                    "/", "//", "%"};
    switch (m_random.below(4)) {
    case 0:
      return maybe_parenthesised(integer(depth - 1) + " / " + integer(depth - 1));
    case 1:
      return maybe_parenthesised(number(depth - 1) + " " + std::string(m_random.pick(k_operators)) +
                                 " " + float_atom());
    case 2:
      return maybe_parenthesised(float_atom() + " ** " +
                                 (m_random.chance(50) ? "2" : "(" + number(depth - 1) + ")"));
    default:
      return "abs(" + float_atom() + ")";
    }
  }

  std::string comparison(int depth) {
    static constexpr std::array<std::string_view, 8> k_comparisons = {
        "<", "<=", ">", ">=", "==", "!=", "==", "<"};
    std::string text = number(depth - 1);
    const int links = 1 + (m_random.chance(35) ? 1 : 0) + (m_random.chance(10) ? 1 : 0);
    for (int i = 0; i < links; ++i) {
      text += " " + std::string(m_random.pick(k_comparisons)) + " " + number(depth - 1);
    }
    return text;
  }

  std::string membership(int depth) {
    const std::string op = m_random.chance(70) ? " in " : " not in ";
    std::string items;
    const int count = m_random.below(4);
    for (int i = 0; i < count; ++i) {
      items += (i == 0 ? "" : ", ") + number(depth - 1);
    }
    const bool list = m_random.chance(30);
    if (!list && count == 1) {
      items += ",";
    }
    return number(depth - 1) + op + (list ? "[" + items + "]" : "(" + items + ")");
  }

  std::string identity() {
    static constexpr std::array<std::string_view, 12> k_tests = {
        "opt is None",  "opt is not None", "nothing is None",       "t is not None",
        "x is None",    "p is True",       "q is not False",        "v[0] is None",
        "None is None", "(a < b) is True", "(a == a) is not False", "s is None"};
    return std::string(m_random.pick(k_tests));
  }

  std::string text_condition() {
    static constexpr std::array<std::string_view, 14> k_tests = {"s == 'causal'",
                                                                 "s in ('dense', 'causal')",
                                                                 "'a' in s",
                                                                 "s < 'd'",
                                                                 "s + e == 'causalx'",
                                                                 "len(s) > 5",
                                                                 "s * 2 == s + s",
                                                                 "e",
                                                                 "'' in s",
                                                                 "s != 'dense'",
                                                                 "s > e",
                                                                 "s * k == ''",
                                                                 "(s + 'x') * 2 < s * 3",
                                                                 "\"cau\" + 'sal' == s"};
    return std::string(m_random.pick(k_tests));
  }

  // Literal spellings that the tokenizer must read as Python does.
  std::string lexical_condition() {
    static constexpr std::array<std::string_view, 16> k_tests = {
        "1_000 == 1000",        "0x1F == 31",       "0o17 == 15",       "0b101 == 5",
        "1e3 == 1000",          ".5 == 0.5",        "1_0.2_5e-1_0 > 0", "0XfF == 255",
        "'it\\'s' == \"it's\"", "'a\\tb' != 'a b'", "'\\q' == '\\\\q'", "'a' 'b' == 'ab'",
        "a < b  # a comment",   "(a <\n b)",        "1e400 > huge",     "0.1 + 0.2 == 0.3"};
    return std::string(m_random.pick(k_tests));
  }

  std::string sequence(int depth) {
    switch (m_random.below(6)) {
    case 0:
      return "t.shape";
    case 1:
      return "(" + integer(depth - 1) + ", " + integer(depth - 1) + ")";
    case 2:
      return "[" + number(depth - 1) + "]";
    case 3:
      return "r.size()";
    case 4:
      return "(" + integer(depth - 1) + ",) * " + integer_atom();
    default:
      return "()";
    }
  }

  std::string sequence_condition(int depth) {
    static constexpr std::array<std::string_view, 10> k_tests = {"t.shape == (4, 6)",
                                                                 "t.shape[-1] == n",
                                                                 "r.size() == (2, 3, 4)",
                                                                 "(a,) == [a]",
                                                                 "t.shape + (1,) == (4, 6, 1)",
                                                                 "min(t.shape) <= max(t.shape)",
                                                                 "len(t.shape * 2) == 4",
                                                                 "[a, b] == [a, b]",
                                                                 "(1, 2) < 3",
                                                                 "max(r.shape) in t.shape"};
    static constexpr std::array<std::string_view, 6> k_comparisons = {"<",  "<=", ">",
                                                                      ">=", "==", "!="};
    if (m_random.chance(40)) {
      return std::string(m_random.pick(k_tests));
    }
    return sequence(depth) + " " + std::string(m_random.pick(k_comparisons)) + " " +
           sequence(depth);
  }

  std::string failing_condition() {
    static constexpr std::array<std::string_view, 18> k_tests = {
        "t + 1 > 0",    "None < 1", "'a' < 1",  "t == 1", "len(a) > 0",  "u[0].item() == 0",
        "t.item() > 0", "w",        "t",        "z",      "len(z) == 0", "a.shape",
        "s + 1",        "v == v",   "x.item()", "r[0]",   "-s",          "abs(s) > 0"};
    return std::string(m_random.pick(k_tests));
  }

  std::string condition(int depth) {
    if (depth <= 0) {
      return integer_atom() + " < " + integer_atom();
    }
    switch (m_random.below(15)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return comparison(depth);
    case 13: {
      // Exact only when the quotient is: probes the rounding of / on ints over 2^53 too.
      static constexpr std::array<std::string_view, 6> k_large = {
          "big", "huge", "tiny", "big + 2", "huge - n", "4611686018427387905"};
      const std::string dividend =
          m_random.chance(50) ? std::string(m_random.pick(k_large)) : integer(depth - 1);
      const std::string divisor = m_random.chance(50) ? integer_atom() : integer(depth - 1);
      return "(" + dividend + ") / (" + divisor + ") == (" + dividend + ") // (" + divisor + ")";
    }
    case 4:
      return membership(depth);
    case 5:
      return "not " + condition(depth - 1);
    case 6:
      return maybe_parenthesised(condition(depth - 1)) + " and " +
             maybe_parenthesised(condition(depth - 1));
    case 7:
      return maybe_parenthesised(condition(depth - 1)) + " or " +
             maybe_parenthesised(condition(depth - 1));
    case 8:
      return identity();
    case 9:
      return text_condition();
    case 10:
      return sequence_condition(depth);
    case 11:
      return m_random.chance(70) ? failing_condition() : lexical_condition();
    case 12:
      return number(depth - 1) + (m_random.chance(50) ? " and " : " or ") + number(depth - 1);
    default:
      return "v[" + std::to_string(m_random.below(8) - 4) + "] " +
             (m_random.chance(50) ? "< " : "== ") + number(depth - 1);
    }
  }

  Random m_random;
};

constexpr int k_generated_expressions = 3000;

TEST(ConstraintDifferential, OracleFollowsTheEvaluatorsRules) {
  FIB_REQUIRE_ORACLE(oracle);
  ConstraintEnvironment environment;
  environment.axes = {{"a", 7}};
  environment.tensors = {{"v", tensor({3}, std::vector<double>{1, 2, 5})},
                         {"t", tensor({2, 3}, std::nullopt)}};
  const py::dict names = to_python(environment, *oracle);
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"-7 // 2 == -4", "satisfied"},
      {"7 % -3 == -2", "satisfied"},
      {"a // 0", "not evaluable"},
      {"2 ** 62 > 0", "satisfied"},
      {"2 ** 63 > 0", "not evaluable"},
      {"False and 2 ** 64", "violated"},
      {"False and 18446744073709551616", "not evaluable"},
      {"(-8) ** 0.5", "not evaluable"},
      {"v[-1].item() == 5", "satisfied"},
      {"v[3]", "not evaluable"},
      {"t.item()", "not evaluable"},
      {"t.shape == (2, 3)", "satisfied"},
      {"int(a)", "not evaluable"},
      {"0", "violated"},
  };
  for (const auto& [expression, expected] : cases) {
    EXPECT_EQ(python_verdict(*oracle, expression, names).outcome, expected) << expression;
  }
}

TEST(ConstraintDifferential, GeneratedExpressionsMatchPython) {
  FIB_REQUIRE_ORACLE(oracle);
  const auto environments = generated_environments();
  std::vector<py::dict> names;
  for (const auto& [label, environment] : environments) {
    names.push_back(to_python(environment, *oracle));
  }
  Comparison comparison(*oracle);
  ExpressionGenerator generator(20240613);
  for (int i = 0; i < k_generated_expressions; ++i) {
    const std::string expression = generator.expression();
    for (std::size_t e = 0; e < environments.size(); ++e) {
      comparison.check(expression, environments[e].second, names[e], environments[e].first);
    }
  }
  std::cout << "[ differential ] " << k_generated_expressions << " generated expressions, "
            << comparison.summary() << "\n";
  EXPECT_EQ(comparison.mismatches(), 0) << comparison.summary();
  // The generator must exercise every outcome, or the comparison proves little.
  for (const char* outcome : {"satisfied", "violated", "not evaluable"}) {
    EXPECT_GT(comparison.count(outcome), comparison.compared() / 10)
        << outcome << ": " << comparison.summary();
  }
}

// ---------------------------------------------------------------------------------------------
// Corpus constraints

struct CorpusInput {
  std::string name;
  std::optional<std::vector<std::string>> shape; // nullopt: a scalar
  std::string dtype;
  bool optional = false;
};

struct CorpusDefinition {
  std::string file;
  std::vector<std::string> constraints;
  std::vector<std::pair<std::string, std::optional<std::int64_t>>> axes; // const value if any
  std::vector<CorpusInput> inputs;
};

std::vector<CorpusDefinition> corpus_definitions(const Oracle& oracle,
                                                 const std::filesystem::path& root) {
  std::vector<CorpusDefinition> out;
  for (const py::handle entry : oracle.corpus_definitions(root.string())) {
    const auto row = entry.cast<py::tuple>();
    CorpusDefinition definition;
    definition.file = row[0].cast<std::string>();
    definition.constraints = row[1].cast<std::vector<std::string>>();
    for (const py::handle axis : row[2]) {
      const auto pair = axis.cast<py::tuple>();
      std::optional<std::int64_t> value;
      if (!pair[1].is_none()) {
        value = pair[1].cast<std::int64_t>();
      }
      definition.axes.emplace_back(pair[0].cast<std::string>(), value);
    }
    for (const py::handle input : row[3]) {
      const auto fields = input.cast<py::tuple>();
      CorpusInput spec;
      spec.name = fields[0].cast<std::string>();
      if (!fields[1].is_none()) {
        spec.shape = fields[1].cast<std::vector<std::string>>();
      }
      spec.dtype = fields[2].cast<std::string>();
      spec.optional = fields[3].cast<bool>();
      definition.inputs.push_back(std::move(spec));
    }
    out.push_back(std::move(definition));
  }
  return out;
}

bool integral_dtype(std::string_view dtype) {
  return dtype == "int64" || dtype == "int32" || dtype == "int16" || dtype == "int8" ||
         dtype == "bool";
}

// One dimension of a shape: a number, an axis, or an expression over the axes.
std::int64_t resolve_dimension(const std::string& dim, const ConstraintEnvironment& axes_only) {
  if (const auto value = evaluate_integer(dim, axes_only)) {
    return *value;
  }
  return 1;
}

ScalarFact random_scalar(std::string_view dtype, Random& random) {
  static constexpr std::array<std::string_view, 3> k_words = {"dense", "causal", "other"};
  if (dtype == "bool") {
    return random.chance(50);
  }
  if (dtype.rfind("float", 0) == 0 || dtype == "bfloat16") {
    return 0.25 * random.below(9);
  }
  if (dtype == "string" || dtype == "str") {
    return std::string(random.pick(k_words));
  }
  return std::int64_t{random.below(7)};
}

// A workload-like environment for `definition`: const axes keep their value, var axes get small
// values (so that relations such as "a == b + 1" hold now and then), optional inputs are
// sometimes absent, and small tensors usually have data.
ConstraintEnvironment corpus_environment(const CorpusDefinition& definition, Random& random) {
  static constexpr std::array<std::int64_t, 12> k_sizes = {0, 1, 1, 2, 2, 3, 3, 4, 5, 8, 64, 128};
  ConstraintEnvironment environment;
  for (const auto& [name, value] : definition.axes) {
    environment.axes[name] = value ? *value : random.pick(k_sizes);
  }
  const ConstraintEnvironment axes_only = environment;
  for (const CorpusInput& input : definition.inputs) {
    if (input.optional && random.chance(30)) {
      environment.absent.insert(input.name);
      continue;
    }
    if (!input.shape) {
      environment.scalars[input.name] = random_scalar(input.dtype, random);
      continue;
    }
    TensorFacts facts;
    facts.integral = integral_dtype(input.dtype);
    for (const std::string& dim : *input.shape) {
      facts.shape.push_back(resolve_dimension(dim, axes_only));
    }
    std::int64_t numel = 1;
    for (const std::int64_t dim : facts.shape) {
      numel = dim < 0 ? -1 : numel * dim;
    }
    if (numel >= 0 && numel <= 64 && random.chance(75)) {
      std::vector<double> values;
      for (std::int64_t i = 0; i < numel; ++i) {
        values.push_back(facts.integral ? random.below(7) : 0.5 * random.below(7));
      }
      facts.values = std::move(values);
    }
    environment.tensors[input.name] = std::move(facts);
  }
  return environment;
}

constexpr int k_environments_per_definition = 16;

TEST(ConstraintDifferential, CorpusConstraintsMatchPython) {
  const std::filesystem::path root = testing::corpus_dir();
  if (root.empty()) {
    GTEST_SKIP() << "corpus not found";
  }
  FIB_REQUIRE_ORACLE(oracle);
  const std::vector<CorpusDefinition> definitions = corpus_definitions(*oracle, root);
  ASSERT_FALSE(definitions.empty()) << "no definition with constraints under " << root;
  Comparison comparison(*oracle);
  std::size_t constraints = 0;
  for (std::size_t d = 0; d < definitions.size(); ++d) {
    const CorpusDefinition& definition = definitions[d];
    constraints += definition.constraints.size();
    Random random(0xC0FFEE + d);
    for (int trial = 0; trial < k_environments_per_definition; ++trial) {
      const ConstraintEnvironment environment = corpus_environment(definition, random);
      const py::dict names = to_python(environment, *oracle);
      for (const std::string& constraint : definition.constraints) {
        comparison.check(constraint, environment, names,
                         definition.file + ", environment " + std::to_string(trial));
      }
    }
  }
  std::cout << "[ differential ] " << constraints << " corpus constraints in " << definitions.size()
            << " definitions, " << k_environments_per_definition
            << " environments each: " << comparison.summary() << "\n";
  EXPECT_EQ(comparison.mismatches(), 0) << comparison.summary();
  EXPECT_GT(comparison.count("satisfied"), 0) << comparison.summary();
  EXPECT_GT(comparison.count("violated"), 0) << comparison.summary();
}

} // namespace
} // namespace fib
