#pragma once
// The syntax tree of a constraint expression, as the parser builds it and the evaluator walks
// it. Private to src/constraint.

#include "constraint/value.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fib::constraint_detail {

// --- Interface ---

// Left-associative chains ("a + b + c + …") and postfix chains deepen the tree without nesting;
// the parser refuses trees deeper than this, which bounds the evaluator's (and the tree
// destructor's) recursion.
inline constexpr int k_max_tree_depth = 200;

enum class NodeKind {
  constant,
  name,
  sequence,
  unary,
  binary,
  logical,
  not_op,
  compare,
  call,
  attribute,
  subscript
};
enum class UnaryOp { negate, plus };
enum class BinaryOp { add, subtract, multiply, divide, floor_divide, modulo, power };
enum class LogicalOp { and_op, or_op };
enum class CompareOp { eq, ne, lt, le, gt, ge, in, not_in, is, is_not };

// The operator as written in Python: "+", "//", "not in", ...
std::string_view symbol(BinaryOp op);
std::string_view symbol(CompareOp op);

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeKind kind = NodeKind::constant;
  std::size_t begin = 0; // source span, for echoing subexpressions
  std::size_t end = 0;
  int depth = 1;
  Value constant;   // constant
  std::string name; // name; attribute name
  UnaryOp unary = UnaryOp::negate;
  BinaryOp binary = BinaryOp::add;
  LogicalOp logical = LogicalOp::and_op;
  SequenceKind sequence = SequenceKind::tuple;
  std::vector<CompareOp> compares; // compare: one per pair of operands
  // binary, compare, logical, sequence: operands; unary, not_op: the operand;
  // call: callee then arguments; attribute: the object; subscript: object, index.
  std::vector<NodePtr> children;
};

} // namespace fib::constraint_detail
