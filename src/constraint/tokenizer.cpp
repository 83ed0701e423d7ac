#include "constraint/tokenizer.hpp"

#include "constraint/value.hpp"

#include <fib/constraint/constraint.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <system_error>
#include <utility>

namespace fib::constraint_detail {

namespace {

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

// Reads digit ('_'? digit)* in `base` starting at `pos`; appends the digits (without
// underscores) to `out`. Returns false on a misplaced underscore.
bool read_digits(std::string_view run, std::size_t& pos, int base, std::string& out) {
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

// The end of the maximal run of characters a number starting at `begin` could be made of; the
// run is then parsed strictly.
std::size_t number_run_end(std::string_view source, std::size_t begin) {
  const bool hexadecimal = source.size() > begin + 1 && source[begin] == '0' &&
                           (source[begin + 1] == 'x' || source[begin + 1] == 'X');
  std::size_t end = begin;
  while (end < source.size()) {
    const char c = source[end];
    const bool exponent_sign = (c == '+' || c == '-') && !hexadecimal &&
                               (source[end - 1] == 'e' || source[end - 1] == 'E');
    if (!is_name_char(c) && c != '.' && !exponent_sign) {
      break;
    }
    ++end;
  }
  return end;
}

} // namespace

bool Tokenizer::run(std::vector<Token>& tokens) {
  int bracket_depth = 0;
  while (m_pos < m_source.size()) {
    const char c = m_source[m_pos];
    bool ok = true;
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
      ok = lex_number(tokens);
    } else if (is_name_start(c)) {
      ok = lex_name(tokens);
    } else if (c == '\'' || c == '"') {
      ok = lex_string(tokens);
    } else {
      ok = lex_operator(tokens, bracket_depth);
    }
    if (!ok) {
      return false;
    }
  }
  tokens.push_back(Token{TokenKind::end, "", 0, 0.0, m_source.size(), m_source.size()});
  return true;
}

bool Tokenizer::fail(std::string detail) {
  m_error = std::move(detail);
  return false;
}

bool Tokenizer::lex_operator(std::vector<Token>& tokens, int& bracket_depth) {
  const auto op =
      std::find_if(std::begin(k_operators), std::end(k_operators),
                   [&](std::string_view o) { return m_source.substr(m_pos, o.size()) == o; });
  if (op == std::end(k_operators)) {
    return fail(fmt::format("syntax error: unexpected character {} at column {}",
                            describe_character(m_source[m_pos]), m_pos + 1));
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
  return true;
}

bool Tokenizer::lex_number(std::vector<Token>& tokens) {
  const std::size_t begin = m_pos;
  const std::size_t end = number_run_end(m_source, begin);
  m_pos = end;
  const std::string_view run = m_source.substr(begin, end - begin);
  Token token{TokenKind::integer, std::string(run), 0, 0.0, begin, end};
  if (run.size() > 1 && run[0] == '0') {
    const char prefix = static_cast<char>(run[1] | 0x20);
    const int base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 10;
    if (base != 10) {
      return lex_prefixed_integer(tokens, std::move(token), base);
    }
  }
  return lex_decimal(tokens, std::move(token));
}

// 0x…, 0o… or 0b…: an optional underscore after the prefix, then digits of `base`.
bool Tokenizer::lex_prefixed_integer(std::vector<Token>& tokens, Token token, int base) {
  const std::string_view run = token.text;
  std::size_t pos = 2;
  if (pos < run.size() && run[pos] == '_') {
    ++pos;
  }
  std::string digits;
  if (!read_digits(run, pos, base, digits) || digits.empty() || pos != run.size()) {
    return fail(fmt::format("syntax error: invalid number literal '{}'", cut(std::string(run))));
  }
  return push_integer(tokens, std::move(token), digits, base);
}

// A decimal integer or a float: digits ['.' digits] [('e' | 'E') ['+' | '-'] digits].
bool Tokenizer::lex_decimal(std::vector<Token>& tokens, Token token) {
  const std::string_view run = token.text;
  const auto invalid = [&] {
    return fail(fmt::format("syntax error: invalid number literal '{}'", cut(std::string(run))));
  };
  std::size_t pos = 0;
  std::string int_digits;
  if (!read_digits(run, pos, 10, int_digits)) {
    return invalid();
  }
  std::string text = int_digits;
  bool is_float = false;
  bool negative_exponent = false;
  if (pos < run.size() && run[pos] == '.') {
    is_float = true;
    text += '.';
    ++pos;
    if ((pos < run.size() && run[pos] == '_') || !read_digits(run, pos, 10, text)) {
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
    return push_integer(tokens, std::move(token), int_digits, 10);
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

bool Tokenizer::push_integer(std::vector<Token>& tokens, Token token, const std::string& digits,
                             int base) {
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

bool Tokenizer::lex_name(std::vector<Token>& tokens) {
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
  tokens.push_back(
      Token{keyword ? TokenKind::keyword : TokenKind::name, std::move(name), 0, 0.0, begin, m_pos});
  return true;
}

bool Tokenizer::lex_string(std::vector<Token>& tokens) {
  const std::size_t begin = m_pos;
  const char quote = m_source[m_pos];
  if (m_source.substr(m_pos, 3) == std::string(3, quote)) {
    return fail("unsupported syntax: triple-quoted string");
  }
  const auto unterminated = [&] {
    return fail(fmt::format("syntax error: unterminated string literal at column {}", begin + 1));
  };
  ++m_pos;
  std::string text;
  while (true) {
    if (m_pos >= m_source.size() || m_source[m_pos] == '\n') {
      return unterminated();
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
      return unterminated();
    }
    const char escaped = m_source[m_pos + 1];
    m_pos += 2;
    if (!decode_escape(escaped, text)) {
      return false;
    }
  }
  tokens.push_back(Token{TokenKind::string, std::move(text), 0, 0.0, begin, m_pos});
  return true;
}

bool Tokenizer::decode_escape(char escaped, std::string& text) {
  switch (escaped) {
  case '\\':
  case '\'':
  case '"':
    text += escaped;
    return true;
  case 'n':
    text += '\n';
    return true;
  case 't':
    text += '\t';
    return true;
  case 'r':
    text += '\r';
    return true;
  case '\n':
    return true; // backslash-newline continues the literal
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
    return true;
  }
}

} // namespace fib::constraint_detail
