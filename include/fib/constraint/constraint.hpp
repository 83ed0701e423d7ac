#pragma once
// Constraint evaluation: a small, safe evaluator for the Python expression subset that kernel
// definitions use in `constraints` (for example "num_qo_heads % num_kv_heads == 0" or
// "num_kv_indices == kv_indptr[-1].item()"), so that a workload can be checked against its
// definition without starting Python.
//
// The evaluator is total: every input, however hostile (deep nesting, huge literals, garbage),
// gives a ConstraintResult. Nothing is thrown, nothing is printed, and recursion is bounded.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fib {

// --- Interface ---

// What is known about one tensor input of a workload.
struct TensorFacts {
  std::vector<std::int64_t> shape;
  // The elements, flattened in row-major order; set only when the tensor's data is known (read
  // from a safetensors blob). Its size must equal the product of `shape`.
  std::optional<std::vector<double>> values;
  // Whether the element dtype is an integer or bool type: `.item()` then gives a Python int.
  bool integral = true;
};

// A Python scalar input: int, float, bool, str or None (std::monostate).
using ScalarFact = std::variant<std::int64_t, double, bool, std::string, std::monostate>;

// The names an expression may read. A name is looked up in `axes`, then `scalars`, then
// `tensors`, then `absent`; a name in none of them makes the expression not evaluable.
struct ConstraintEnvironment {
  std::map<std::string, std::int64_t> axes;
  std::map<std::string, ScalarFact> scalars;
  std::map<std::string, TensorFacts> tensors;
  std::set<std::string> absent; // names that are None (optional inputs that were not given)
};

enum class ConstraintOutcome { satisfied, violated, not_evaluable };

// "satisfied", "violated" or "not evaluable".
std::string_view to_string(ConstraintOutcome outcome);

struct ConstraintResult {
  ConstraintOutcome outcome = ConstraintOutcome::not_evaluable;
  // satisfied: empty.
  // violated: the expression and the values it read, e.g. "num_qo_heads % num_kv_heads == 0 is
  //   false with num_qo_heads=32, num_kv_heads=6" (subexpressions such as "kv_indptr[-1].item()"
  //   or "w.shape[1]" are listed with their values; echoed text is cut at 80 characters).
  // not_evaluable: why, without the expression, e.g. "unknown name 'x'", "needs the data of
  //   tensor 'kv_indptr'", "division by zero", "unsupported syntax: comprehension".
  std::string detail;
};

// Maximum expression length in bytes and maximum nesting; longer or deeper input is
// not_evaluable ("expression longer than 16384 characters", "expression too deeply nested").
inline constexpr std::size_t k_constraint_max_length = 16384;
inline constexpr int k_constraint_max_nesting = 64;

// Evaluates `expression` with Python semantics against `environment` and judges the result by
// Python truthiness.
//
// Supported: int (64-bit; larger literals or results are not_evaluable), float, str (escapes
// \\ \' \" \n \t \r; other escapes are kept as written, as Python does, except \a \b \f \v \x
// \u \U \N and octal ones, which are not_evaluable), None, True, False, tuple and list literals;
// + - * / // % ** (floor division and modulo follow the divisor's sign; / gives the float
// nearest the exact quotient); + joins two str, tuples or lists and * by an int repeats one
// (results longer than 16384 are not_evaluable); indexing a tuple or list with an int; unary -
// + and `not`; == != < <= > >= (chained), `in` / `not in`, `is` / `is not` with None, True or
// False; `and` / `or` with short-circuit; min() and max() of several arguments or of one tuple
// or list, abs(), len() (of a str, tuple or list, or a tensor's first dimension); on a tensor:
// .shape, .shape[i], .ndim, .dim(), .numel(), .size(), .size(i), t[i] (1-D tensors only) and
// .item() (needs the data). t[i] is a 0-d tensor that arithmetic, comparisons and truth tests
// treat as its number (which needs the data).
// Everything else (other attributes or calls, lambdas, comprehensions, slices, indexing a str,
// bitwise operators, assignments, conditional expressions) is not_evaluable with a detail that
// names it. Python errors (ZeroDivisionError, IndexError, TypeError, ...) are not_evaluable too.
ConstraintResult evaluate_constraint(std::string_view expression,
                                     const ConstraintEnvironment& environment);

// A constraint parsed once, to be evaluated against many environments (every workload line of a
// definition). evaluate() gives exactly what evaluate_constraint gives for the same text; the
// parse is the part it saves. Copies share the parsed tree (immutable), so they are cheap and
// may be evaluated from several threads at once.
class CompiledConstraint {
public:
  explicit CompiledConstraint(std::string expression);
  ConstraintResult evaluate(const ConstraintEnvironment& environment) const;
  const std::string& expression() const;

private:
  struct State;
  std::shared_ptr<const State> m_state;
};

// The value of `expression` when it evaluates (same subset and semantics as evaluate_constraint)
// to a Python int (not a bool); nullopt otherwise. Never throws.
std::optional<std::int64_t> evaluate_integer(std::string_view expression,
                                             const ConstraintEnvironment& environment);

} // namespace fib
