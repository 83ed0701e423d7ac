// Differential test of fib's JSON reader (parse_json) against Python's json.loads, run in the test
// binary's embedded interpreter.
//
// Inputs: every *.json of the corpus (when present), small hand-written documents, documents
// nested around the depth bound, and seeded, deterministic byte mutations of all of them (bit
// flips, byte and token insertions, deletions, truncations, duplicated slices). For each input:
//   - fib and Python must agree on accept vs reject, except for the documented differences in
//     `classify_disagreement` below;
//   - when both accept, the values must be equal: Python's value and fib's value (converted to
//     Python objects) are serialised by json.dumps(allow_nan=True) *without* sort_keys, so key
//     order counts too, and floats compare by their repr (exact, -0.0 and NaN included);
//   - fib must report one `json.duplicate-key` warning per repeated key, as many as Python's
//     object_pairs_hook sees, and nothing else.
// Python is given the bytes decoded as strict UTF-8 (fib reads UTF-8 only; json.loads(bytes)
// would guess UTF-16/32 from NUL bytes and strip a UTF-8 BOM).

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace pyb = pybind11;

namespace fib {
namespace {

// The Python side: verdict(data) -> (accepted, value or message, duplicate keys, error type),
// plus the helpers used to compare values and to recognise the documented differences.
constexpr const char* k_python_helpers = R"PY(
import json, math

def verdict(data):
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        return (False, 'not UTF-8: %s' % e, 0, 'UnicodeDecodeError')
    try:
        value = json.loads(text)
    except RecursionError as e:
        return (False, 'RecursionError: %s' % e, 0, 'RecursionError')
    except ValueError as e:
        return (False, '%s: %s' % (type(e).__name__, e), 0, type(e).__name__)
    repeated = [0]
    def count_repeats(pairs):
        seen = {}
        for key, item in pairs:
            if key in seen:
                repeated[0] += 1
            seen[key] = item
        return seen
    json.loads(text, object_pairs_hook=count_repeats)
    return (True, value, repeated[0], '')

_I64_MIN = -2 ** 63
_U64_MAX = 2 ** 64 - 1

def fold_big_ints(value):
    # fib keeps integers beyond 64 bits as the nearest double (documented); Python keeps them exact.
    if isinstance(value, bool) or not isinstance(value, (int, list, dict)):
        return value
    if isinstance(value, int):
        if _I64_MIN <= value <= _U64_MAX:
            return value
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, list):
        return [fold_big_ints(item) for item in value]
    return {key: fold_big_ints(item) for key, item in value.items()}

def canonical(value):
    return json.dumps(value, allow_nan=True, ensure_ascii=True)

def depth(value):
    # Depth of the deepest value, the root being 0 (iterative: values may nest ~1000 deep).
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
        elif isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
    return deepest

def has_surrogate(value):
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in item):
                return True
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return False
)PY";

struct Input {
  std::string name;            // where it comes from, and the mutations applied
  std::string text;            // the bytes handed to both parsers
  std::vector<std::size_t> at; // positions of the mutations (for excerpts)
};

// --- Inputs ---

