#include "fib/io/json_io.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <system_error>

namespace fib {
namespace {

// Recursive-descent parser over UTF-8 text. Depth is bounded by k_max_json_depth, so recursion
// cannot overflow the stack on hostile input.
class Parser {
public:
  Parser(std::string_view text, JsonDocument& doc, DiagnosticSink& sink, int first_line,
         LineIndex index)
      : m_text(text), m_doc(doc), m_sink(sink), m_line(first_line), m_index(index) {}

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
    out = Json::object();
    auto& members = out.get_ref<Json::object_t&>();
    std::unordered_map<std::string, std::size_t> index;
    ++m_pos; // '{'
    skip_whitespace();
    if (m_pos < m_text.size() && m_text[m_pos] == '}') {
      ++m_pos;
      return true;
    }
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
      // Without a line index nothing needs per-value pointers: building them is most of the cost.
      const std::string member =
          m_index == LineIndex::recorded ? child_pointer(pointer, key) : std::string();
      const auto existing = index.find(key);
      if (existing != index.end() && m_index == LineIndex::recorded &&
          member.size() <= k_max_recorded_pointer) {
        m_doc.replaced[member] = m_order;
      }
      Json value;
      if (!parse_value(value, member, depth + 1)) {
        return false;
      }
      record(member, key_line);
      if (existing != index.end()) {
        if (++m_duplicates <= k_max_reported_duplicate_keys) {
          Diagnostic warning =
              make_diagnostic(codes::k_json_duplicate_key,
                              fmt::format("duplicate key '{}': the last value wins, as in Python",
                                          text_excerpt(key)));
          warning.file = m_doc.file;
          warning.pointer = reported_pointer(member);
          warning.line = key_line;
          m_sink.report(std::move(warning));
        }
        (members.begin() + static_cast<std::ptrdiff_t>(existing->second))->second =
            std::move(value);
      } else {
        // Appended directly: ordered_json's own insert scans every key, O(n^2) for big objects.
        index.emplace(key, members.size());
        members.emplace_back(std::move(key), std::move(value));
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
        return true;
      }
      return fail(pointer, "expected ',' or '}' after an object member");
    }
  }

  bool parse_array(Json& out, const std::string& pointer, std::size_t depth) {
    if (!count_container(pointer)) {
      return false;
    }
    out = Json::array();
    ++m_pos; // '['
    skip_whitespace();
    if (m_pos < m_text.size() && m_text[m_pos] == ']') {
      ++m_pos;
      return true;
    }
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
      out.push_back(std::move(value));
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
        return true;
      }
      return fail(pointer, "expected ',' or ']' after an array item");
    }
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
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

  bool parse_string(std::string& out, const std::string& pointer) {
    ++m_pos; // opening quote
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
        if (m_pos + 1 >= m_text.size()) {
          return fail(pointer, "unterminated escape");
        }
        const char e = m_text[m_pos + 1];
        m_pos += 2;
        switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
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
          append_utf8(out, cp);
          break;
        }
        default:
          return fail(pointer, "invalid escape in a string");
        }
        continue;
      }
      if (c < 0x80) {
        // Copy the whole run of plain ASCII characters at once.
        std::size_t end = m_pos + 1;
        while (end < m_text.size()) {
          const auto next = static_cast<unsigned char>(m_text[end]);
          if (next == '"' || next == '\\' || next < 0x20 || next >= 0x80) {
            break;
          }
          ++end;
        }
        out.append(m_text.substr(m_pos, end - m_pos));
        m_pos = end;
        continue;
      }
      const std::size_t length = utf8_sequence_length();
      if (length == 0) {
        return fail(pointer, "invalid UTF-8 in a string");
      }
      out.append(m_text.substr(m_pos, length));
      m_pos += length;
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

public:
  // Duplicate keys seen past k_max_reported_duplicate_keys (not reported one by one).
  std::size_t unreported_duplicates() const {
    return m_duplicates > k_max_reported_duplicate_keys
               ? m_duplicates - k_max_reported_duplicate_keys
               : 0;
  }
};

