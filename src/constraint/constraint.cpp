#include "fib/constraint/constraint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <utility>

namespace fib {

namespace {

// Echoed expression text and values are cut here (house message style).
constexpr std::size_t k_echo_limit = 80;
// Left-associative chains ("a + b + c + …") and postfix chains deepen the tree without nesting;
// this bounds the evaluator's (and the tree destructor's) recursion.
constexpr int k_max_tree_depth = 200;

// ---------------------------------------------------------------------------------------------
// Values

struct Value;

enum class SequenceKind { tuple, list };

struct Sequence {
  SequenceKind kind = SequenceKind::tuple;
  std::vector<Value> items;
};

struct TensorRef {
  std::string_view name; // a key of ConstraintEnvironment::tensors, which outlives evaluation
  const TensorFacts* facts = nullptr;
};

// A 0-d tensor: element `index` of a 1-D tensor. torch gives a tensor here, not a number; it
// behaves as a number once its data is known.
struct ElementRef {
  TensorRef tensor;
  std::size_t index = 0;
};

struct Value {
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Sequence, TensorRef,
               ElementRef>
      data;
};

Value make_int(std::int64_t v) {
  return Value{v};
}
Value make_float(double v) {
  return Value{v};
}
Value make_bool(bool v) {
  return Value{v};
}

bool is_none(const Value& v) {
  return std::holds_alternative<std::monostate>(v.data);
}

std::string_view type_name(const Value& v) {
  switch (v.data.index()) {
  case 0:
    return "NoneType";
  case 1:
    return "bool";
  case 2:
    return "int";
  case 3:
    return "float";
  case 4:
    return "str";
  case 5:
    return std::get<Sequence>(v.data).kind == SequenceKind::tuple ? "tuple" : "list";
  default:
    return "Tensor";
  }
}

struct Number {
  bool is_float = false;
  std::int64_t integer = 0;
  double floating = 0.0;
  double as_double() const { return is_float ? floating : static_cast<double>(integer); }
  long double as_long_double() const {
    // long double holds every int64 exactly on x86-64 and AArch64, so mixed int/float
    // comparisons are exact, as in Python.
    return is_float ? static_cast<long double>(floating) : static_cast<long double>(integer);
  }
};

// bool, int and float are numbers (bool is an int subclass in Python); 0-d tensors must be
// resolved first.
std::optional<Number> as_number(const Value& v) {
  if (const auto* b = std::get_if<bool>(&v.data)) {
    return Number{false, *b ? 1 : 0, 0.0};
  }
  if (const auto* i = std::get_if<std::int64_t>(&v.data)) {
    return Number{false, *i, 0.0};
  }
  if (const auto* f = std::get_if<double>(&v.data)) {
    return Number{true, 0, *f};
  }
  return std::nullopt;
}

std::string cut(std::string text, std::size_t limit = k_echo_limit) {
  if (text.size() <= limit) {
    return text;
  }
  std::size_t end = limit;
  // Do not split a UTF-8 sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
    --end;
  }
  text.resize(end);
  text += "...";
  return text;
}

// Python's repr() of a float: shortest round-trip digits, fixed notation for exponents in
// [-4, 16), scientific with a two-digit exponent otherwise.
std::string python_float_repr(double d) {
  if (std::isnan(d)) {
    return "nan";
  }
  if (std::isinf(d)) {
    return d < 0 ? "-inf" : "inf";
  }
  if (d == 0.0) {
    return std::signbit(d) ? "-0.0" : "0.0";
  }
  char buffer[64];
  const auto converted =
      std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific);
  const std::string scientific(buffer, converted.ptr);
  std::string out;
  std::size_t pos = 0;
  if (scientific[0] == '-') {
    out += '-';
    pos = 1;
  }
  const std::size_t e_pos = scientific.find('e');
  std::string digits;
  for (std::size_t i = pos; i < e_pos; ++i) {
    if (scientific[i] != '.') {
      digits += scientific[i];
    }
  }
  const int exponent = std::atoi(scientific.c_str() + e_pos + 1);
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      const auto int_digits = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= int_digits) {
        out += digits;
        out.append(int_digits - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_digits);
        out += '.';
        out += digits.substr(int_digits);
      }
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += fmt::format("e{}{:02}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

std::string python_str_repr(std::string_view text) {
  const char quote =
      (text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos)
          ? '"'
          : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

std::string shape_repr(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out += fmt::format("{}{}", i == 0 ? "" : ", ", shape[i]);
  }
  out += shape.size() == 1 ? ",)" : ")";
  return out;
}

std::optional<std::int64_t> checked_numel(const std::vector<std::int64_t>& shape) {
  std::int64_t product = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(product, dim, &product)) {
      return std::nullopt;
    }
  }
  return product;
}

// The element as a Python number, or nullopt when the data is missing or inconsistent.
std::optional<Value> known_element(const TensorRef& tensor, std::size_t index) {
  const TensorFacts& facts = *tensor.facts;
  const auto numel = checked_numel(facts.shape);
  if (!facts.values || !numel || facts.values->size() != static_cast<std::size_t>(*numel) ||
      index >= facts.values->size()) {
    return std::nullopt;
  }
  const double element = (*facts.values)[index];
  if (!facts.integral) {
    return make_float(element);
  }
  // 2^63 is exactly representable; anything at or above it does not fit.
  constexpr double k_two_63 = 9223372036854775808.0;
  if (!std::isfinite(element) || element != std::trunc(element) || element >= k_two_63 ||
      element < -k_two_63) {
    return std::nullopt;
  }
  return make_int(static_cast<std::int64_t>(element));
}

std::string repr(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "None";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return fmt::format("{}", x);
        } else if constexpr (std::is_same_v<T, double>) {
          return python_float_repr(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return python_str_repr(x);
        } else if constexpr (std::is_same_v<T, Sequence>) {
          const bool tuple = x.kind == SequenceKind::tuple;
          std::string out = tuple ? "(" : "[";
          for (std::size_t i = 0; i < x.items.size(); ++i) {
            out += (i == 0 ? "" : ", ") + repr(x.items[i]);
          }
          out += tuple ? (x.items.size() == 1 ? ",)" : ")") : "]";
          return out;
        } else if constexpr (std::is_same_v<T, TensorRef>) {
          return "<tensor of shape " + shape_repr(x.facts->shape) + ">";
        } else {
          const auto element = known_element(x.tensor, x.index);
          return element ? "tensor(" + repr(*element) + ")" : "<0-d tensor>";
        }
      },
      v.data);
}

// ---------------------------------------------------------------------------------------------
// Tokens

enum class TokenKind { end, integer, floating, string, name, keyword, op };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text; // name, keyword or operator spelling; decoded contents of a string
  std::int64_t integer = 0;
  double floating = 0.0;
  std::size_t begin = 0;
  std::size_t end = 0;
};

constexpr std::string_view k_keywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

// Longest first, so that "**=" wins over "**" and "*".
constexpr std::string_view k_operators[] = {
    "**=", "//=", ">>=", "<<=", "...", "**", "//", "==", "!=", "<=", ">=", "<<",
    ">>",  ":=",  "->",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "@=",
    "+",   "-",   "*",   "/",   "%",   "<",  ">",  "(",  ")",  "[",  "]",  "{",
    "}",   ",",   ".",   ":",   ";",   "=",  "&",  "|",  "^",  "~",  "@",  "!"};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