std::vector<Input> hand_written_documents() {
  const std::vector<std::string> texts = {
      "{}",
      "[]",
      "0",
      "-0",
      "-0.0",
      "0.0",
      "1",
      "-1",
      "1.5",
      "1e5",
      "1E5",
      "1e+5",
      "1e-5",
      "1.0e400",
      "1e400",
      "-1e400",
      "1e-400",
      "5e-324",
      "2.4703282292062328e-324",
      "1.7976931348623157e308",
      "1.7976931348623159e308",
      "0.1",
      "123456789.123456789e-3",
      "9223372036854775807",
      "9223372036854775808",
      "-9223372036854775808",
      "-9223372036854775809",
      "18446744073709551615",
      "18446744073709551616",
      "123456789012345678901234567890",
      "-123456789012345678901234567890",
      std::string(400, '9'),
      "NaN",
      "Infinity",
      "-Infinity",
      "-NaN",
      "+1",
      "01",
      "-01",
      "1.",
      ".5",
      "1e",
      "1e+",
      "-",
      "0x10",
      "nan",
      "infinity",
      "true",
      "false",
      "null",
      "tru",
      "nul",
      "True",
      "None",
      R"("")",
      R"("a")",
      R"("\"\\\/\b\f\n\r\t")",
      R"("\u0041\u00e9")",
      R"("\u20AC\uD834\uDD1E")",
      R"("\u0000")",
      R"("\ud800")",
      R"("\udc00")",
      R"("\ud800\u0041")",
      R"("\ud800\udc00")",
      R"("\uDBFF\uDFFF")",
      R"("\u12")",
      R"("\x41")",
      R"("\U0041")",
      R"("\a")",
      "\"\t\"",
      "\"\x01\"",
      "\"\x1f\"",
      "\"\x7f\"",
      "\"\n\"",
      "\"\xc3\xa9\"",
      "\"\xe2\x82\xac\"",
      "\"\xf0\x9d\x84\x9e\"",
      "\"\xff\"",
      "\"\xc0\x80\"",
      "\"\xc3\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xe2\x82\"",
      "\"\x80\"",
      "\xef\xbb\xbf{}",
      "{}\xef\xbb\xbf",
      " \t\r\n{} \t\r\n",
      "\x0b{}",
      "\x0c[]",
      "\xc2\xa0[]",
      std::string("{}\0", 3),
      std::string("[\"\0\"]", 5),
      "[1,]",
      "[1,,2]",
      "[,1]",
      R"({"a":1,})",
      R"({,"a":1})",
      R"({"a" 1})",
      R"({"a":})",
      R"({a:1})",
      R"({'a':1})",
      R"({"a":1 "b":2})",
      "[1 2]",
      "[1] [2]",
      "{} x",
      "// c\n{}",
      "/* c */ {}",
      "",
      " ",
      "[",
      "]",
      "{",
      "}",
      "\"",
      "[\"a\"",
      R"({"a":[1,2)",
      R"({"a": 1, "a": 2})",
      R"({"a": 1, "b": 2, "a": 3, "a": {"a": 4, "a": 5}})",
      R"({"z": 1, "a": 2, "m": 3})",
      R"({"": 0, " ": 1})",
      R"({"\u0000": 1})",
      R"({"a": NaN, "b": Infinity, "c": -Infinity})",
      R"([NaN, -0, -0.0, 1e400, -1e400])",
      R"({"shape": ["M", "N"], "dtype": "float16", "value": 16})",
      R"({"nested": {"deeper": {"deepest": [[[[]]]]}}})",
      "{\"a\":\n  [1,\n   2],\r\n \"b\":\t\"x\"}",
      R"({"name": "gemm", "tags": ["a:b", "fused"], "axes": {"M": {"type": "var"}}})",
      "[" + std::string(5000, '1') + "]", // more digits than Python converts by default
  };
  std::vector<Input> out;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    out.push_back({fmt::format("hand-written #{}", i), texts[i], {}});
  }
  return out;
}

// Arrays and objects nested around k_max_json_depth, and far beyond it.
std::vector<Input> nested_documents() {
  std::vector<Input> out;
  const std::size_t bound = k_max_json_depth;
  for (const std::size_t levels : {bound - 1, bound, bound + 1, bound + 2, bound + 50,
                                   std::size_t{1200}, std::size_t{100000}}) {
    const std::string open(levels, '[');
    const std::string close(levels, ']');
    out.push_back({fmt::format("{} nested empty arrays", levels), open + close, {}});
    out.push_back({fmt::format("{} nested arrays around 1", levels), open + "1" + close, {}});
    std::string objects;
    for (std::size_t i = 0; i < levels && i < 2000; ++i) {
      objects += "{\"k\":";
    }
    objects += "0" + std::string(std::min<std::size_t>(levels, 2000), '}');
    out.push_back(
        {fmt::format("{} nested objects", std::min<std::size_t>(levels, 2000)), objects, {}});
  }
  return out;
}

