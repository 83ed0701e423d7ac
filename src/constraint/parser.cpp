#include "constraint/parser.hpp"

#include <fib/constraint/constraint.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

namespace fib::constraint_detail {

namespace {

// Counts recursion through the self-nesting rules; never lets it pass the limit.
class NestingGuard {
public:
  explicit NestingGuard(int& nesting) : m_nesting(nesting) { ++m_nesting; }
  ~NestingGuard() { --m_nesting; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
  bool too_deep() const { return m_nesting > k_constraint_max_nesting; }

private:
  int& m_nesting;
};

std::vector<NodePtr> list_of(NodePtr a, NodePtr b = nullptr) {
  std::vector<NodePtr> out;
  out.push_back(std::move(a));
  if (b) {
    out.push_back(std::move(b));
  }
  return out;
}

} // namespace

NodePtr Parser::parse() {
  if (peek().kind == TokenKind::end) {
    return fail("empty expression");
  }
  NodePtr root = parse_expression();
  if (!root) {
    return nullptr;
  }
  if (peek().kind != TokenKind::end) {
    return fail_unexpected();
  }
  return root;
}

const Token& Parser::peek(std::size_t ahead) const {
  const std::size_t index = std::min(m_index + ahead, m_tokens.size() - 1);
  return m_tokens[index];
}

bool Parser::at_op(std::string_view op) const {
  return peek().kind == TokenKind::op && peek().text == op;
}

bool Parser::at_keyword(std::string_view keyword, std::size_t ahead) const {
  return peek(ahead).kind == TokenKind::keyword && peek(ahead).text == keyword;
}

const Token& Parser::advance() {
  const Token& token = peek();
  if (m_index + 1 < m_tokens.size()) {
    ++m_index;
  }
  return token;
}

NodePtr Parser::fail(std::string detail) {
  if (m_error.empty()) {
    m_error = std::move(detail);
  }
  return nullptr;
}

NodePtr Parser::fail_unexpected() {
  const Token& token = peek();
  const std::string& t = token.text;
  if (token.kind == TokenKind::end) {
    return fail("syntax error: unexpected end of expression");
  }
  if (token.kind == TokenKind::op) {
    if (t == ":=") {
      return fail("unsupported syntax: assignment expression ':='");
    }
    if (t == "=" ||
        (t.size() >= 2 && t.back() == '=' && t != "==" && t != "!=" && t != "<=" && t != ">=")) {
      return fail("unsupported syntax: assignment");
    }
    if (t == "&" || t == "|" || t == "^" || t == "~" || t == "<<" || t == ">>" || t == "@") {
      return fail(fmt::format("unsupported operator '{}'", t));
    }
    if (t == ":") {
      return fail("unsupported syntax: slice");
    }
    if (t == "{") {
      return fail("unsupported syntax: dict or set display");
    }
    if (t == "...") {
      return fail("unsupported syntax: Ellipsis");
    }
    return fail(fmt::format("syntax error: unexpected '{}' at column {}", t, token.begin + 1));
  }
  if (token.kind == TokenKind::keyword) {
    if (t == "for" || t == "async") {
      return fail("unsupported syntax: comprehension");
    }
    if (t == "if" || t == "else") {
      return fail("unsupported syntax: conditional expression");
    }
    if (t == "lambda" || t == "await" || t == "yield") {
      return fail(fmt::format("unsupported syntax: {}", t));
    }
    return fail(
        fmt::format("syntax error: unexpected keyword '{}' at column {}", t, token.begin + 1));
  }
  const std::string_view what = token.kind == TokenKind::name     ? "name"
                                : token.kind == TokenKind::string ? "string"
                                                                  : "number";
  return fail(fmt::format("syntax error: unexpected {} '{}' at column {}", what,
                          cut(std::string(m_source.substr(token.begin, token.end - token.begin))),
                          token.begin + 1));
}

NodePtr Parser::make(NodeKind kind, std::size_t begin, std::vector<NodePtr> children) {
  auto node = std::make_unique<Node>();
  node->kind = kind;
  node->begin = begin;
  node->end = previous_end();
  for (const NodePtr& child : children) {
    node->depth = std::max(node->depth, child->depth + 1);
  }
  node->children = std::move(children);
  if (node->depth > k_max_tree_depth) {
    return fail("expression too deeply nested");
  }
  return node;
}

NodePtr Parser::parse_expression() {
  const NestingGuard guard(m_nesting);
  if (guard.too_deep()) {
    return fail("expression too deeply nested");
  }
  return parse_logical(LogicalOp::or_op);
}

NodePtr Parser::parse_logical(LogicalOp op) {
  const std::size_t begin = peek().begin;
  const std::string_view keyword = op == LogicalOp::or_op ? "or" : "and";
  const auto operand = [&] {
    return op == LogicalOp::or_op ? parse_logical(LogicalOp::and_op) : parse_not();
  };
  NodePtr first = operand();
  if (!first || !at_keyword(keyword)) {
    return first;
  }
  std::vector<NodePtr> operands = list_of(std::move(first));
  while (at_keyword(keyword)) {
    advance();
    NodePtr next = operand();
    if (!next) {
      return nullptr;
    }
    operands.push_back(std::move(next));
  }
  NodePtr node = make(NodeKind::logical, begin, std::move(operands));
  if (node) {
    node->logical = op;
  }
  return node;
}

NodePtr Parser::parse_not() {
  if (!at_keyword("not")) {
    return parse_comparison();
  }
  const NestingGuard guard(m_nesting);
  if (guard.too_deep()) {
    return fail("expression too deeply nested");
  }
  const std::size_t begin = advance().begin;
  NodePtr operand = parse_not();
  if (!operand) {
    return nullptr;
  }
  return make(NodeKind::not_op, begin, list_of(std::move(operand)));
}

std::optional<CompareOp> Parser::comparison_operator() {
  const Token& token = peek();
  if (token.kind == TokenKind::op) {
    static constexpr std::pair<std::string_view, CompareOp> k_ops[] = {
        {"==", CompareOp::eq}, {"!=", CompareOp::ne}, {"<", CompareOp::lt},
        {"<=", CompareOp::le}, {">", CompareOp::gt},  {">=", CompareOp::ge}};
    for (const auto& [spelling, op] : k_ops) {
      if (token.text == spelling) {
        advance();
        return op;
      }
    }
    return std::nullopt;
  }
  if (at_keyword("in")) {
    advance();
    return CompareOp::in;
  }
  if (at_keyword("not") && at_keyword("in", 1)) {
    advance();
    advance();
    return CompareOp::not_in;
  }
  if (at_keyword("is")) {
    advance();
    if (at_keyword("not")) {
      advance();
      return CompareOp::is_not;
    }
    return CompareOp::is;
  }
  return std::nullopt;
}

NodePtr Parser::parse_comparison() {
  const std::size_t begin = peek().begin;
  NodePtr first = parse_arith();
  if (!first) {
    return nullptr;
  }
  std::vector<CompareOp> ops;
  std::vector<NodePtr> operands = list_of(std::move(first));
  while (const auto op = comparison_operator()) {
    NodePtr next = parse_arith();
    if (!next) {
      return nullptr;
    }
    ops.push_back(*op);
    operands.push_back(std::move(next));
  }
  if (ops.empty()) {
    return std::move(operands.front());
  }
  NodePtr node = make(NodeKind::compare, begin, std::move(operands));
  if (node) {
    node->compares = std::move(ops);
  }
  return node;
}

NodePtr Parser::parse_binary_level(bool multiplicative) {
  const std::size_t begin = peek().begin;
  NodePtr left = multiplicative ? parse_factor() : parse_binary_level(true);
  while (left) {
    std::optional<BinaryOp> op;
    if (!multiplicative && at_op("+")) {
      op = BinaryOp::add;
    } else if (!multiplicative && at_op("-")) {
      op = BinaryOp::subtract;
    } else if (multiplicative && at_op("*")) {
      op = BinaryOp::multiply;
    } else if (multiplicative && at_op("/")) {
      op = BinaryOp::divide;
    } else if (multiplicative && at_op("//")) {
      op = BinaryOp::floor_divide;
    } else if (multiplicative && at_op("%")) {
      op = BinaryOp::modulo;
    }
    if (!op) {
      break;
    }
    advance();
    NodePtr right = multiplicative ? parse_factor() : parse_binary_level(true);
    if (!right) {
      return nullptr;
    }
    left = make(NodeKind::binary, begin, list_of(std::move(left), std::move(right)));
    if (left) {
      left->binary = *op;
    }
  }
  return left;
}

NodePtr Parser::parse_factor() {
  if (!at_op("-") && !at_op("+")) {
    if (at_op("~")) {
      return fail_unexpected();
    }
    return parse_power();
  }
  const NestingGuard guard(m_nesting);
  if (guard.too_deep()) {
    return fail("expression too deeply nested");
  }
  const Token& token = advance();
  const std::size_t begin = token.begin;
  const UnaryOp op = token.text == "-" ? UnaryOp::negate : UnaryOp::plus;
  NodePtr operand = parse_factor();
  if (!operand) {
    return nullptr;
  }
  NodePtr node = make(NodeKind::unary, begin, list_of(std::move(operand)));
  if (node) {
    node->unary = op;
  }
  return node;
}

NodePtr Parser::parse_power() {
  const std::size_t begin = peek().begin;
  NodePtr base = parse_postfix();
  if (!base || !at_op("**")) {
    return base;
  }
  // base ** -base ** … recurses through parse_factor without a unary operator.
  const NestingGuard guard(m_nesting);
  if (guard.too_deep()) {
    return fail("expression too deeply nested");
  }
  advance();
  NodePtr exponent = parse_factor();
  if (!exponent) {
    return nullptr;
  }
  NodePtr node = make(NodeKind::binary, begin, list_of(std::move(base), std::move(exponent)));
  if (node) {
    node->binary = BinaryOp::power;
  }
  return node;
}

NodePtr Parser::parse_postfix() {
  const std::size_t begin = peek().begin;
  NodePtr node = parse_atom();
  while (node) {
    if (at_op("(")) {
      std::vector<NodePtr> parts = list_of(std::move(node));
      if (!parse_call_arguments(parts)) {
        return nullptr;
      }
      node = make(NodeKind::call, begin, std::move(parts));
    } else if (at_op("[")) {
      advance();
      if (at_op(":")) {
        return fail_unexpected();
      }
      NodePtr index = parse_expression();
      if (!index) {
        return nullptr;
      }
      if (at_op(",")) {
        return fail("unsupported syntax: multi-dimensional index");
      }
      if (!at_op("]")) {
        return fail_unexpected();
      }
      advance();
      node = make(NodeKind::subscript, begin, list_of(std::move(node), std::move(index)));
    } else if (at_op(".")) {
      advance();
      if (peek().kind != TokenKind::name) {
        return fail_unexpected();
      }
      std::string attribute = advance().text;
      node = make(NodeKind::attribute, begin, list_of(std::move(node)));
      if (node) {
        node->name = std::move(attribute);
      }
    } else {
      break;
    }
  }
  return node;
}

bool Parser::parse_call_arguments(std::vector<NodePtr>& parts) {
  advance(); // (
  while (!at_op(")")) {
    if (at_op("*") || at_op("**")) {
      fail("unsupported syntax: starred argument");
      return false;
    }
    if (peek().kind == TokenKind::name && peek(1).kind == TokenKind::op && peek(1).text == "=") {
      fail("unsupported syntax: keyword argument");
      return false;
    }
    NodePtr argument = parse_expression();
    if (!argument) {
      return false;
    }
    parts.push_back(std::move(argument));
    if (at_op(",")) {
      advance();
    } else if (!at_op(")")) {
      fail_unexpected();
      return false;
    }
  }
  advance(); // )
  return true;
}

NodePtr Parser::parse_display(std::string_view close, SequenceKind kind) {
  const std::size_t begin = advance().begin;
  std::vector<NodePtr> items;
  bool saw_comma = false;
  while (!at_op(close)) {
    NodePtr item = parse_expression();
    if (!item) {
      return nullptr;
    }
    items.push_back(std::move(item));
    if (at_op(",")) {
      saw_comma = true;
      advance();
    } else if (!at_op(close)) {
      return fail_unexpected();
    }
  }
  advance();
  if (kind == SequenceKind::tuple && items.size() == 1 && !saw_comma) {
    // A parenthesised expression: widen the span so that "(x).shape" echoes as written.
    NodePtr inner = std::move(items.front());
    inner->begin = begin;
    inner->end = previous_end();
    return inner;
  }
  NodePtr node = make(NodeKind::sequence, begin, std::move(items));
  if (node) {
    node->sequence = kind;
  }
  return node;
}

NodePtr Parser::parse_atom() {
  const Token& token = peek();
  const std::size_t begin = token.begin;
  switch (token.kind) {
  case TokenKind::integer:
  case TokenKind::floating: {
    advance();
    NodePtr node = make(NodeKind::constant, begin, {});
    node->constant =
        token.kind == TokenKind::integer ? make_int(token.integer) : make_float(token.floating);
    return node;
  }
  case TokenKind::string: {
    // Adjacent literals concatenate, as in Python.
    std::string text;
    while (peek().kind == TokenKind::string) {
      text += advance().text;
    }
    NodePtr node = make(NodeKind::constant, begin, {});
    node->constant = Value{std::move(text)};
    return node;
  }
  case TokenKind::name: {
    advance();
    NodePtr node = make(NodeKind::name, begin, {});
    node->name = token.text;
    return node;
  }
  case TokenKind::keyword:
    if (token.text == "None" || token.text == "True" || token.text == "False") {
      advance();
      NodePtr node = make(NodeKind::constant, begin, {});
      if (token.text != "None") {
        node->constant = make_bool(token.text == "True");
      }
      return node;
    }
    return fail_unexpected();
  case TokenKind::op:
    if (token.text == "(") {
      return parse_display(")", SequenceKind::tuple);
    }
    if (token.text == "[") {
      return parse_display("]", SequenceKind::list);
    }
    return fail_unexpected();
  case TokenKind::end:
    return fail_unexpected();
  }
  return fail_unexpected();
}

} // namespace fib::constraint_detail
