#pragma once
// The tokenizer of constraint expressions: Python's lexical rules for one logical line (numbers
// with underscores and 0x/0o/0b prefixes, single- and double-quoted strings, names, keywords and
// every Python operator), so that unsupported constructs can be named rather than misread.
// Private to src/constraint.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fib::constraint_detail {

// --- Interface ---

enum class TokenKind { end, integer, floating, string, name, keyword, op };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text; // name, keyword or operator spelling; decoded contents of a string
  std::int64_t integer = 0;
  double floating = 0.0;
  std::size_t begin = 0; // byte span in the source
  std::size_t end = 0;
};

class Tokenizer {
public:
  explicit Tokenizer(std::string_view source) : m_source(source) {}

  // Fills `tokens` (ending with an `end` token) or returns false with error() set, e.g.
  // "syntax error: unterminated string literal at column 3", "unsupported syntax: triple-quoted
  // string", "integer literal '...' does not fit in 64 bits". More than k_constraint_max_nesting
  // open brackets give "expression too deeply nested".
  bool run(std::vector<Token>& tokens);

  const std::string& error() const { return m_error; }

private:
  bool fail(std::string detail);
  bool lex_number(std::vector<Token>& tokens);
  bool lex_prefixed_integer(std::vector<Token>& tokens, Token token, int base);
  bool lex_decimal(std::vector<Token>& tokens, Token token);
  bool push_integer(std::vector<Token>& tokens, Token token, const std::string& digits, int base);
  bool lex_name(std::vector<Token>& tokens);
  bool lex_string(std::vector<Token>& tokens);
  // Appends the character that `\<escaped>` stands for to `text`; false (with error()) for an
  // escape that is not supported.
  bool decode_escape(char escaped, std::string& text);
  bool lex_operator(std::vector<Token>& tokens, int& bracket_depth);

  std::string_view m_source;
  std::size_t m_pos = 0;
  std::string m_error;
};

} // namespace fib::constraint_detail
