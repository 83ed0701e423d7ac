#pragma once
// The parser of constraint expressions: recursive descent over Python's expression grammar
// (or_test down to atoms), building a syntax tree with bounded nesting and depth. Constructs
// outside the supported subset are refused with a detail that names them.
// Private to src/constraint.

#include "constraint/syntax_tree.hpp"
#include "constraint/tokenizer.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::constraint_detail {

// --- Interface ---

// Parses the tokens of `source` (from Tokenizer::run) into one expression. Nesting deeper than
// k_constraint_max_nesting or a tree deeper than k_max_tree_depth is "expression too deeply
// nested".
class Parser {
public:
  Parser(std::string_view source, const std::vector<Token>& tokens)
      : m_source(source), m_tokens(tokens) {}

  // The whole expression, or nullptr with error() set.
  NodePtr parse();

  const std::string& error() const { return m_error; }

private:
  const Token& peek(std::size_t ahead = 0) const;
  bool at_op(std::string_view op) const;
  bool at_keyword(std::string_view keyword, std::size_t ahead = 0) const;
  const Token& advance();
  std::size_t previous_end() const { return m_index == 0 ? 0 : m_tokens[m_index - 1].end; }

  NodePtr fail(std::string detail);

  // A detail for the token that cannot continue the expression: unsupported constructs are
  // named, everything else is a syntax error with its column.
  NodePtr fail_unexpected();

  NodePtr make(NodeKind kind, std::size_t begin, std::vector<NodePtr> children);

  NodePtr parse_expression();

  // or_test and and_test; `a or b or c` is one node with three operands.
  NodePtr parse_logical(LogicalOp op);

  NodePtr parse_not();

  std::optional<CompareOp> comparison_operator();

  NodePtr parse_comparison();

  // Left-associative binary levels: + - (additive) and * / // % (multiplicative).
  NodePtr parse_arith() { return parse_binary_level(false); }

  NodePtr parse_binary_level(bool multiplicative);

  // Unary + and -; they bind looser than ** on their right: -2 ** 2 == -(2 ** 2).
  NodePtr parse_factor();

  // power := postfix ['**' factor]; right-associative through parse_factor.
  NodePtr parse_power();

  NodePtr parse_postfix();

  bool parse_call_arguments(std::vector<NodePtr>& parts);

  // ( ... ) and [ ... ]: a parenthesised expression, a tuple or a list.
  NodePtr parse_display(std::string_view close, SequenceKind kind);

  NodePtr parse_atom();

  std::string_view m_source;
  const std::vector<Token>& m_tokens;
  std::size_t m_index = 0;
  int m_nesting = 0;
  std::string m_error;
};

} // namespace fib::constraint_detail
