#pragma once
// The evaluator of constraint expressions: walks a syntax tree with Python semantics against a
// ConstraintEnvironment, and records the values it read for the message of a violated
// constraint. Its member functions live in three files: evaluator.cpp (names, operators that
// decide truth, the walk itself), evaluator_arithmetic.cpp (arithmetic and comparisons) and
// evaluator_access.cpp (calls, attributes and subscripts). Private to src/constraint.

#include "constraint/syntax_tree.hpp"
#include "constraint/value.hpp"

#include <fib/constraint/constraint.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::constraint_detail {

// --- Interface ---

// The longest str, tuple or list that concatenation and repetition may build (in characters or
// items); longer results are not evaluable.
inline constexpr std::size_t k_max_sequence_length = k_constraint_max_length;

// Which values a name (or a name-rooted chain such as "x.shape[0]") adds to the list shown for a
// violated constraint.
enum class Record { all, except_tensors, none };

// The supported functions (min, max, abs, len), tensor attributes (shape, ndim) and tensor
// methods (item, numel, dim, size).
bool is_supported_function(std::string_view name);
bool is_supported_attribute(std::string_view name);
bool is_supported_method(std::string_view name);

// The first (leftmost, innermost) attribute, method or function outside the supported set, e.g.
// "unsupported method 'sum'"; nullopt when there is none. Checked before anything is evaluated,
// so that such a constraint is reported the same way whatever the workload holds.
std::optional<std::string> find_unsupported(const Node& node);

// One evaluation of one expression. Every failure (a Python error, missing data, an int over 64
// bits) gives nullopt with error() set to the first reason; nothing throws except the standard
// library (std::bad_alloc).
class Evaluator {
public:
  // `source` is the expression text the tree's spans point into; both it and `environment` must
  // outlive the evaluator.
  Evaluator(std::string_view source, const ConstraintEnvironment& environment)
      : m_source(source), m_environment(environment) {}

  std::optional<Value> eval(const Node& node, Record record);

  // Python truthiness; nullopt (with error()) for tensors whose truth value is ambiguous or
  // unknown.
  std::optional<bool> truthy(const Value& value);

  const std::string& error() const { return m_error; }
  // "label=value" for each value read, in the order first read, without repeats.
  const std::vector<std::string>& reads() const { return m_reads; }

private:
  // ---- evaluator.cpp
  std::nullopt_t fail(std::string detail);
  std::string_view text_of(const Node& node) const;
  void note_read(std::string_view label, const Value& value, Record record);
  bool defined(const std::string& name) const;
  std::optional<Value> eval_name(const Node& node, Record record);
  // The tensor's element as a Python number, or a failure that says what is missing.
  std::optional<Value> scalar_of(const TensorRef& tensor, std::size_t index);
  // Replaces a 0-d tensor by its number; other values pass through.
  std::optional<Value> resolve(const Value& value);
  std::optional<Value> eval_sequence(const Node& node, Record record);
  std::optional<Value> eval_unary(const Node& node, Record record);
  std::optional<Value> eval_binary(const Node& node, Record record);
  std::optional<Value> eval_logical(const Node& node, Record record);
  std::optional<Value> eval_not(const Node& node, Record record);
  std::optional<Value> eval_compare(const Node& node, Record record);

  // ---- evaluator_arithmetic.cpp
  std::optional<Value> arithmetic(BinaryOp op, Value left, Value right);
  // + on two str or two tuples (lists), * of one of them by an int.
  std::optional<Value> sequence_arithmetic(BinaryOp op, const Value& a, const Value& b);
  std::optional<Value> integer_overflow();
  std::optional<Value> integer_arithmetic(BinaryOp op, std::int64_t a, std::int64_t b);
  std::optional<Value> integer_power(std::int64_t base, std::int64_t exponent);
  std::optional<Value> float_arithmetic(BinaryOp op, double a, double b);
  std::optional<Value> float_power(double a, double b);
  std::optional<bool> compare(CompareOp op, const Value& left, const Value& right);
  std::optional<bool> contains_value(const Value& container, const Value& item);
  std::optional<bool> equals(const Value& left, const Value& right);
  // < <= > >=: numbers with numbers, str with str, tuples (lists) lexicographically.
  std::optional<bool> order(CompareOp op, const Value& left, const Value& right);

  // ---- evaluator_access.cpp
  std::optional<std::int64_t> integer_argument(const Value& value, std::string_view what);
  // Python's index normalisation: -1 is the last of `length` items.
  std::optional<std::size_t> normalise_index(std::int64_t index, std::size_t length,
                                             std::string_view what);
  std::optional<Value> eval_chain(const Node& node, Record record);
  std::optional<Value> eval_attribute(const Node& node);
  std::optional<Value> eval_subscript(const Node& node, Record record);
  std::optional<Value> eval_call(const Node& node, Record record);
  std::optional<Value> call_builtin(const std::string& name, const std::vector<Value>& arguments);
  std::optional<Value> builtin_min_max(const std::string& name,
                                       const std::vector<Value>& arguments);
  std::optional<Value> builtin_abs(const Value& argument);
  std::optional<Value> builtin_len(const Value& argument);
  std::optional<Value> eval_method(const Node& node, Record record);

  std::string_view m_source;
  const ConstraintEnvironment& m_environment;
  std::string m_error;
  std::vector<std::string> m_reads; // "name=value", in the order first read
};

} // namespace fib::constraint_detail