std::vector<Input> corpus_documents(const std::filesystem::path& corpus) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(corpus)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Input> out;
  for (const auto& file : files) {
    out.push_back({"corpus " + file.lexically_relative(corpus).generic_string(),
                   testing::read_file(file),
                   {}});
  }
  return out;
}

// Byte sequences worth inserting: tokens the reader treats specially, and bytes that break it.
const std::vector<std::string>& interesting_tokens() {
  static const std::vector<std::string> tokens = {"NaN",
                                                  "Infinity",
                                                  "-Infinity",
                                                  "1e400",
                                                  "-0",
                                                  "-0.0",
                                                  "18446744073709551616",
                                                  "123456789012345678901234567890",
                                                  "\\ud800",
                                                  "\\udc00",
                                                  "\\ud800\\udc00",
                                                  "\\u0000",
                                                  "\\u00e9",
                                                  "\\",
                                                  "\\x",
                                                  "\"",
                                                  ",",
                                                  ",]",
                                                  ",}",
                                                  "]",
                                                  "}",
                                                  "[",
                                                  "{",
                                                  ":",
                                                  "\"k\": 1,",
                                                  "\xef\xbb\xbf",
                                                  "\xff",
                                                  "\xc0\x80",
                                                  "\xed\xa0\x80",
                                                  "\xf4\x90\x80\x80",
                                                  "\xe2\x82",
                                                  "\x01",
                                                  "\x1f",
                                                  "\x7f",
                                                  "\t",
                                                  "\r\n",
                                                  "\x0b",
                                                  "\xc2\xa0",
                                                  " ",
                                                  "\n",
                                                  std::string("\0", 1),
                                                  "01",
                                                  "1.",
                                                  "e",
                                                  "E+",
                                                  "true",
                                                  "null",
                                                  "/",
                                                  "//",
                                                  "/*"};
  return tokens;
}

// One seeded mutation of `input`. Only the engine's raw output is used (never a distribution),
// so the inputs are the same on every platform.
void mutate(Input& input, std::mt19937_64& engine) {
  std::string& text = input.text;
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : engine() % n; };
  const std::size_t pos = pick(text.size() + 1);
  const auto& tokens = interesting_tokens();
  switch (engine() % 8) {
  case 0: // flip one bit
    if (!text.empty()) {
      const std::size_t at = std::min(pos, text.size() - 1);
      text[at] = static_cast<char>(text[at] ^ (1u << pick(8)));
      input.name += fmt::format(", bit flip at {}", at);
    }
    break;
  case 1: { // replace a byte with an interesting one
    const std::string& token = tokens[pick(tokens.size())];
    if (!text.empty()) {
      const std::size_t at = std::min(pos, text.size() - 1);
      text.replace(at, 1, token);
      input.name += fmt::format(", byte at {} replaced", at);
    }
    break;
  }
  case 2: // delete a few bytes
    text.erase(std::min(pos, text.size()), 1 + pick(3));
    input.name += fmt::format(", bytes deleted at {}", pos);
    break;
  case 3: // truncate
    text.resize(pos);
    input.name += fmt::format(", truncated to {}", pos);
    break;
  case 4: { // duplicate a slice (repeats keys, members, brackets)
    const std::size_t from = pick(text.size() + 1);
    const std::size_t length = std::min(pick(64) + 1, text.size() - from);
    text.insert(pos, text.substr(from, length));
    input.name += fmt::format(", {} bytes from {} copied to {}", length, from, pos);
    break;
  }
  case 5: { // insert a token right after a quote: inside a string, where escapes count
    const std::size_t quote = text.find('"', pos);
    const std::size_t at = quote == std::string::npos ? pos : quote + 1;
    text.insert(at, tokens[pick(tokens.size())]);
    input.name += fmt::format(", token inserted in a string at {}", at);
    input.at.push_back(at);
    return;
  }
  default: // insert a token anywhere
    text.insert(pos, tokens[pick(tokens.size())]);
    input.name += fmt::format(", token inserted at {}", pos);
    break;
  }
  input.at.push_back(pos);
}

