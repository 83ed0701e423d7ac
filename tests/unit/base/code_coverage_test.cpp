// Every code of the codes table is produced by some test.
//
// A code counts as exercised when
//   - a golden CLI expectation (tests/cli/cases/*/expected.*) shows it as a rendered diagnostic:
//     `error[CODE]`, `warning[CODE]` or `note[CODE]` (text), `"code": "CODE"` (JSON) or
//     `title=CODE::` (GitHub annotations); a code merely named in help text does not count; or
//   - a unit test under tests/unit names it, as `codes::k_...` or as a string literal that is
//     exactly the code, inside the body of a TEST/TEST_F/TEST_P that asserts something
//     (EXPECT_*/ASSERT_*). Comments are removed first, so a comment cannot satisfy it.
//
// Written as a GoogleTest rather than a script: all_codes() is the table itself, so nothing has to
// re-read the table from source text; only the constant names come from codes.hpp, and every code
// must have one.

#include <fib/base/codes.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fib {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

struct StringLiteral {
  std::size_t offset; // where the literal starts in the source
  std::string content;
};

// A C++ source with comments and literals blanked out (same length, newlines kept), so that
// structure can be found without being fooled by braces in strings, plus the literals' contents.
struct LexedSource {
  std::string code;
  std::vector<StringLiteral> literals;
};

// Blanks [from, to) of `code`, keeping newlines.
void blank(std::string& code, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to && i < code.size(); ++i) {
    if (code[i] != '\n') {
      code[i] = ' ';
    }
  }
}

// End of the quoted literal opened at `open` (the quote), honouring backslash escapes.
std::size_t quoted_end(std::string_view text, std::size_t open, char quote) {
  std::size_t i = open + 1;
  while (i < text.size() && text[i] != quote && text[i] != '\n') {
    i += text[i] == '\\' ? 2 : 1;
  }
  return std::min(i + 1, text.size());
}

