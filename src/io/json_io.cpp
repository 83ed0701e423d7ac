#include "fib/io/json_io.hpp"

#include "io/byte_scan.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <system_error>
#include <utility>

namespace fib {
namespace {

// Recursive-descent parser over UTF-8 text. Depth is bounded by k_max_json_depth, so recursion
// cannot overflow the stack on hostile input.
class Parser {
public:
  Parser(std::string_view text, JsonDocument& doc, DiagnosticSink& sink, int first_line,
         LineIndex index, const std::vector<std::string_view>* kept_members = nullptr)
      : m_text(text), m_doc(doc), m_sink(sink), m_line(first_line), m_index(index),
        m_kept_members(kept_members) {}

  bool parse_document() {
    skip_whitespace();
    if (!parse_value(m_doc.root, "", 0)) {
      return false;
    }
    skip_whitespace();
    if (m_pos != m_text.size()) {
      return fail("", "trailing characters after the JSON value");
    }
    return true;
  }

  Diagnostic take_error() { return std::move(m_error); }

private:
  bool fail(const std::string& pointer, std::string_view what) {
    return fail_with(codes::k_json_parse, pointer, what);
  }

  bool fail_with(std::string_view code, const std::string& pointer, std::string_view what) {
    m_error = make_diagnostic(
        code, fmt::format("invalid JSON: {} at line {} column {}", what, m_line, column()));
    m_error.file = m_doc.file;
    m_error.pointer = reported_pointer(pointer);
    m_error.line = m_line;
    return false;
  }

  std::size_t column() const { return m_pos - m_line_start + 1; }

  // The pointer of a child: past k_max_recorded_pointer it is cut there and stops growing, so a
  // deep document with long keys costs memory linear in its size (each level holds at most that
  // many bytes of pointer). A cut pointer is never recorded and is reported as its deepest
  // ancestor within the cap (reported_pointer).
  template <class Segment>
  static std::string child_pointer(const std::string& parent, const Segment& segment) {
    if (parent.size() > k_max_recorded_pointer) {
      return parent;
    }
    std::string child = pointer_append(parent, segment);
    if (child.size() > k_max_recorded_pointer) {
      child.resize(k_max_recorded_pointer + 1);
    }
    return child;
  }

  // `pointer`, or for a cut one the longest whole ancestor it starts with.
  static std::string reported_pointer(const std::string& pointer) {
    if (pointer.size() <= k_max_recorded_pointer) {
      return pointer;
    }
    const auto slash = pointer.rfind('/', k_max_recorded_pointer);
    return slash == std::string::npos ? std::string() : pointer.substr(0, slash);
  }

  // Assigned, not inserted: for a repeated key the last value wins, and so do its lines.
  void record(const std::string& pointer, int line) {
    if (m_index == LineIndex::recorded && pointer.size() <= k_max_recorded_pointer) {
      m_doc.lines[pointer] = LineRecord{line, m_order++};
    }
  }

  void skip_whitespace() {
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos];
      if (c == '\n') {
        ++m_line;
        ++m_pos;
        m_line_start = m_pos;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++m_pos;
      } else {
        break;
      }
    }
  }

  bool consume_literal(std::string_view literal) {
    if (m_text.substr(m_pos, literal.size()) == literal) {
      m_pos += literal.size();
      return true;
    }
    return false;
  }

  // Counts one more object or array; past k_max_json_containers the document is refused.
  bool count_container(const std::string& pointer) {
    if (++m_containers <= k_max_json_containers) {
      return true;
    }
    return fail_with(
        codes::k_json_too_large, pointer,
        fmt::format("more than {} objects and arrays in one document", k_max_json_containers));
  }

  // An array item is recorded only when it is a container among the first items.
  enum class ArrayItem { none, recorded, unrecorded };