std::vector<Input> mutations_of(const std::vector<Input>& seeds, std::size_t per_seed,
                                std::uint64_t seed) {
  std::vector<Input> out;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    std::mt19937_64 engine(seed + i);
    for (std::size_t m = 0; m < per_seed; ++m) {
      Input mutant = seeds[i];
      mutant.name += fmt::format(" / mutant {}", m);
      const std::size_t rounds = 1 + engine() % 3;
      for (std::size_t r = 0; r < rounds; ++r) {
        mutate(mutant, engine);
      }
      out.push_back(std::move(mutant));
    }
  }
  return out;
}

// --- Comparison ---

// fib's value as Python objects (object members in fib's order).
pyb::object to_python(const Json& value) {
  switch (value.type()) {
  case Json::value_t::null:
    return pyb::none();
  case Json::value_t::boolean:
    return pyb::bool_(value.get<bool>());
  case Json::value_t::number_integer:
    return pyb::int_(value.get<std::int64_t>());
  case Json::value_t::number_unsigned:
    return pyb::int_(value.get<std::uint64_t>());
  case Json::value_t::number_float:
    return pyb::float_(value.get<double>());
  case Json::value_t::string: {
    const auto& text = value.get_ref<const std::string&>();
    return pyb::str(text.data(), text.size()); // throws on invalid UTF-8: a finding
  }
  case Json::value_t::array: {
    pyb::list list;
    for (const auto& item : value) {
      list.append(to_python(item));
    }
    return list;
  }
  case Json::value_t::object: {
    pyb::dict dict;
    for (const auto& [key, item] : value.items()) {
      dict[pyb::str(key.data(), key.size())] = to_python(item);
    }
    return dict;
  }
  default:
    throw std::runtime_error("unexpected nlohmann value type");
  }
}

// `text` with every byte outside printable ASCII escaped, cut around the mutation positions when
// it is long.
std::string escaped(const Input& input) {
  const auto escape = [](std::string_view bytes) {
    std::string out;
    for (const char c : bytes) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte == '\\') {
        out += "\\\\";
      } else if (byte >= 0x20 && byte < 0x7f) {
        out += c;
      } else {
        out += fmt::format("\\x{:02x}", byte);
      }
    }
    return out;
  };
  const std::string_view text = input.text;
  if (text.size() <= 400) {
    return escape(text);
  }
  std::string out = fmt::format("({} bytes)", text.size());
  for (const std::size_t at : input.at) {
    const std::size_t from = at > 100 ? at - 100 : 0;
    out += fmt::format(" ...[{}]{}...", from, escape(text.substr(from, 200)));
  }
  return out;
}

struct Tally {
  std::size_t compared = 0;
  std::size_t both_accepted = 0;
  std::size_t both_rejected = 0;
  std::size_t deeper_than_bound = 0;
  std::size_t lone_surrogate = 0;
  std::size_t python_digit_limit = 0;
  std::vector<std::string> mismatches;
};

class Differential {
public:
  Differential() {
    pyb::dict scope;
    scope["__builtins__"] = pyb::module_::import("builtins");
    pyb::exec(k_python_helpers, scope);
    m_verdict = scope["verdict"];
    m_fold = scope["fold_big_ints"];
    m_canonical = scope["canonical"];
    m_depth = scope["depth"];
    m_has_surrogate = scope["has_surrogate"];
  }