std::string describe_character(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x21 && byte < 0x7F) {
    return fmt::format("'{}'", c);
  }
  return fmt::format("byte 0x{:02X}", byte);
}

class Tokenizer {
public:
  explicit Tokenizer(std::string_view source) : m_source(source) {}

  // Fills `tokens` (ending with an `end` token) or returns false with error() set.
  bool run(std::vector<Token>& tokens) {
    int bracket_depth = 0;
    while (m_pos < m_source.size()) {
      const char c = m_source[m_pos];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++m_pos;
      } else if (c == '\n' || c == '\r') {
        // Python accepts line breaks only inside brackets (or trailing).
        if (bracket_depth == 0 &&
            m_source.find_first_not_of(" \t\f\r\n", m_pos) != std::string_view::npos) {
          return fail("syntax error: line break outside brackets");
        }
        ++m_pos;
      } else if (c == '#') {
        while (m_pos < m_source.size() && m_source[m_pos] != '\n') {
          ++m_pos;
        }
      } else if (c == '\\') {
        return fail("unsupported syntax: line continuation");
      } else if (is_digit(c) ||
                 (c == '.' && m_pos + 1 < m_source.size() && is_digit(m_source[m_pos + 1]))) {
        if (!lex_number(tokens)) {
          return false;
        }
      } else if (is_name_start(c)) {
        if (!lex_name(tokens)) {
          return false;
        }
      } else if (c == '\'' || c == '"') {
        if (!lex_string(tokens)) {
          return false;
        }
      } else {
        const auto op =
            std::find_if(std::begin(k_operators), std::end(k_operators),
                         [&](std::string_view o) { return m_source.substr(m_pos, o.size()) == o; });
        if (op == std::end(k_operators)) {
          return fail(fmt::format("syntax error: unexpected character {} at column {}",
                                  describe_character(c), m_pos + 1));
        }
        if (*op == "(" || *op == "[" || *op == "{") {
          // Checked here so that a flood of brackets never reaches the parser.
          if (++bracket_depth > k_constraint_max_nesting) {
            return fail("expression too deeply nested");
          }
        } else if ((*op == ")" || *op == "]" || *op == "}") && bracket_depth > 0) {
          --bracket_depth;
        }
        tokens.push_back(Token{TokenKind::op, std::string(*op), 0, 0.0, m_pos, m_pos + op->size()});
        m_pos += op->size();
      }
    }
    tokens.push_back(Token{TokenKind::end, "", 0, 0.0, m_source.size(), m_source.size()});
    return true;
  }

  const std::string& error() const { return m_error; }

private:
  bool fail(std::string detail) {
    m_error = std::move(detail);
    return false;
  }

  // Reads digit ('_'? digit)* in `base` starting at `pos`; appends the digits (without
  // underscores) to `out`. Returns false on a misplaced underscore.
  static bool read_digits(std::string_view run, std::size_t& pos, int base, std::string& out) {
    const auto valid = [base](char c) {
      if (base == 16) {
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      }
      return c >= '0' && c < static_cast<char>('0' + base);
    };
    bool last_was_digit = false;
    while (pos < run.size()) {
      const char c = run[pos];
      if (valid(c)) {
        out += c;
        last_was_digit = true;
      } else if (c == '_' && last_was_digit && pos + 1 < run.size() && valid(run[pos + 1])) {
        last_was_digit = false;
      } else if (c == '_') {
        return false;
      } else {
        break;
      }
      ++pos;
    }
    return true;
  }

  bool lex_number(std::vector<Token>& tokens) {
    const std::size_t begin = m_pos;
    // The maximal run of characters a number could be made of; it is then parsed strictly.
    std::size_t end = m_pos;
    while (end < m_source.size()) {
      const char c = m_source[end];
      const bool exponent_sign = (c == '+' || c == '-') &&
                                 (m_source[end - 1] == 'e' || m_source[end - 1] == 'E') &&
                                 !(m_source.size() > begin + 1 && m_source[begin] == '0' &&
                                   (m_source[begin + 1] == 'x' || m_source[begin + 1] == 'X'));
      if (is_name_char(c) || c == '.' || exponent_sign) {
        ++end;
      } else {
        break;
      }
    }
    const std::string_view run = m_source.substr(begin, end - begin);
    m_pos = end;
    const auto invalid = [&] {
      return fail(fmt::format("syntax error: invalid number literal '{}'", cut(std::string(run))));
    };
    Token token{TokenKind::integer, std::string(run), 0, 0.0, begin, end};

    int base = 10;
    std::size_t pos = 0;
    if (run.size() > 1 && run[0] == '0') {
      const char prefix = static_cast<char>(run[1] | 0x20);
      base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 10;
    }
    if (base != 10) {
      pos = 2;
      if (pos < run.size() && run[pos] == '_') {
        ++pos;
      }
      std::string digits;
      if (!read_digits(run, pos, base, digits) || digits.empty() || pos != run.size()) {
        return invalid();
      }
      return push_integer(tokens, token, digits, base);
    }

    std::string text;
    std::string int_digits;
    if (!read_digits(run, pos, 10, int_digits)) {
      return invalid();
    }
    text += int_digits;
    bool is_float = false;
    bool negative_exponent = false;
    if (pos < run.size() && run[pos] == '.') {
      is_float = true;
      text += '.';
      ++pos;
      if (pos < run.size() && run[pos] == '_') {
        return invalid();
      }
      if (!read_digits(run, pos, 10, text)) {
        return invalid();
      }
    }
    if (pos < run.size() && (run[pos] == 'e' || run[pos] == 'E')) {
      is_float = true;
      text += 'e';
      ++pos;
      if (pos < run.size() && (run[pos] == '+' || run[pos] == '-')) {
        negative_exponent = run[pos] == '-';
        text += run[pos];
        ++pos;
      }
      std::string exponent_digits;
      if (!read_digits(run, pos, 10, exponent_digits) || exponent_digits.empty()) {
        return invalid();
      }
      text += exponent_digits;
    }
    if (pos < run.size() && (run[pos] == 'j' || run[pos] == 'J') && pos + 1 == run.size()) {
      return fail("unsupported syntax: complex number literal");
    }
    if (pos != run.size()) {
      return invalid();
    }
    if (!is_float) {
      if (int_digits.size() > 1 && int_digits[0] == '0' &&
          int_digits.find_first_not_of('0') != std::string::npos) {
        return fail("syntax error: leading zeros in decimal integer literals are not permitted");
      }
      return push_integer(tokens, token, int_digits, 10);
    }
    double value = 0.0;
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
    if (parsed.ec == std::errc::result_out_of_range) {
      // Python rounds to inf or 0.0. The magnitude is out of range one way or the other: a
      // negative exponent (or a tiny fraction with none) means underflow.
      const bool tiny = negative_exponent || int_digits.find_first_not_of('0') == std::string::npos;
      value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (parsed.ec != std::errc{} || parsed.ptr != text.data() + text.size()) {
      return invalid();
    }
    token.kind = TokenKind::floating;
    token.floating = value;
    tokens.push_back(std::move(token));
    return true;
  }

  bool push_integer(std::vector<Token>& tokens, Token token, const std::string& digits, int base) {
    std::int64_t value = 0;
    for (const char c : digits) {
      const int digit = is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
      if (__builtin_mul_overflow(value, static_cast<std::int64_t>(base), &value) ||
          __builtin_add_overflow(value, static_cast<std::int64_t>(digit), &value)) {
        return fail(fmt::format("integer literal '{}' does not fit in 64 bits", cut(token.text)));
      }
    }
    token.integer = value;
    tokens.push_back(std::move(token));
    return true;
  }

  bool lex_name(std::vector<Token>& tokens) {
    const std::size_t begin = m_pos;
    while (m_pos < m_source.size() && is_name_char(m_source[m_pos])) {
      ++m_pos;
    }
    std::string name(m_source.substr(begin, m_pos - begin));
    if (m_pos < m_source.size() && (m_source[m_pos] == '\'' || m_source[m_pos] == '"') &&
        name.size() <= 2 && name.find_first_not_of("rRbBuUfF") == std::string::npos) {
      return fail(fmt::format("unsupported syntax: string prefix '{}'", name));
    }
    const bool keyword =
        std::find(std::begin(k_keywords), std::end(k_keywords), name) != std::end(k_keywords);
    tokens.push_back(Token{keyword ? TokenKind::keyword : TokenKind::name, std::move(name), 0, 0.0,
                           begin, m_pos});
    return true;
  }

  bool lex_string(std::vector<Token>& tokens) {
    const std::size_t begin = m_pos;
    const char quote = m_source[m_pos];
    if (m_source.substr(m_pos, 3) == std::string(3, quote)) {
      return fail("unsupported syntax: triple-quoted string");
    }
    ++m_pos;
    std::string text;
    while (true) {
      if (m_pos >= m_source.size() || m_source[m_pos] == '\n') {
        return fail(
            fmt::format("syntax error: unterminated string literal at column {}", begin + 1));
      }
      const char c = m_source[m_pos];
      if (c == quote) {
        ++m_pos;
        break;
      }
      if (c != '\\') {
        text += c;
        ++m_pos;
        continue;
      }
      if (m_pos + 1 >= m_source.size()) {
        return fail(
            fmt::format("syntax error: unterminated string literal at column {}", begin + 1));
      }
      const char escaped = m_source[m_pos + 1];
      m_pos += 2;
      switch (escaped) {
      case '\\':
      case '\'':
      case '"':
        text += escaped;
        break;
      case 'n':
        text += '\n';
        break;
      case 't':
        text += '\t';
        break;
      case 'r':
        text += '\r';
        break;
      case '\n':
        break; // backslash-newline continues the literal
      case 'a':
      case 'b':
      case 'f':
      case 'v':
      case 'x':
      case 'u':
      case 'U':
      case 'N':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
        return fail(fmt::format("unsupported syntax: escape sequence '\\{}' in a string", escaped));
      default:
        // Python keeps unrecognised escapes as written.
        text += '\\';
        text += escaped;
        break;
      }
    }
    tokens.push_back(Token{TokenKind::string, std::move(text), 0, 0.0, begin, m_pos});
    return true;
  }

  std::string_view m_source;
  std::size_t m_pos = 0;
  std::string m_error;
};