  bool parse_value(Json& out, const std::string& pointer, std::size_t depth,
                   ArrayItem item = ArrayItem::none) {
    if (depth > k_max_json_depth) {
      return fail_with(codes::k_json_too_deep, pointer,
                       fmt::format("nesting deeper than {} levels", k_max_json_depth));
    }
    const bool container = m_pos < m_text.size() && (m_text[m_pos] == '{' || m_text[m_pos] == '[');
    if (item == ArrayItem::none || (item == ArrayItem::recorded && container)) {
      record(pointer, m_line);
    }
    if (m_pos >= m_text.size()) {
      return fail(pointer, "unexpected end of input, expected a value");
    }
    switch (m_text[m_pos]) {
    case '{':
      return parse_object(out, pointer, depth);
    case '[':
      return parse_array(out, pointer, depth);
    case '"': {
      if (m_dropping) {
        m_dropped_text.clear(); // checked, then forgotten
        return parse_string(m_dropped_text, pointer);
      }
      std::string value;
      if (!parse_string(value, pointer)) {
        return false;
      }
      out = std::move(value);
      return true;
    }
    case 't':
      if (consume_literal("true")) {
        out = true;
        return true;
      }
      break;
    case 'f':
      if (consume_literal("false")) {
        out = false;
        return true;
      }
      break;
    case 'n':
      if (consume_literal("null")) {
        out = nullptr;
        return true;
      }
      break;
    case 'N':
      if (consume_literal("NaN")) {
        out = std::numeric_limits<double>::quiet_NaN();
        return true;
      }
      break;
    case 'I':
      if (consume_literal("Infinity")) {
        out = std::numeric_limits<double>::infinity();
        return true;
      }
      break;
    default:
      if (m_text[m_pos] == '-' || (m_text[m_pos] >= '0' && m_text[m_pos] <= '9')) {
        return parse_number(out, pointer);
      }
      break;
    }
    return fail(pointer, "expected a value");
  }

  bool parse_object(Json& out, const std::string& pointer, std::size_t depth) {
    if (!count_container(pointer)) {
      return false;
    }
    if (!m_dropping) {
      out = Json::object();
    }
    ++m_pos; // '{'
    skip_whitespace();
    if (m_pos < m_text.size() && m_text[m_pos] == '}') {
      ++m_pos;
      return true;
    }
    // The members gather on top of m_members (a nested object stacks its own above them and takes
    // them off before this one goes on), then move into `out` at once: one exact allocation, and
    // no copies (growing an ordered_json object copies its members, keys being const).
    const std::size_t first = m_members.size();
    std::unordered_map<std::string, std::size_t> index; // filled only for big objects
    while (true) {
      skip_whitespace();
      if (m_pos >= m_text.size() || m_text[m_pos] != '"') {
        return fail(pointer, "expected a string key");
      }
      const int key_line = m_line;
      std::string key;
      if (!parse_string(key, pointer)) {
        return false;
      }
      skip_whitespace();
      if (m_pos >= m_text.size() || m_text[m_pos] != ':') {
        return fail(pointer, "expected ':' after an object key");
      }
      ++m_pos;
      skip_whitespace();
      if (!parse_member(std::move(key), key_line, pointer, depth, first, index)) {
        return false;
      }
      skip_whitespace();
      if (m_pos >= m_text.size()) {
        return fail(pointer, "unexpected end of input inside an object");
      }
      if (m_text[m_pos] == ',') {
        ++m_pos;
        skip_whitespace();
        if (m_pos < m_text.size() && m_text[m_pos] == '}') {
          return fail(pointer, "trailing comma in an object");
        }
        continue;
      }
      if (m_text[m_pos] == '}') {
        ++m_pos;
        if (!m_dropping) {
          take_members(out, first);
        }
        return true;
      }
      return fail(pointer, "expected ',' or '}' after an object member");
    }
  }