  void compare(const Input& input, Tally& tally) {
    ++tally.compared;
    DiagnosticList sink;
    auto fib = parse_json(input.text, "input.json", sink, 1, LineIndex::skipped);
    const pyb::tuple python = m_verdict(pyb::bytes(input.text.data(), input.text.size()));
    const bool python_accepts = python[0].cast<bool>();
    const auto mismatch = [&](const std::string& what) {
      tally.mismatches.push_back(
          fmt::format("{}: {}\n    input: {}", input.name, what, escaped(input)));
    };
    if (!fib && !python_accepts) {
      ++tally.both_rejected;
      if (fib.error().code != codes::k_json_parse && fib.error().code != codes::k_json_too_deep &&
          fib.error().code != codes::k_json_too_large) {
        mismatch("fib rejected it with code " + fib.error().code);
      }
      return;
    }
    if (fib.has_value() != python_accepts) {
      if (!classify_disagreement(fib, python, tally)) {
        mismatch(fib ? "fib accepts, Python rejects (" + python[1].cast<std::string>() + ")"
                     : "fib rejects (" + fib.error().code + ": " + fib.error().message +
                           "), Python accepts");
      }
      return;
    }
    ++tally.both_accepted;
    compare_values(*fib, python, sink, mismatch);
  }

private:
  // The documented differences. Each is recognised from the *reason* of both sides, not just
  // from the verdicts, so a difference of another kind still fails.
  bool classify_disagreement(const Expected<JsonDocument>& fib, const pyb::tuple& python,
                             Tally& tally) {
    if (!fib) {
      const pyb::object value = python[1];
      // 1. The depth bound: fib rejects values nested deeper than k_max_json_depth (200, as the
      //    old tool's parser does) so that hostile input cannot overflow the stack; Python's
      //    limit is its recursion limit (about 1000).
      if (fib.error().code == codes::k_json_too_deep &&
          m_depth(value).cast<std::size_t>() > k_max_json_depth) {
        ++tally.deeper_than_bound;
        return true;
      }
      // 2. Lone surrogates: Python decodes "\ud800" (and an unpaired "\udc00") into a str
      //    holding a surrogate, which is not Unicode text; fib rejects the escape, since its
      //    strings are always valid UTF-8.
      if (fib.error().code == codes::k_json_parse &&
          fib.error().message.find("lone surrogate") != std::string::npos &&
          m_has_surrogate(value).cast<bool>()) {
        ++tally.lone_surrogate;
        return true;
      }
      return false;
    }
    // 3. Python 3.11+ refuses to convert integers of more than 4300 digits
    //    (sys.int_max_str_digits, a denial-of-service guard); fib reads any integer beyond 64
    //    bits as the nearest double, so it accepts them.
    if (python[3].cast<std::string>() == "ValueError" &&
        python[1].cast<std::string>().find("int_max_str_digits") != std::string::npos) {
      ++tally.python_digit_limit;
      return true;
    }
    return false;
  }

  template <typename Mismatch>
  void compare_values(const JsonDocument& fib, const pyb::tuple& python, const DiagnosticList& sink,
                      const Mismatch& mismatch) {
    if (m_depth(python[1]).cast<std::size_t>() > k_max_json_depth) {
      mismatch("fib accepted a value nested deeper than the bound");
    }
    std::size_t repeats = 0;
    for (const auto& d : sink.items()) {
      if (d.code == codes::k_json_duplicate_key) {
        ++repeats;
      } else {
        mismatch("unexpected diagnostic " + d.code + ": " + d.message);
      }
    }
    if (repeats != python[2].cast<std::size_t>()) {
      mismatch(fmt::format("{} duplicate-key warnings, Python saw {} repeated keys", repeats,
                           python[2].cast<std::size_t>()));
    }
    std::string fib_text;
    try {
      fib_text = m_canonical(to_python(fib.root)).cast<std::string>();
    } catch (const std::exception& e) {
      mismatch(std::string("fib's value cannot be converted to Python: ") + e.what());
      return;
    }
    const auto python_text = m_canonical(m_fold(python[1])).cast<std::string>();
    if (fib_text != python_text) {
      mismatch(fmt::format("values differ\n    fib:    {}\n    Python: {}", fib_text.substr(0, 300),
                           python_text.substr(0, 300)));
    }
  }