LexedSource lex(std::string_view text) {
  LexedSource out{std::string(text), {}};
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const char previous = i > 0 ? text[i - 1] : ' ';
    if (text.substr(i, 2) == "//") {
      const std::size_t end = std::min(text.find('\n', i), text.size());
      blank(out.code, i, end);
      i = end;
    } else if (text.substr(i, 2) == "/*") {
      const std::size_t close = text.find("*/", i + 2);
      const std::size_t end = close == std::string_view::npos ? text.size() : close + 2;
      blank(out.code, i, end);
      i = end;
    } else if (c == 'R' && i + 1 < text.size() && text[i + 1] == '"' &&
               (!is_identifier_char(previous) || previous == '8' || previous == 'u' ||
                previous == 'U' || previous == 'L')) {
      // R"delim( ... )delim"
      const std::size_t paren = text.find('(', i + 2);
      if (paren == std::string_view::npos) {
        break;
      }
      std::string terminator(1, ')');
      terminator.append(text.substr(i + 2, paren - i - 2));
      terminator += '"';
      const std::size_t close = text.find(terminator, paren + 1);
      const std::size_t end =
          close == std::string_view::npos ? text.size() : close + terminator.size();
      out.literals.push_back({i, std::string(text.substr(paren + 1, close - paren - 1))});
      blank(out.code, i, end);
      i = end;
    } else if (c == '"') {
      const std::size_t end = quoted_end(text, i, '"');
      out.literals.push_back({i, std::string(text.substr(i + 1, end - i - 2))});
      blank(out.code, i, end);
      i = end;
    } else if (c == '\'' && !is_identifier_char(previous)) { // not a digit separator
      const std::size_t end = quoted_end(text, i, '\'');
      blank(out.code, i, end);
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

// Index one past the bracket that closes the one at `open` ('(' or '{'), or npos.
std::size_t matching(std::string_view code, std::size_t open) {
  const char opener = code[open];
  const char closer = opener == '(' ? ')' : '}';
  int depth = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    if (code[i] == opener) {
      ++depth;
    } else if (code[i] == closer && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Whether `code` holds the identifier `word` starting at `at` (not part of a longer name).
bool word_at(std::string_view code, std::size_t at, std::string_view word) {
  if (code.substr(at, word.size()) != word) {
    return false;
  }
  const bool starts = at == 0 || !is_identifier_char(code[at - 1]);
  const std::size_t end = at + word.size();
  return starts && (end >= code.size() || !is_identifier_char(code[end]));
}

struct TestBody {
  std::size_t begin; // the '{'
  std::size_t end;   // one past the '}'
};

// Bodies of TEST, TEST_F and TEST_P that contain an EXPECT_* or ASSERT_* macro call.
std::vector<TestBody> asserting_test_bodies(std::string_view code) {
  std::vector<TestBody> out;
  for (std::size_t at = code.find("TEST"); at != std::string_view::npos;
       at = code.find("TEST", at + 4)) {
    std::size_t name_end = at + 4;
    if (code.substr(name_end, 2) == "_F" || code.substr(name_end, 2) == "_P") {
      name_end += 2;
    }
    if (!word_at(code, at, code.substr(at, name_end - at))) {
      continue;
    }
    const std::size_t paren = code.find_first_not_of(" \t\n", name_end);
    if (paren == std::string_view::npos || code[paren] != '(') {
      continue;
    }
    const std::size_t after_arguments = matching(code, paren);
    const std::size_t brace = code.find_first_not_of(" \t\n", after_arguments);
    if (after_arguments == std::string_view::npos || brace == std::string_view::npos ||
        code[brace] != '{') {
      continue;
    }
    const std::size_t end = matching(code, brace);
    if (end == std::string_view::npos) {
      continue;
    }
    const std::string_view body = code.substr(brace, end - brace);
    bool asserts = false;
    for (const std::string_view macro : {"EXPECT_", "ASSERT_"}) {
      for (std::size_t m = body.find(macro); m != std::string_view::npos && !asserts;
           m = body.find(macro, m + 1)) {
        std::size_t name = m + macro.size();
        while (name < body.size() &&
               (std::isupper(static_cast<unsigned char>(body[name])) || body[name] == '_')) {
          ++name;
        }
        const std::size_t call = body.find_first_not_of(" \t\n", name);
        asserts = (m == 0 || !is_identifier_char(body[m - 1])) && name > m + macro.size() &&
                  call != std::string_view::npos && body[call] == '(';
      }
    }
    if (asserts) {
      out.push_back({brace, end});
    }
  }
  return out;
}

// Codes a unit-test source exercises: `codes::k_...` names (mapped through `constants`) and
// literals equal to a code, inside asserting test bodies.
std::set<std::string> codes_asserted_in(std::string_view source,
                                        const std::map<std::string, std::string>& constants,
                                        const std::set<std::string>& known_codes) {
  const LexedSource lexed = lex(source);
  std::set<std::string> out;
  for (const TestBody& body : asserting_test_bodies(lexed.code)) {
    const std::string_view code =
        std::string_view(lexed.code).substr(body.begin, body.end - body.begin);
    constexpr std::string_view prefix = "codes::";
    for (std::size_t at = code.find(prefix); at != std::string_view::npos;
         at = code.find(prefix, at + 1)) {
      std::size_t end = at + prefix.size();
      while (end < code.size() && is_identifier_char(code[end])) {
        ++end;
      }
      const std::string name(code.substr(at + prefix.size(), end - at - prefix.size()));
      if (const auto it = constants.find(name); it != constants.end()) {
        out.insert(it->second);
      }
    }
    for (const StringLiteral& literal : lexed.literals) {
      if (literal.offset > body.begin && literal.offset < body.end &&
          known_codes.count(literal.content) != 0) {
        out.insert(literal.content);
      }
    }
  }
  return out;
}

// Codes shown as rendered diagnostics in a golden expectation.
std::set<std::string> codes_rendered_in(std::string_view text) {
  std::set<std::string> out;
  const auto take_until = [&](std::size_t from, std::string_view stop) {
    const std::size_t end = text.find(stop, from);
    if (end != std::string_view::npos && end > from && end - from < 80) {
      out.emplace(text.substr(from, end - from));
    }
  };
  for (const std::string_view severity : {"error[", "warning[", "note["}) {
    for (std::size_t at = text.find(severity); at != std::string_view::npos;
         at = text.find(severity, at + 1)) {
      if (at == 0 || !is_identifier_char(text[at - 1])) {
        take_until(at + severity.size(), "]");
      }
    }
  }
  constexpr std::string_view json_key = "\"code\": \"";
  for (std::size_t at = text.find(json_key); at != std::string_view::npos;
       at = text.find(json_key, at + 1)) {
    take_until(at + json_key.size(), "\"");
  }
  constexpr std::string_view title = "title=";
  for (std::size_t at = text.find(title); at != std::string_view::npos;
       at = text.find(title, at + 1)) {
    take_until(at + title.size(), "::");
  }
  return out;
}

// Constant name -> code, from the `inline constexpr std::string_view k_... = "...";` lines.
std::map<std::string, std::string> code_constants(std::string_view header) {
  std::map<std::string, std::string> out;
  constexpr std::string_view declaration = "std::string_view k_";
  for (std::size_t at = header.find(declaration); at != std::string_view::npos;
       at = header.find(declaration, at + 1)) {
    const std::size_t name_begin = at + declaration.size() - 2;
    std::size_t name_end = name_begin;
    while (name_end < header.size() && is_identifier_char(header[name_end])) {
      ++name_end;
    }
    const std::size_t open = header.find('"', name_end);
    const std::size_t close = header.find('"', open + 1);
    const std::size_t semicolon = header.find(';', name_end);
    if (open == std::string_view::npos || close == std::string_view::npos || semicolon < close) {
      continue;
    }
    out.emplace(std::string(header.substr(name_begin, name_end - name_begin)),
                std::string(header.substr(open + 1, close - open - 1)));
  }
  return out;
}

std::vector<fs::path> files_below(const fs::path& root, const auto& wanted) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && wanted(entry.path())) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CodeCoverage, ScannerCountsOnlyAssertedCodesOutsideComments) {
  const std::map<std::string, std::string> constants = {{"k_a", "x.a"}, {"k_b", "x.b"},
                                                        {"k_c", "x.c"}, {"k_d", "x.d"},
                                                        {"k_e", "x.e"}, {"k_f", "x.f"}};
  const std::set<std::string> known = {"x.a", "x.b", "x.c", "x.d", "x.e", "x.f"};
  const std::string source = R"SRC(
// TEST(Fake, InComment) { EXPECT_EQ(code, codes::k_e); }
TEST(Fake, Asserts) {
  const std::string brace = "}{";
  EXPECT_EQ(f(), codes::k_a); // codes::k_f
  /* "x.f" */ EXPECT_TRUE(has(list, "x.b", R"J({"a": "x.c"})J"));
}
TEST_F(Fixture, NoAssertion) { run(codes::k_d, "x.d"); }
void helper() { EXPECT_EQ(codes::k_e, "x.e"); }
TEST_P(Param, RawLiteral) {
  ASSERT_EQ(R"(x.c)", got);
}
)SRC";
  EXPECT_EQ(codes_asserted_in(source, constants, known),
            (std::set<std::string>{"x.a", "x.b", "x.c"}));
}

TEST(CodeCoverage, GoldenScanCountsOnlyRenderedDiagnostics) {
  const std::string text = "f.json:3: error[x.a] /p: m\nfib: warning[x.b]: m\n"
                           "  \"code\": \"x.c\",\n::error file=f,title=x.d::m\n"
                           "see (x.e) in the help; terror[x.f]\n";
  EXPECT_EQ(codes_rendered_in(text), (std::set<std::string>{"x.a", "x.b", "x.c", "x.d"}));
}

TEST(CodeCoverage, EveryCodeIsProducedBySomeTest) {
  const fs::path root = FIB_SOURCE_DIR;
  const auto constants = code_constants(read_all(root / "include/fib/base/codes.hpp"));
  std::map<std::string, std::string> constant_of;
  for (const auto& [name, code] : constants) {
    constant_of[code] = name;
  }
  std::set<std::string> known;
  for (const CodeInfo& info : all_codes()) {
    known.emplace(info.code);
    EXPECT_TRUE(constant_of.count(std::string(info.code)) != 0)
        << "no codes::k_... constant for '" << info.code << "' in codes.hpp";
  }

  std::set<std::string> exercised;
  const auto unit_sources = files_below(root / "tests/unit", [](const fs::path& p) {
    return p.extension() == ".cpp" && p.filename() != "code_coverage_test.cpp";
  });
  ASSERT_FALSE(unit_sources.empty());
  for (const auto& file : unit_sources) {
    exercised.merge(codes_asserted_in(read_all(file), constants, known));
  }
  const auto golden = files_below(root / "tests/cli/cases", [](const fs::path& p) {
    return p.filename().string().rfind("expected.", 0) == 0 &&
           p.parent_path().parent_path().filename() == "cases";
  });
  ASSERT_FALSE(golden.empty());
  for (const auto& file : golden) {
    exercised.merge(codes_rendered_in(read_all(file)));
  }

  std::string missing;
  std::size_t count = 0;
  for (const std::string& code : known) {
    if (exercised.count(code) == 0) {
      ++count;
      missing += "\n  " + code + "  (codes::" + constant_of[code] + ")";
    }
  }
  EXPECT_EQ(count, 0u)
      << count << " code(s) of the codes table are produced by no test:" << missing
      << "\nA code counts when a golden CLI expectation (tests/cli/cases/*/expected.*) renders it "
         "(error[CODE], \"code\": \"CODE\", title=CODE::), or a TEST body under tests/unit that "
         "asserts (EXPECT_*/ASSERT_*) names codes::k_... or the literal \"CODE\" outside "
         "comments.";
}

} // namespace
} // namespace fib