  // The value of the member `key` (m_pos is at it), onto m_members unless it is dropped.
  bool parse_member(std::string key, int key_line, const std::string& pointer, std::size_t depth,
                    std::size_t first, std::unordered_map<std::string, std::size_t>& index) {
    if (m_dropping ||
        (depth == 0 && m_kept_members != nullptr &&
         std::find(m_kept_members->begin(), m_kept_members->end(), key) == m_kept_members->end())) {
      const bool was_dropping = std::exchange(m_dropping, true);
      Json dropped;
      const bool ok = parse_value(dropped, pointer, depth + 1);
      m_dropping = was_dropping;
      return ok;
    }
    // Without a line index nothing needs per-value pointers: building them is most of the cost.
    const std::string member =
        m_index == LineIndex::recorded ? child_pointer(pointer, key) : std::string();
    const std::size_t existing = find_member(first, key, index);
    if (existing != k_no_member && m_index == LineIndex::recorded &&
        member.size() <= k_max_recorded_pointer) {
      m_doc.replaced[member] = m_order;
    }
    Json value;
    if (!parse_value(value, member, depth + 1)) {
      return false;
    }
    record(member, key_line);
    if (existing != k_no_member) {
      report_duplicate(key, member, key_line);
      m_members[existing].second = std::move(value);
    } else {
      add_member(first, std::move(key), std::move(value), index);
    }
    return true;
  }

  static constexpr std::size_t k_no_member = static_cast<std::size_t>(-1);
  // Objects up to this many members find a repeated key by scanning them; bigger ones index their
  // keys, so a huge object stays linear.
  static constexpr std::size_t k_scanned_members = 32;

  // Where `key` already is among the members of the object that starts at m_members[first], or
  // k_no_member.
  std::size_t find_member(std::size_t first, const std::string& key,
                          const std::unordered_map<std::string, std::size_t>& index) const {
    if (!index.empty()) {
      const auto it = index.find(key);
      return it == index.end() ? k_no_member : it->second;
    }
    for (std::size_t i = first; i < m_members.size(); ++i) {
      if (m_members[i].first == key) {
        return i;
      }
    }
    return k_no_member;
  }

  void add_member(std::size_t first, std::string key, Json value,
                  std::unordered_map<std::string, std::size_t>& index) {
    if (!index.empty()) {
      index.emplace(key, m_members.size());
    } else if (m_members.size() - first == k_scanned_members) {
      for (std::size_t i = first; i < m_members.size(); ++i) {
        index.emplace(m_members[i].first, i);
      }
      index.emplace(key, m_members.size());
    }
    m_members.emplace_back(std::move(key), std::move(value));
  }

  // Moves the members from m_members[first] on into `out` (an empty object), in order.
  void take_members(Json& out, std::size_t first) {
    auto& members = out.get_ref<Json::object_t&>();
    members.reserve(m_members.size() - first);
    for (std::size_t i = first; i < m_members.size(); ++i) {
      members.emplace_back(std::move(m_members[i].first), std::move(m_members[i].second));
    }
    m_members.resize(first);
  }

  void report_duplicate(const std::string& key, const std::string& member, int key_line) {
    if (++m_duplicates > k_max_reported_duplicate_keys) {
      return;
    }
    Diagnostic warning = make_diagnostic(
        codes::k_json_duplicate_key,
        fmt::format("duplicate key '{}': the last value wins, as in Python", text_excerpt(key)));
    warning.file = m_doc.file;
    warning.pointer = reported_pointer(member);
    warning.line = key_line;
    m_sink.report(std::move(warning));
  }