// ---------------------------------------------------------------------------------------------
// Syntax tree

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

std::string_view symbol(BinaryOp op) {
  switch (op) {
  case BinaryOp::add:
    return "+";
  case BinaryOp::subtract:
    return "-";
  case BinaryOp::multiply:
    return "*";
  case BinaryOp::divide:
    return "/";
  case BinaryOp::floor_divide:
    return "//";
  case BinaryOp::modulo:
    return "%";
  case BinaryOp::power:
    return "**";
  }
  return "?";
}

std::string_view symbol(CompareOp op) {
  switch (op) {
  case CompareOp::eq:
    return "==";
  case CompareOp::ne:
    return "!=";
  case CompareOp::lt:
    return "<";
  case CompareOp::le:
    return "<=";
  case CompareOp::gt:
    return ">";
  case CompareOp::ge:
    return ">=";
  case CompareOp::in:
    return "in";
  case CompareOp::not_in:
    return "not in";
  case CompareOp::is:
    return "is";
  case CompareOp::is_not:
    return "is not";
  }
  return "?";
}

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

class Parser {
public:
  Parser(std::string_view source, const std::vector<Token>& tokens)
      : m_source(source), m_tokens(tokens) {}

  // The whole expression, or nullptr with error() set.
  NodePtr parse() {
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

  const std::string& error() const { return m_error; }

private:
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

  const Token& peek(std::size_t ahead = 0) const {
    const std::size_t index = std::min(m_index + ahead, m_tokens.size() - 1);
    return m_tokens[index];
  }
  bool at_op(std::string_view op) const {
    return peek().kind == TokenKind::op && peek().text == op;
  }
  bool at_keyword(std::string_view keyword, std::size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::keyword && peek(ahead).text == keyword;
  }
  const Token& advance() {
    const Token& token = peek();
    if (m_index + 1 < m_tokens.size()) {
      ++m_index;
    }
    return token;
  }
  std::size_t previous_end() const { return m_index == 0 ? 0 : m_tokens[m_index - 1].end; }

  NodePtr fail(std::string detail) {
    if (m_error.empty()) {
      m_error = std::move(detail);
    }
    return nullptr;
  }

  // A detail for the token that cannot continue the expression: unsupported constructs are
  // named, everything else is a syntax error with its column.
  NodePtr fail_unexpected() {
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

  NodePtr make(NodeKind kind, std::size_t begin, std::vector<NodePtr> children) {
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

  static std::vector<NodePtr> list_of(NodePtr a, NodePtr b = nullptr) {
    std::vector<NodePtr> out;
    out.push_back(std::move(a));
    if (b) {
      out.push_back(std::move(b));
    }
    return out;
  }

  NodePtr parse_expression() {
    const NestingGuard guard(m_nesting);
    if (guard.too_deep()) {
      return fail("expression too deeply nested");
    }
    return parse_logical(LogicalOp::or_op);
  }

  // or_test and and_test; `a or b or c` is one node with three operands.
  NodePtr parse_logical(LogicalOp op) {
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

  NodePtr parse_not() {
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

  std::optional<CompareOp> comparison_operator() {
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

  NodePtr parse_comparison() {
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

  // Left-associative binary levels: + - (additive) and * / // % (multiplicative).
  NodePtr parse_arith() { return parse_binary_level(false); }

  NodePtr parse_binary_level(bool multiplicative) {
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

  // Unary + and -; they bind looser than ** on their right: -2 ** 2 == -(2 ** 2).
  NodePtr parse_factor() {
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

  // power := postfix ['**' factor]; right-associative through parse_factor.
  NodePtr parse_power() {
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

  NodePtr parse_postfix() {
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

  bool parse_call_arguments(std::vector<NodePtr>& parts) {
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

  // ( ... ) and [ ... ]: a parenthesised expression, a tuple or a list.
  NodePtr parse_display(std::string_view close, SequenceKind kind) {
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

  NodePtr parse_atom() {
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

  std::string_view m_source;
  const std::vector<Token>& m_tokens;
  std::size_t m_index = 0;
  int m_nesting = 0;
  std::string m_error;
};

// ---------------------------------------------------------------------------------------------
// Evaluation

// Which values a name (or a name-rooted chain such as "x.shape[0]") adds to the list shown for a
// violated constraint.
enum class Record { all, except_tensors, none };

constexpr std::string_view k_builtins[] = {"min", "max", "abs", "len"};
constexpr std::string_view k_attributes[] = {"shape", "ndim"};
constexpr std::string_view k_methods[] = {"item", "numel", "dim", "size"};

template <std::size_t N> bool contains(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// Rejects attributes, methods and functions outside the supported set before anything is
// evaluated, so that such a constraint is reported the same way whatever the workload holds.
// Children first, so the leftmost unsupported construct is the one named.
std::optional<std::string> find_unsupported(const Node& node) {
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    const Node& child = *node.children[i];
    if (node.kind == NodeKind::call && i == 0 && child.kind == NodeKind::attribute) {
      // The callee of a method call: check its object only; the method is checked below.
      if (auto found = find_unsupported(*child.children[0])) {
        return found;
      }
      continue;
    }
    if (auto found = find_unsupported(child)) {
      return found;
    }
  }
  if (node.kind == NodeKind::attribute && !contains(k_attributes, node.name)) {
    return fmt::format("unsupported attribute '{}'", node.name);
  }
  if (node.kind == NodeKind::call) {
    const Node& callee = *node.children[0];
    if (callee.kind == NodeKind::attribute && !contains(k_methods, callee.name)) {
      return fmt::format("unsupported method '{}'", callee.name);
    }
    if (callee.kind == NodeKind::name && !contains(k_builtins, callee.name)) {
      return fmt::format("unsupported function '{}'", callee.name);
    }
    if (callee.kind != NodeKind::attribute && callee.kind != NodeKind::name) {
      return std::string("unsupported call");
    }
  }
  return std::nullopt;
}

class Evaluator {
public:
  Evaluator(std::string_view source, const ConstraintEnvironment& environment)
      : m_source(source), m_environment(environment) {}

  std::optional<Value> eval(const Node& node, Record record) {
    switch (node.kind) {
    case NodeKind::constant:
      return node.constant;
    case NodeKind::name:
      return eval_name(node, record);
    case NodeKind::sequence: {
      Sequence sequence{node.sequence, {}};
      for (const NodePtr& child : node.children) {
        auto item = eval(*child, record);
        if (!item) {
          return std::nullopt;
        }
        sequence.items.push_back(std::move(*item));
      }
      return Value{std::move(sequence)};
    }
    case NodeKind::unary:
      return eval_unary(node, record);
    case NodeKind::binary: {
      auto left = eval(*node.children[0], record);
      if (!left) {
        return std::nullopt;
      }
      auto right = eval(*node.children[1], record);
      if (!right) {
        return std::nullopt;
      }
      return arithmetic(node.binary, std::move(*left), std::move(*right));
    }
    case NodeKind::logical:
      return eval_logical(node, record);
    case NodeKind::not_op: {
      auto operand = eval(*node.children[0], record);
      if (!operand) {
        return std::nullopt;
      }
      const auto truth = truthy(*operand);
      if (!truth) {
        return std::nullopt;
      }
      return make_bool(!*truth);
    }
    case NodeKind::compare:
      return eval_compare(node, record);
    case NodeKind::call:
      return eval_call(node, record);
    case NodeKind::attribute:
    case NodeKind::subscript:
      return eval_chain(node, record);
    }
    return fail("unsupported syntax");
  }

  // Python truthiness; nullopt (with error()) for tensors whose truth value is ambiguous or
  // unknown.
  std::optional<bool> truthy(const Value& value) {
    const auto resolved = resolve(value);
    if (!resolved) {
      return std::nullopt;
    }
    if (const auto* tensor = std::get_if<TensorRef>(&resolved->data)) {
      const auto numel = checked_numel(tensor->facts->shape);
      if (numel && *numel == 1) {
        const auto element = scalar_of(*tensor, 0);
        return element ? truthy(*element) : std::nullopt;
      }
      fail(fmt::format("the truth value of tensor '{}' with {} elements is ambiguous", tensor->name,
                       numel ? fmt::format("{}", *numel) : std::string("many")));
      return std::nullopt;
    }
    return std::visit(
        [](const auto& x) -> bool {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            return false;
          } else if constexpr (std::is_same_v<T, bool>) {
            return x;
          } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
            return x != 0;
          } else if constexpr (std::is_same_v<T, std::string>) {
            return !x.empty();
          } else if constexpr (std::is_same_v<T, Sequence>) {
            return !x.items.empty();
          } else {
            return true; // not reached: tensors are handled above
          }
        },
        resolved->data);
  }

  const std::string& error() const { return m_error; }
  const std::vector<std::string>& reads() const { return m_reads; }

private:
  std::nullopt_t fail(std::string detail) {
    if (m_error.empty()) {
      m_error = std::move(detail);
    }
    return std::nullopt;
  }

  std::string_view text_of(const Node& node) const {
    return m_source.substr(node.begin, node.end - node.begin);
  }

  void note_read(std::string_view label, const Value& value, Record record) {
    if (record == Record::none ||
        (record == Record::except_tensors && std::holds_alternative<TensorRef>(value.data))) {
      return;
    }
    std::string entry = cut(std::string(label)) + "=" + cut(repr(value));
    if (std::find(m_reads.begin(), m_reads.end(), entry) == m_reads.end()) {
      m_reads.push_back(std::move(entry));
    }
  }

  bool defined(const std::string& name) const {
    return m_environment.axes.count(name) != 0 || m_environment.scalars.count(name) != 0 ||
           m_environment.tensors.count(name) != 0 || m_environment.absent.count(name) != 0;
  }

  std::optional<Value> eval_name(const Node& node, Record record) {
    std::optional<Value> value;
    if (const auto axis = m_environment.axes.find(node.name); axis != m_environment.axes.end()) {
      value = make_int(axis->second);
    } else if (const auto scalar = m_environment.scalars.find(node.name);
               scalar != m_environment.scalars.end()) {
      value = std::visit([](const auto& x) { return Value{x}; }, scalar->second);
    } else if (const auto tensor = m_environment.tensors.find(node.name);
               tensor != m_environment.tensors.end()) {
      value = Value{TensorRef{tensor->first, &tensor->second}};
    } else if (m_environment.absent.count(node.name) != 0) {
      value = Value{};
    } else if (contains(k_builtins, node.name)) {
      return fail(fmt::format("builtin '{}' used as a value", node.name));
    } else {
      return fail(fmt::format("unknown name '{}'", node.name));
    }
    note_read(node.name, *value, record);
    return value;
  }

  // The tensor's element as a Python number, or a failure that says what is missing.
  std::optional<Value> scalar_of(const TensorRef& tensor, std::size_t index) {
    const TensorFacts& facts = *tensor.facts;
    if (!facts.values) {
      return fail(fmt::format("needs the data of tensor '{}'", tensor.name));
    }
    const auto numel = checked_numel(facts.shape);
    if (!numel || facts.values->size() != static_cast<std::size_t>(*numel)) {
      return fail(fmt::format("the data of tensor '{}' has {} values, its shape {} needs {}",
                              tensor.name, facts.values->size(), shape_repr(facts.shape),
                              numel ? fmt::format("{}", *numel) : std::string("more")));
    }
    auto element = known_element(tensor, index);
    if (!element && index >= facts.values->size()) {
      return fail(fmt::format("index {} is out of range for tensor '{}'", index, tensor.name));
    }
    if (!element) {
      return fail(fmt::format("element {} of tensor '{}' is not a 64-bit integer ({})", index,
                              tensor.name, python_float_repr((*facts.values)[index])));
    }
    return element;
  }

  // Replaces a 0-d tensor by its number; other values pass through.
  std::optional<Value> resolve(const Value& value) {
    if (const auto* element = std::get_if<ElementRef>(&value.data)) {
      return scalar_of(element->tensor, element->index);
    }
    return value;
  }

  std::optional<Value> eval_unary(const Node& node, Record record) {
    auto operand = eval(*node.children[0], record);
    if (!operand) {
      return std::nullopt;
    }
    operand = resolve(*operand);
    if (!operand) {
      return std::nullopt;
    }
    const auto number = as_number(*operand);
    const char* spelling = node.unary == UnaryOp::negate ? "-" : "+";
    if (!number) {
      return fail(
          fmt::format("bad operand type for unary {}: '{}'", spelling, type_name(*operand)));
    }
    if (node.unary == UnaryOp::plus) {
      return number->is_float ? make_float(number->floating) : make_int(number->integer);
    }
    if (number->is_float) {
      return make_float(-number->floating);
    }
    if (number->integer == std::numeric_limits<std::int64_t>::min()) {
      return fail("integer overflow: the result does not fit in 64 bits");
    }
    return make_int(-number->integer);
  }

  std::optional<Value> eval_logical(const Node& node, Record record) {
    // Python returns the deciding operand itself, not a bool.
    std::optional<Value> value;
    for (const NodePtr& child : node.children) {
      value = eval(*child, record);
      if (!value) {
        return std::nullopt;
      }
      const auto truth = truthy(*value);
      if (!truth) {
        return std::nullopt;
      }
      if (*truth == (node.logical == LogicalOp::or_op)) {
        return value;
      }
    }
    return value;
  }

  std::optional<Value> eval_compare(const Node& node, Record record) {
    auto left = eval(*node.children[0], record);
    if (!left) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < node.compares.size(); ++i) {
      auto right = eval(*node.children[i + 1], record);
      if (!right) {
        return std::nullopt;
      }
      const auto result = compare(node.compares[i], *left, *right);
      if (!result) {
        return std::nullopt;
      }
      if (!*result) {
        return make_bool(false); // a < b < c stops at the first false link
      }
      left = std::move(right);
    }
    return make_bool(true);
  }

  // ---- arithmetic

  std::optional<Value> arithmetic(BinaryOp op, Value left, Value right) {
    auto a = resolve(left);
    if (!a) {
      return std::nullopt;
    }
    auto b = resolve(right);
    if (!b) {
      return std::nullopt;
    }
    if (op == BinaryOp::add) {
      if (const auto* x = std::get_if<std::string>(&a->data)) {
        if (const auto* y = std::get_if<std::string>(&b->data)) {
          return Value{*x + *y};
        }
      }
      if (const auto* x = std::get_if<Sequence>(&a->data)) {
        if (const auto* y = std::get_if<Sequence>(&b->data); y && y->kind == x->kind) {
          Sequence joined = *x;
          joined.items.insert(joined.items.end(), y->items.begin(), y->items.end());
          return Value{std::move(joined)};
        }
      }
    }
    const auto x = as_number(*a);
    const auto y = as_number(*b);
    if (!x || !y) {
      return fail(fmt::format("unsupported operand types for {}: '{}' and '{}'", symbol(op),
                              type_name(*a), type_name(*b)));
    }
    if (!x->is_float && !y->is_float && !(op == BinaryOp::power && y->integer < 0)) {
      return integer_arithmetic(op, x->integer, y->integer);
    }
    return float_arithmetic(op, x->as_double(), y->as_double());
  }

  std::optional<Value> integer_overflow() {
    return fail("integer overflow: the result does not fit in 64 bits");
  }

  std::optional<Value> integer_arithmetic(BinaryOp op, std::int64_t a, std::int64_t b) {
    std::int64_t result = 0;
    switch (op) {
    case BinaryOp::add:
      return __builtin_add_overflow(a, b, &result) ? integer_overflow() : make_int(result);
    case BinaryOp::subtract:
      return __builtin_sub_overflow(a, b, &result) ? integer_overflow() : make_int(result);
    case BinaryOp::multiply:
      return __builtin_mul_overflow(a, b, &result) ? integer_overflow() : make_int(result);
    case BinaryOp::divide:
      if (b == 0) {
        return fail("division by zero");
      }
      return make_float(static_cast<double>(a) / static_cast<double>(b));
    case BinaryOp::floor_divide: {
      if (b == 0) {
        return fail("division by zero");
      }
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
        return integer_overflow();
      }
      std::int64_t quotient = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) {
        --quotient; // Python rounds toward negative infinity
      }
      return make_int(quotient);
    }
    case BinaryOp::modulo: {
      if (b == 0) {
        return fail("division by zero");
      }
      if (b == -1) {
        return make_int(0); // also avoids INT64_MIN % -1, which traps in C++
      }
      std::int64_t remainder = a % b;
      if (remainder != 0 && ((remainder < 0) != (b < 0))) {
        remainder += b; // the sign follows the divisor
      }
      return make_int(remainder);
    }
    case BinaryOp::power: {
      // b >= 0 here (a negative exponent gives a float).
      std::int64_t value = 1;
      std::int64_t base = a;
      std::int64_t exponent = b;
      while (exponent > 0) {
        if ((exponent & 1) != 0 && __builtin_mul_overflow(value, base, &value)) {
          return integer_overflow();
        }
        exponent >>= 1;
        if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) {
          return integer_overflow();
        }
      }
      return make_int(value);
    }
    }
    return fail("unsupported operator");
  }

  std::optional<Value> float_arithmetic(BinaryOp op, double a, double b) {
    switch (op) {
    case BinaryOp::add:
      return make_float(a + b);
    case BinaryOp::subtract:
      return make_float(a - b);
    case BinaryOp::multiply:
      return make_float(a * b);
    case BinaryOp::divide:
      if (b == 0.0) {
        return fail("division by zero");
      }
      return make_float(a / b);
    case BinaryOp::floor_divide:
    case BinaryOp::modulo: {
      if (b == 0.0) {
        return fail("division by zero");
      }
      // CPython's float_divmod.
      double mod = std::fmod(a, b);
      double div = (a - mod) / b;
      if (mod != 0.0) {
        if ((b < 0) != (mod < 0)) {
          mod += b;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, b);
      }
      double floor_div = 0.0;
      if (div != 0.0) {
        floor_div = std::floor(div);
        if (div - floor_div > 0.5) {
          floor_div += 1.0;
        }
      } else {
        floor_div = std::copysign(0.0, a / b);
      }
      return make_float(op == BinaryOp::modulo ? mod : floor_div);
    }
    case BinaryOp::power: {
      if (b == 0.0) {
        return make_float(1.0);
      }
      if (a == 0.0 && b < 0.0) {
        return fail("division by zero: zero raised to a negative power");
      }
      if (std::isfinite(a) && std::isfinite(b) && a < 0.0 && b != std::floor(b)) {
        return fail("unsupported result: a negative number to a fractional power is complex");
      }
      const double result = std::pow(a, b);
      if (std::isinf(result) && std::isfinite(a) && std::isfinite(b)) {
        return fail("float overflow in '**'");
      }
      return make_float(result);
    }
    }
    return fail("unsupported operator");
  }

  // ---- comparisons

  std::optional<bool> compare(CompareOp op, const Value& left, const Value& right) {
    switch (op) {
    case CompareOp::is:
    case CompareOp::is_not: {
      const auto singleton = [](const Value& v) {
        return std::holds_alternative<std::monostate>(v.data) ||
               std::holds_alternative<bool>(v.data);
      };
      if (!singleton(left) && !singleton(right)) {
        return fail("'is' is only supported with None, True or False");
      }
      bool same = left.data.index() == right.data.index();
      if (same && std::holds_alternative<bool>(left.data)) {
        same = std::get<bool>(left.data) == std::get<bool>(right.data);
      }
      return op == CompareOp::is ? same : !same;
    }
    case CompareOp::in:
    case CompareOp::not_in: {
      const auto found = contains_value(right, left);
      if (!found) {
        return std::nullopt;
      }
      return op == CompareOp::in ? *found : !*found;
    }
    case CompareOp::eq:
    case CompareOp::ne: {
      const auto equal = equals(left, right);
      if (!equal) {
        return std::nullopt;
      }
      return op == CompareOp::eq ? *equal : !*equal;
    }
    default:
      return order(op, left, right);
    }
  }

  std::optional<bool> contains_value(const Value& container, const Value& item) {
    if (const auto* sequence = std::get_if<Sequence>(&container.data)) {
      for (const Value& element : sequence->items) {
        const auto equal = equals(item, element);
        if (!equal) {
          return std::nullopt;
        }
        if (*equal) {
          return true;
        }
      }
      return false;
    }
    if (const auto* text = std::get_if<std::string>(&container.data)) {
      const auto* needle = std::get_if<std::string>(&item.data);
      if (!needle) {
        return fail(fmt::format("'in <string>' requires string as left operand, not '{}'",
                                type_name(item)));
      }
      return text->find(*needle) != std::string::npos;
    }
    if (const auto* tensor = std::get_if<TensorRef>(&container.data)) {
      return fail(fmt::format("'in' on tensor '{}' is not supported", tensor->name));
    }
    return fail(fmt::format("argument of type '{}' is not iterable", type_name(container)));
  }

  std::optional<bool> equals(const Value& left, const Value& right) {
    const auto a = resolve(left);
    if (!a) {
      return std::nullopt;
    }
    const auto b = resolve(right);
    if (!b) {
      return std::nullopt;
    }
    for (const Value* v : {&*a, &*b}) {
      if (const auto* tensor = std::get_if<TensorRef>(&v->data)) {
        return fail(
            fmt::format("comparing tensor '{}' elementwise is not supported", tensor->name));
      }
    }
    const auto x = as_number(*a);
    const auto y = as_number(*b);
    if (x && y) {
      if (!x->is_float && !y->is_float) {
        return x->integer == y->integer;
      }
      return x->as_long_double() == y->as_long_double();
    }
    if (a->data.index() != b->data.index()) {
      return false; // different types (numbers aside) are never equal
    }
    if (is_none(*a)) {
      return true;
    }
    if (const auto* s = std::get_if<std::string>(&a->data)) {
      return *s == std::get<std::string>(b->data);
    }
    const auto& p = std::get<Sequence>(a->data);
    const auto& q = std::get<Sequence>(b->data);
    if (p.kind != q.kind || p.items.size() != q.items.size()) {
      return false;
    }
    for (std::size_t i = 0; i < p.items.size(); ++i) {
      const auto equal = equals(p.items[i], q.items[i]);
      if (!equal || !*equal) {
        return equal;
      }
    }
    return true;
  }

  template <class T> static bool apply_order(CompareOp op, const T& a, const T& b) {
    switch (op) {
    case CompareOp::lt:
      return a < b;
    case CompareOp::le:
      return a <= b;
    case CompareOp::gt:
      return a > b;
    default:
      return a >= b;
    }
  }

  // < <= > >=: numbers with numbers, str with str, tuples (lists) lexicographically.
  std::optional<bool> order(CompareOp op, const Value& left, const Value& right) {
    const auto a = resolve(left);
    if (!a) {
      return std::nullopt;
    }
    const auto b = resolve(right);
    if (!b) {
      return std::nullopt;
    }
    const auto x = as_number(*a);
    const auto y = as_number(*b);
    if (x && y) {
      if (!x->is_float && !y->is_float) {
        return apply_order(op, x->integer, y->integer);
      }
      return apply_order(op, x->as_long_double(), y->as_long_double());
    }
    if (const auto* s = std::get_if<std::string>(&a->data)) {
      if (const auto* t = std::get_if<std::string>(&b->data)) {
        // Byte order of UTF-8 is code point order, which is what Python compares.
        return apply_order(op, *s, *t);
      }
    }
    if (const auto* p = std::get_if<Sequence>(&a->data)) {
      if (const auto* q = std::get_if<Sequence>(&b->data); q && q->kind == p->kind) {
        const std::size_t common = std::min(p->items.size(), q->items.size());
        for (std::size_t i = 0; i < common; ++i) {
          const auto equal = equals(p->items[i], q->items[i]);
          if (!equal) {
            return std::nullopt;
          }
          if (!*equal) {
            return order(op, p->items[i], q->items[i]);
          }
        }
        return apply_order(op, p->items.size(), q->items.size());
      }
    }
    return fail(fmt::format("'{}' not supported between instances of '{}' and '{}'", symbol(op),
                            type_name(*a), type_name(*b)));
  }

  // ---- calls, attributes and subscripts

  // Whether `node` is a chain of attributes, subscripts and method calls on a name.
  static bool rooted_at_name(const Node& node) {
    const Node* current = &node;
    while (true) {
      if (current->kind == NodeKind::name) {
        return true;
      }
      if (current->kind == NodeKind::attribute || current->kind == NodeKind::subscript) {
        current = current->children[0].get();
      } else if (current->kind == NodeKind::call &&
                 current->children[0]->kind == NodeKind::attribute) {
        current = current->children[0]->children[0].get();
      } else {
        return false;
      }
    }
  }

  std::optional<std::int64_t> integer_argument(const Value& value, std::string_view what) {
    if (const auto* i = std::get_if<std::int64_t>(&value.data)) {
      return *i;
    }
    if (const auto* b = std::get_if<bool>(&value.data)) {
      return *b ? 1 : 0;
    }
    fail(fmt::format("{} must be an integer, not '{}'", what, type_name(value)));
    return std::nullopt;
  }

  // Python's index normalisation: -1 is the last of `length` items.
  std::optional<std::size_t> normalise_index(std::int64_t index, std::size_t length,
                                             std::string_view what) {
    const auto signed_length = static_cast<std::int64_t>(length);
    const std::int64_t adjusted = index < 0 ? index + signed_length : index;
    if (adjusted < 0 || adjusted >= signed_length) {
      fail(fmt::format("index {} is out of range for {} of length {}", index, what, length));
      return std::nullopt;
    }
    return static_cast<std::size_t>(adjusted);
  }

  static Value shape_value(const std::vector<std::int64_t>& shape) {
    Sequence tuple{SequenceKind::tuple, {}};
    for (const std::int64_t dim : shape) {
      tuple.items.push_back(make_int(dim));
    }
    return Value{std::move(tuple)};
  }

  // Shape of a tensor or of a 0-d tensor element; nullptr otherwise.
  static const std::vector<std::int64_t>* shape_of(const Value& value) {
    static const std::vector<std::int64_t> k_scalar_shape;
    if (const auto* tensor = std::get_if<TensorRef>(&value.data)) {
      return &tensor->facts->shape;
    }
    if (std::holds_alternative<ElementRef>(value.data)) {
      return &k_scalar_shape;
    }
    return nullptr;
  }

  std::optional<Value> eval_chain(const Node& node, Record record) {
    std::optional<Value> result;
    if (node.kind == NodeKind::attribute) {
      result = eval_attribute(node);
    } else if (node.kind == NodeKind::subscript) {
      result = eval_subscript(node, record);
    } else {
      result = eval_method(node, record);
    }
    if (result && rooted_at_name(node)) {
      note_read(text_of(node), *result, record);
    }
    return result;
  }

  std::optional<Value> eval_attribute(const Node& node) {
    if (!contains(k_attributes, node.name)) {
      return fail(fmt::format("unsupported attribute '{}'", node.name));
    }
    const auto object = eval(*node.children[0], Record::none);
    if (!object) {
      return std::nullopt;
    }
    const auto* shape = shape_of(*object);
    if (shape == nullptr) {
      return fail(fmt::format("'{}' object has no attribute '{}'", type_name(*object), node.name));
    }
    if (node.name == "shape") {
      return shape_value(*shape);
    }
    return make_int(static_cast<std::int64_t>(shape->size()));
  }

  std::optional<Value> eval_subscript(const Node& node, Record record) {
    const auto object = eval(*node.children[0], Record::none);
    if (!object) {
      return std::nullopt;
    }
    const auto index_value = eval(*node.children[1], record);
    if (!index_value) {
      return std::nullopt;
    }
    if (const auto* sequence = std::get_if<Sequence>(&object->data)) {
      const auto index = integer_argument(*index_value, "an index");
      if (!index) {
        return std::nullopt;
      }
      const auto position =
          normalise_index(*index, sequence->items.size(),
                          sequence->kind == SequenceKind::tuple ? "a tuple" : "a list");
      if (!position) {
        return std::nullopt;
      }
      return sequence->items[*position];
    }
    if (const auto* tensor = std::get_if<TensorRef>(&object->data)) {
      const auto rank = tensor->facts->shape.size();
      if (rank != 1) {
        return fail(
            fmt::format("indexing tensor '{}' of rank {} is not supported", tensor->name, rank));
      }
      const auto* index = std::get_if<std::int64_t>(&index_value->data);
      if (index == nullptr) {
        return fail(fmt::format("indexing tensor '{}' with a '{}' is not supported", tensor->name,
                                type_name(*index_value)));
      }
      const auto length = tensor->facts->shape[0];
      const auto position =
          normalise_index(*index, static_cast<std::size_t>(std::max<std::int64_t>(length, 0)),
                          fmt::format("tensor '{}'", tensor->name));
      if (!position) {
        return std::nullopt;
      }
      return Value{ElementRef{*tensor, *position}};
    }
    if (std::holds_alternative<ElementRef>(object->data)) {
      return fail("a 0-d tensor cannot be indexed");
    }
    return fail(fmt::format("indexing a '{}' is not supported", type_name(*object)));
  }

  std::optional<Value> eval_call(const Node& node, Record record) {
    const Node& callee = *node.children[0];
    if (callee.kind == NodeKind::attribute) {
      return eval_chain(node, record);
    }
    if (callee.kind != NodeKind::name) {
      return fail("unsupported call");
    }
    if (defined(callee.name)) {
      return fail(fmt::format("'{}' is not callable", callee.name));
    }
    if (!contains(k_builtins, callee.name)) {
      return fail(fmt::format("unsupported function '{}'", callee.name));
    }
    std::vector<Value> arguments;
    bool tensor_argument = false;
    for (std::size_t i = 1; i < node.children.size(); ++i) {
      auto argument =
          eval(*node.children[i], record == Record::none ? Record::none : Record::except_tensors);
      if (!argument) {
        return std::nullopt;
      }
      tensor_argument = tensor_argument || std::holds_alternative<TensorRef>(argument->data);
      arguments.push_back(std::move(*argument));
    }
    auto result = call_builtin(callee.name, arguments);
    if (result && tensor_argument) {
      note_read(text_of(node), *result, record);
    }
    return result;
  }

  std::optional<Value> call_builtin(const std::string& name, const std::vector<Value>& arguments) {
    if (name == "abs" || name == "len") {
      if (arguments.size() != 1) {
        return fail(
            fmt::format("{}() takes exactly one argument ({} given)", name, arguments.size()));
      }
      return name == "abs" ? builtin_abs(arguments[0]) : builtin_len(arguments[0]);
    }
    // min / max
    std::vector<Value> candidates;
    if (arguments.size() == 1) {
      const auto* sequence = std::get_if<Sequence>(&arguments[0].data);
      if (sequence == nullptr) {
        return fail(fmt::format("{}() of a '{}' is not supported", name, type_name(arguments[0])));
      }
      candidates = sequence->items;
    } else {
      candidates = arguments;
    }
    if (candidates.empty()) {
      return fail(fmt::format("{}() arg is an empty sequence", name));
    }
    // Python keeps the first of equal extremes.
    const CompareOp better = name == "min" ? CompareOp::lt : CompareOp::gt;
    std::size_t best = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      const auto improves = order(better, candidates[i], candidates[best]);
      if (!improves) {
        return std::nullopt;
      }
      if (*improves) {
        best = i;
      }
    }
    return candidates[best];
  }

  std::optional<Value> builtin_abs(const Value& argument) {
    const auto value = resolve(argument);
    if (!value) {
      return std::nullopt;
    }
    const auto number = as_number(*value);
    if (!number) {
      return fail(fmt::format("bad operand type for abs(): '{}'", type_name(*value)));
    }
    if (number->is_float) {
      return make_float(std::fabs(number->floating));
    }
    if (number->integer == std::numeric_limits<std::int64_t>::min()) {
      return integer_overflow();
    }
    return make_int(number->integer < 0 ? -number->integer : number->integer);
  }

  std::optional<Value> builtin_len(const Value& argument) {
    if (const auto* sequence = std::get_if<Sequence>(&argument.data)) {
      return make_int(static_cast<std::int64_t>(sequence->items.size()));
    }
    if (const auto* text = std::get_if<std::string>(&argument.data)) {
      // Python counts code points.
      const auto count = std::count_if(text->begin(), text->end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
      });
      return make_int(static_cast<std::int64_t>(count));
    }
    if (const auto* tensor = std::get_if<TensorRef>(&argument.data)) {
      if (tensor->facts->shape.empty()) {
        return fail(fmt::format("len() of 0-d tensor '{}'", tensor->name));
      }
      return make_int(tensor->facts->shape[0]);
    }
    if (std::holds_alternative<ElementRef>(argument.data)) {
      return fail("len() of a 0-d tensor");
    }
    return fail(fmt::format("object of type '{}' has no len()", type_name(argument)));
  }

  std::optional<Value> eval_method(const Node& node, Record record) {
    const Node& attribute = *node.children[0];
    const std::string& method = attribute.name;
    if (!contains(k_methods, method)) {
      return fail(fmt::format("unsupported method '{}'", method));
    }
    const auto object = eval(*attribute.children[0], Record::none);
    if (!object) {
      return std::nullopt;
    }
    std::vector<Value> arguments;
    for (std::size_t i = 1; i < node.children.size(); ++i) {
      auto argument = eval(*node.children[i], record);
      if (!argument) {
        return std::nullopt;
      }
      arguments.push_back(std::move(*argument));
    }
    const auto* shape = shape_of(*object);
    if (shape == nullptr) {
      return fail(fmt::format("'{}' object has no attribute '{}'", type_name(*object), method));
    }
    const std::size_t max_arguments = method == "size" ? 1 : 0;
    if (arguments.size() > max_arguments) {
      return fail(fmt::format("{}() takes {} given {}", method,
                              max_arguments == 0 ? "no arguments," : "at most one argument,",
                              arguments.size()));
    }
    if (method == "dim") {
      return make_int(static_cast<std::int64_t>(shape->size()));
    }
    if (method == "size") {
      if (arguments.empty()) {
        return shape_value(*shape);
      }
      const auto dim = integer_argument(arguments[0], "the dimension");
      if (!dim) {
        return std::nullopt;
      }
      const auto position = normalise_index(*dim, shape->size(), "the dimensions");
      if (!position) {
        return std::nullopt;
      }
      return make_int((*shape)[*position]);
    }
    const auto numel = checked_numel(*shape);
    if (method == "numel") {
      if (!numel) {
        return fail("the number of elements does not fit in 64 bits");
      }
      return make_int(*numel);
    }
    // item()
    if (const auto* element = std::get_if<ElementRef>(&object->data)) {
      return scalar_of(element->tensor, element->index);
    }
    const auto& tensor = std::get<TensorRef>(object->data);
    if (!numel || *numel != 1) {
      return fail(fmt::format(
          "item() of tensor '{}' with {} elements: only one element can become a Python scalar",
          tensor.name, numel ? fmt::format("{}", *numel) : std::string("too many")));
    }
    return scalar_of(tensor, 0);
  }

  std::string_view m_source;
  const ConstraintEnvironment& m_environment;
  std::string m_error;
  std::vector<std::string> m_reads; // "name=value", in the order first read
};

ConstraintResult not_evaluable(std::string detail) {
  return ConstraintResult{ConstraintOutcome::not_evaluable, std::move(detail)};
}

ConstraintResult evaluate(std::string_view expression, const ConstraintEnvironment& environment) {
  if (expression.size() > k_constraint_max_length) {
    return not_evaluable(
        fmt::format("expression longer than {} characters", k_constraint_max_length));
  }
  std::vector<Token> tokens;
  Tokenizer tokenizer(expression);
  if (!tokenizer.run(tokens)) {
    return not_evaluable(tokenizer.error());
  }
  Parser parser(expression, tokens);
  const NodePtr root = parser.parse();
  if (!root) {
    return not_evaluable(parser.error());
  }
  if (auto unsupported = find_unsupported(*root)) {
    return not_evaluable(std::move(*unsupported));
  }
  Evaluator evaluator(expression, environment);
  const auto value = evaluator.eval(*root, Record::all);
  if (!value) {
    return not_evaluable(evaluator.error());
  }
  const auto truth = evaluator.truthy(*value);
  if (!truth) {
    return not_evaluable(evaluator.error());
  }
  if (*truth) {
    return ConstraintResult{ConstraintOutcome::satisfied, {}};
  }
  const std::size_t first = expression.find_first_not_of(" \t\r\n\f");
  const std::size_t last = expression.find_last_not_of(" \t\r\n\f");
  std::string detail = cut(std::string(expression.substr(first, last - first + 1)));
  if (std::holds_alternative<bool>(value->data)) {
    detail += " is false";
  } else {
    detail += " is falsy (" + cut(repr(*value)) + ")";
  }
  for (std::size_t i = 0; i < evaluator.reads().size(); ++i) {
    detail += (i == 0 ? " with " : ", ") + evaluator.reads()[i];
  }
  return ConstraintResult{ConstraintOutcome::violated, std::move(detail)};
}

std::optional<std::int64_t> integer_value(std::string_view expression,
                                          const ConstraintEnvironment& environment) {
  if (expression.size() > k_constraint_max_length) {
    return std::nullopt;
  }
  std::vector<Token> tokens;
  Tokenizer tokenizer(expression);
  if (!tokenizer.run(tokens)) {
    return std::nullopt;
  }
  Parser parser(expression, tokens);
  const NodePtr root = parser.parse();
  if (!root || find_unsupported(*root)) {
    return std::nullopt;
  }
  Evaluator evaluator(expression, environment);
  const auto value = evaluator.eval(*root, Record::all);
  if (!value || !std::holds_alternative<std::int64_t>(value->data)) {
    return std::nullopt;
  }
  return std::get<std::int64_t>(value->data);
}

} // namespace

std::optional<std::int64_t> evaluate_integer(std::string_view expression,
                                             const ConstraintEnvironment& environment) {
  try {
    return integer_value(expression, environment);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string_view to_string(ConstraintOutcome outcome) {
  switch (outcome) {
  case ConstraintOutcome::satisfied:
    return "satisfied";
  case ConstraintOutcome::violated:
    return "violated";
  case ConstraintOutcome::not_evaluable:
    return "not evaluable";
  }
  return "not evaluable";
}

ConstraintResult evaluate_constraint(std::string_view expression,
                                     const ConstraintEnvironment& environment) {
  try {
    return evaluate(expression, environment);
  } catch (const std::exception& error) {
    // Only the standard library can throw here (std::bad_alloc and the like); the evaluator
    // promises a result for every input.
    return not_evaluable(fmt::format("evaluation failed: {}", error.what()));
  }
}

} // namespace fib