  pyb::object m_verdict;
  pyb::object m_fold;
  pyb::object m_canonical;
  pyb::object m_depth;
  pyb::object m_has_surrogate;
};

// Runs the comparison over `inputs`, prints the tally, and fails on every mismatch.
Tally run_differential(const std::vector<Input>& inputs, std::string_view label) {
  Differential differential;
  Tally tally;
  for (const auto& input : inputs) {
    differential.compare(input, tally);
  }
  std::cout << fmt::format("[json differential, {}] {} inputs compared: {} accepted by both with "
                           "equal values, {} rejected by both; documented differences: {} deeper "
                           "than {}, {} lone surrogates, {} over Python's digit limit\n",
                           label, tally.compared, tally.both_accepted, tally.both_rejected,
                           tally.deeper_than_bound, k_max_json_depth, tally.lone_surrogate,
                           tally.python_digit_limit);
  constexpr std::size_t k_shown = 40;
  for (std::size_t i = 0; i < tally.mismatches.size() && i < k_shown; ++i) {
    ADD_FAILURE() << tally.mismatches[i];
  }
  EXPECT_TRUE(tally.mismatches.empty())
      << tally.mismatches.size() << " of " << tally.compared << " inputs disagree ("
      << std::min(tally.mismatches.size(), k_shown) << " shown above)";
  return tally;
}

#define FIB_REQUIRE_PYTHON()                                                                       \
  do {                                                                                             \
    auto probe_ = testing::python().check_expression("1");                                         \
    if (!probe_) {                                                                                 \
      GTEST_SKIP() << "embedded Python unavailable: " << probe_.error().message;                   \
    }                                                                                              \
  } while (false)

// Mutants per seed document: short hand-written ones are cheap, corpus files are up to ~300 KB.
constexpr std::size_t k_mutants_per_small_document = 64;
constexpr std::size_t k_mutants_per_corpus_file = 24;

TEST(JsonDifferential, HandWrittenAndNestedDocumentsAndTheirMutantsMatchPython) {
  FIB_REQUIRE_PYTHON();
  std::vector<Input> inputs = hand_written_documents();
  const std::vector<Input> nested = nested_documents();
  inputs.insert(inputs.end(), nested.begin(), nested.end());
  const std::vector<Input> mutants = mutations_of(inputs, k_mutants_per_small_document, 20240601);
  inputs.insert(inputs.end(), mutants.begin(), mutants.end());
  const Tally tally = run_differential(inputs, "hand-written");
  // Each documented difference is really met (the list is not stale), and both verdicts occur.
  EXPECT_GT(tally.deeper_than_bound, 0u);
  EXPECT_GT(tally.lone_surrogate, 0u);
  EXPECT_GT(tally.python_digit_limit, 0u);
  EXPECT_GT(tally.both_accepted, 500u);
  EXPECT_GT(tally.both_rejected, 500u);
}

TEST(JsonDifferential, CorpusDocumentsAndTheirMutantsMatchPython) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty()) {
    GTEST_SKIP() << "corpus not present";
  }
  FIB_REQUIRE_PYTHON();
  std::vector<Input> inputs = corpus_documents(corpus);
  ASSERT_FALSE(inputs.empty());
  const std::size_t originals = inputs.size();
  const std::vector<Input> mutants = mutations_of(inputs, k_mutants_per_corpus_file, 20240602);
  inputs.insert(inputs.end(), mutants.begin(), mutants.end());
  const Tally tally = run_differential(inputs, "corpus");
  EXPECT_GE(tally.both_accepted, originals);
  EXPECT_GT(tally.both_rejected, 0u);
}

} // namespace
} // namespace fib