  bool parse_array(Json& out, const std::string& pointer, std::size_t depth) {
    if (!count_container(pointer)) {
      return false;
    }
    if (!m_dropping) {
      out = Json::array();
    }
    ++m_pos; // '['
    skip_whitespace();
    if (m_pos < m_text.size() && m_text[m_pos] == ']') {
      ++m_pos;
      return true;
    }
    // The items gather on top of m_items, as an object's members do on m_members.
    const std::size_t first = m_items.size();
    std::size_t index = 0;
    while (true) {
      skip_whitespace();
      Json value;
      // Containers inside arrays are recorded for the first k_max_recorded_array_items only: a
      // huge array of objects must not cost a record (and a pointer) per element.
      const bool recorded_item =
          m_index == LineIndex::recorded && index < k_max_recorded_array_items;
      const std::string element = recorded_item ? child_pointer(pointer, index) : std::string();
      if (!parse_value(value, recorded_item ? element : pointer, depth + 1,
                       recorded_item ? ArrayItem::recorded : ArrayItem::unrecorded)) {
        return false;
      }
      if (!m_dropping) {
        m_items.push_back(std::move(value));
      }
      ++index;
      skip_whitespace();
      if (m_pos >= m_text.size()) {
        return fail(pointer, "unexpected end of input inside an array");
      }
      if (m_text[m_pos] == ',') {
        ++m_pos;
        skip_whitespace();
        if (m_pos < m_text.size() && m_text[m_pos] == ']') {
          return fail(pointer, "trailing comma in an array");
        }
        continue;
      }
      if (m_text[m_pos] == ']') {
        ++m_pos;
        if (!m_dropping) {
          auto& items = out.get_ref<Json::array_t&>();
          items.reserve(m_items.size() - first);
          std::move(m_items.begin() + static_cast<std::ptrdiff_t>(first), m_items.end(),
                    std::back_inserter(items));
          m_items.resize(first);
        }
        return true;
      }
      return fail(pointer, "expected ',' or ']' after an array item");
    }
  }