// Length of the line break at `pos` per str.splitlines(), or 0.
std::size_t line_break_length(std::string_view text, std::size_t pos) {
  const auto c = static_cast<unsigned char>(text[pos]);
  if (c == '\r') {
    return pos + 1 < text.size() && text[pos + 1] == '\n' ? 2 : 1;
  }
  if (c == '\n' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E) {
    return 1;
  }
  if (c == 0xC2 && pos + 1 < text.size() && static_cast<unsigned char>(text[pos + 1]) == 0x85) {
    return 2;
  }
  if (c == 0xE2 && pos + 2 < text.size() && static_cast<unsigned char>(text[pos + 1]) == 0x80 &&
      (static_cast<unsigned char>(text[pos + 2]) == 0xA8 ||
       static_cast<unsigned char>(text[pos + 2]) == 0xA9)) {
    return 3;
  }
  return 0;
}

// Python's str.strip() for the ASCII whitespace and U+00A0 seen in real files.
std::string_view strip(std::string_view s) {
  const auto is_space = [](unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
           (c >= 0x1C && c <= 0x1F);
  };
  while (!s.empty() && is_space(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_space(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

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

std::vector<JsonlLine> split_jsonl_lines(std::string_view text) {
  std::vector<JsonlLine> lines;
  int number = 1;
  std::size_t start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t brk = line_break_length(text, pos);
    if (brk == 0) {
      ++pos;
      continue;
    }
    if (auto stripped = strip(text.substr(start, pos - start)); !stripped.empty()) {
      lines.push_back({number, stripped});
    }
    pos += brk;
    start = pos;
    ++number;
  }
  if (auto stripped = strip(text.substr(start)); !stripped.empty()) {
    lines.push_back({number, stripped});
  }
  return lines;
}

Expected<std::string> read_text_file(const std::filesystem::path& file, std::uintmax_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    // A symlink loop, a permission problem on a parent directory, …
    Diagnostic d = make_diagnostic(codes::k_io_read, fmt::format("cannot read: {}", ec.message()));
    d.file = file;
    return unexpected(std::move(d));
  }
  if (ec || !std::filesystem::exists(status)) {
    Diagnostic d = make_diagnostic(codes::k_io_not_found, "no such file");
    d.file = file;
    return unexpected(std::move(d));
  }
  if (std::filesystem::is_directory(status)) {
    Diagnostic d = make_diagnostic(codes::k_io_read, "cannot read: is a directory");
    d.file = file;
    return unexpected(std::move(d));
  }
  if (!std::filesystem::is_regular_file(status)) {
    // FIFOs block, devices never end: only plain files are read.
    Diagnostic d = make_diagnostic(codes::k_io_read,
                                   "cannot read: not a regular file (a FIFO, socket or device)");
    d.file = file;
    return unexpected(std::move(d));
  }
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > max_bytes) {
    Diagnostic d = make_diagnostic(
        codes::k_io_too_large,
        fmt::format("file is {} bytes, more than the limit of {} bytes", size, max_bytes));
    d.file = file;
    return unexpected(std::move(d));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    Diagnostic d = make_diagnostic(codes::k_io_read, "cannot open the file for reading");
    d.file = file;
    return unexpected(std::move(d));
  }
  std::string content;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    content.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (content.size() > max_bytes) {
      Diagnostic d = make_diagnostic(
          codes::k_io_too_large, fmt::format("file is more than the limit of {} bytes", max_bytes));
      d.file = file;
      return unexpected(std::move(d));
    }
  }
  if (in.bad()) {
    Diagnostic d = make_diagnostic(codes::k_io_read, "read error");
    d.file = file;
    return unexpected(std::move(d));
  }
  return content;
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

std::string canonical_json_text(const Json& document) {
  std::string text = document.dump(2, ' ', false, Json::error_handler_t::replace);
  text += '\n';
  return text;
}

} // namespace fib