  static void write_utf8(char*& out, std::uint32_t cp) {
    if (cp < 0x80) {
      *out++ = static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out++ = static_cast<char>(0xC0 | (cp >> 6));
      *out++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out++ = static_cast<char>(0xE0 | (cp >> 12));
      *out++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out++ = static_cast<char>(0xF0 | (cp >> 18));
      *out++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out++ = static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parse_hex4(std::uint32_t& out) {
    if (m_pos + 4 > m_text.size()) {
      return false;
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = m_text[m_pos++];
      out <<= 4;
      if (c >= '0' && c <= '9') {
        out |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        out |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        out |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    return true;
  }

  // Length of the valid UTF-8 sequence starting at m_pos, or 0 when it is invalid.
  std::size_t utf8_sequence_length() const {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(m_text[m_pos + i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    std::uint32_t min_cp = 0;
    std::uint32_t cp = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      cp = lead & 0x1Fu;
      min_cp = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      cp = lead & 0x0Fu;
      min_cp = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      cp = lead & 0x07u;
      min_cp = 0x10000;
    } else {
      return 0;
    }
    if (m_pos + length > m_text.size()) {
      return 0;
    }
    for (std::size_t i = 1; i < length; ++i) {
      if ((byte(i) & 0xC0) != 0x80) {
        return 0;
      }
      cp = (cp << 6) | (byte(i) & 0x3Fu);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return 0;
    }
    return length;
  }

  // The position of the quote that closes the string m_pos is in (or the end of the text), with
  // nothing checked: only to size the result.
  std::size_t raw_string_end() const {
    std::size_t pos = m_pos;
    while (true) {
      pos = detail::find_string_special(m_text, pos);
      if (pos >= m_text.size() || m_text[pos] == '"') {
        return std::min(pos, m_text.size());
      }
      pos += m_text[pos] == '\\' ? 2 : 1;
    }
  }

  bool parse_string(std::string& out, const std::string& pointer) {
    ++m_pos; // opening quote
    // Most strings are one plain run: copied at once.
    const std::size_t run_end = detail::find_string_special(m_text, m_pos);
    if (run_end < m_text.size() && m_text[run_end] == '"') {
      out.append(m_text.data() + m_pos, run_end - m_pos);
      m_pos = run_end + 1;
      return true;
    }
    // The others are decoded into room for the rest of the raw string, then cut to size: each
    // step writes at most the bytes it reads (an escape is longer than what it stands for).
    const std::size_t start = out.size();
    out.resize(start + (raw_string_end() - m_pos));
    char* written = out.data() + start;
    const bool ok = decode_string(written, pointer);
    out.resize(static_cast<std::size_t>(written - out.data()));
    if (out.capacity() > 2 * out.size() + 64) {
      out.shrink_to_fit(); // mostly escapes: do not keep the room
    }
    return ok;
  }

  // Decodes the string m_pos is in (past its opening quote) into `out`, up to and past its closing
  // quote. `out` advances by what is written.
  bool decode_string(char*& out, const std::string& pointer) {
    while (true) {
      if (m_pos >= m_text.size()) {
        return fail(pointer, "unterminated string");
      }
      const auto c = static_cast<unsigned char>(m_text[m_pos]);
      if (c == '"') {
        ++m_pos;
        return true;
      }
      if (c < 0x20) {
        return fail(pointer, "control character in a string");
      }
      if (c == '\\') {
        if (!decode_escape(out, pointer)) {
          return false;
        }
        continue;
      }
      if (c < 0x80) {
        // Copy the whole run of plain ASCII characters at once.
        const std::size_t end = detail::find_string_special(m_text, m_pos + 1);
        std::memcpy(out, m_text.data() + m_pos, end - m_pos);
        out += end - m_pos;
        m_pos = end;
        continue;
      }
      const std::size_t length = utf8_sequence_length();
      if (length == 0) {
        return fail(pointer, "invalid UTF-8 in a string");
      }
      std::memcpy(out, m_text.data() + m_pos, length);
      out += length;
      m_pos += length;
    }
  }

  // The escape at m_pos (a backslash), written to `out`.
  bool decode_escape(char*& out, const std::string& pointer) {
    if (m_pos + 1 >= m_text.size()) {
      return fail(pointer, "unterminated escape");
    }
    const char e = m_text[m_pos + 1];
    m_pos += 2;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      *out++ = e;
      return true;
    case 'b':
      *out++ = '\b';
      return true;
    case 'f':
      *out++ = '\f';
      return true;
    case 'n':
      *out++ = '\n';
      return true;
    case 'r':
      *out++ = '\r';
      return true;
    case 't':
      *out++ = '\t';
      return true;
    case 'u': {
      std::uint32_t cp = 0;
      if (!parse_hex4(cp)) {
        return fail(pointer, "invalid \\u escape");
      }
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        std::uint32_t low = 0;
        if (!consume_literal("\\u") || !parse_hex4(low) || low < 0xDC00 || low > 0xDFFF) {
          return fail(pointer, "lone surrogate in a \\u escape");
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return fail(pointer, "lone surrogate in a \\u escape");
      }
      write_utf8(out, cp);
      return true;
    }
    default:
      return fail(pointer, "invalid escape in a string");
    }
  }

  bool parse_number(Json& out, const std::string& pointer) {
    const std::size_t start = m_pos;
    if (m_text[m_pos] == '-') {
      ++m_pos;
      if (consume_literal("Infinity")) {
        out = -std::numeric_limits<double>::infinity();
        return true;
      }
    }
    const auto digit = [&] {
      return m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9';
    };
    if (!digit()) {
      return fail(pointer, "invalid number");
    }
    if (m_text[m_pos] == '0') {
      ++m_pos;
      if (digit()) {
        return fail(pointer, "leading zero in a number");
      }
    } else {
      while (digit()) {
        ++m_pos;
      }
    }
    bool is_float = false;
    if (m_pos < m_text.size() && m_text[m_pos] == '.') {
      is_float = true;
      ++m_pos;
      if (!digit()) {
        return fail(pointer, "expected digits after the decimal point");
      }
      while (digit()) {
        ++m_pos;
      }
    }
    if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
      is_float = true;
      ++m_pos;
      if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-')) {
        ++m_pos;
      }
      if (!digit()) {
        return fail(pointer, "expected digits in the exponent");
      }
      while (digit()) {
        ++m_pos;
      }
    }
    const char* first = m_text.data() + start;
    const char* last = m_text.data() + m_pos;
    if (!is_float) {
      std::int64_t value = 0;
      if (auto [ptr, ec] = std::from_chars(first, last, value); ec == std::errc() && ptr == last) {
        out = value;
        return true;
      }
      std::uint64_t unsigned_value = 0;
      if (auto [ptr, ec] = std::from_chars(first, last, unsigned_value);
          ec == std::errc() && ptr == last) {
        out = unsigned_value;
        return true;
      }
      // Larger than 64 bits: Python keeps it exact, fib keeps the nearest double.
    }
    double value = 0;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ptr != last || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      return fail(pointer, "invalid number");
    }
    if (ec == std::errc::result_out_of_range) {
      // Python's float() gives ±inf on overflow and ±0.0 on underflow; strtod tells which.
      const std::string token(first, static_cast<std::size_t>(last - first));
      value = std::strtod(token.c_str(), nullptr);
    }
    out = value;
    return true;
  }

  std::string_view m_text;
  JsonDocument& m_doc;
  DiagnosticSink& m_sink;
  std::size_t m_pos = 0;
  int m_line;
  std::size_t m_line_start = 0;
  std::uint32_t m_order = 0;
  LineIndex m_index;
  Diagnostic m_error;
  std::size_t m_duplicates = 0;
  std::size_t m_containers = 0;
  // The members and items of the objects and arrays being parsed (see parse_object).
  std::vector<std::pair<std::string, Json>> m_members;
  std::vector<Json> m_items;
  // The members of an object root to keep (nullptr: all of them). The others, and everything in
  // them, are parsed with m_dropping set: checked as ever, but nothing is built.
  const std::vector<std::string_view>* m_kept_members = nullptr;
  bool m_dropping = false;
  std::string m_dropped_text;

public:
  // Duplicate keys seen past k_max_reported_duplicate_keys (not reported one by one).
  std::size_t unreported_duplicates() const {
    return m_duplicates > k_max_reported_duplicate_keys
               ? m_duplicates - k_max_reported_duplicate_keys
               : 0;
  }
};

} // namespace

int JsonDocument::line_of(std::string_view pointer) const {
  std::string key(pointer);
  while (true) {
    if (auto it = lines.find(key); it != lines.end()) {
      // Stale when some ancestor's key was repeated after this record was made.
      bool stale = false;
      for (std::string ancestor = key; !ancestor.empty() && !stale;) {
        ancestor.erase(ancestor.rfind('/'));
        const auto r = replaced.find(ancestor);
        stale = r != replaced.end() && r->second > it->second.order;
      }
      if (!stale) {
        return it->second.line;
      }
    }
    if (key.empty()) {
      return 0;
    }
    key.erase(key.rfind('/'));
  }
}

Expected<JsonDocument> parse_json(std::string_view text, const std::filesystem::path& file,
                                  DiagnosticSink& sink, int first_line, LineIndex index) {
  JsonDocument doc;
  doc.file = file;
  // Duplicate-key warnings are only worth reporting for a document that parses.
  DiagnosticList pending;
  Parser parser(text, doc, pending, first_line, index);
  if (!parser.parse_document()) {
    return unexpected(parser.take_error());
  }
  for (const Diagnostic& warning : pending.items()) {
    sink.report(warning);
  }
  if (const std::size_t more = parser.unreported_duplicates(); more > 0) {
    Diagnostic summary = make_diagnostic(
        codes::k_json_duplicate_key,
        fmt::format("… and {} more duplicate key{} (only the first {} are listed); the last "
                    "value of each wins",
                    more, more == 1 ? "" : "s", k_max_reported_duplicate_keys));
    summary.file = file;
    summary.line = first_line;
    sink.report(std::move(summary));
  }
  return doc;
}

Expected<JsonDocument> parse_json_members(std::string_view text, const std::filesystem::path& file,
                                          const std::vector<std::string_view>& kept) {
  JsonDocument doc;
  doc.file = file;
  DiagnosticList ignored;
  Parser parser(text, doc, ignored, 1, LineIndex::skipped, &kept);
  if (!parser.parse_document()) {
    return unexpected(parser.take_error());
  }
  return doc;
}

std::string json_excerpt(const Json& value) {
  return text_excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string text_excerpt(std::string_view text) {
  constexpr std::size_t k_limit = 80;
  if (text.size() <= k_limit) {
    return std::string(text);
  }
  std::size_t cut = k_limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + "...";
}

} // namespace fib
