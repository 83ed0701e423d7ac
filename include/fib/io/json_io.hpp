#pragma once
// Reading JSON and JSON Lines the way the old tool's parser (pydantic-core) does, with positions.
//
// - `NaN`, `Infinity` and `-Infinity` are accepted as number tokens (Python's json writes them).
// - Duplicate keys: the last value wins (kept at the first key's position, as in a Python dict),
//   and each repeat is reported as a `json.duplicate-key` warning.
// - Trailing commas, comments and trailing characters are rejected (`json.parse`).
// - Object key order is preserved (ordered_json): the order of `inputs` is the kernel's argument
// order.
// - Nesting deeper than k_max_json_depth is rejected (`json.too-deep`), never a stack overflow;
//   more than k_max_json_containers objects and arrays in one document (`json.too-large`) too.
// - Strings must be valid UTF-8; `\u` escapes are decoded, lone surrogates rejected.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fib {

// --- Interface ---

using Json = nlohmann::ordered_json;

inline constexpr std::size_t k_max_json_depth = 200;
// Objects and arrays in one document (a JSON file, or one line of a JSONL file). Each costs about
// 80 bytes parsed, however small its text ("{}" is 2 bytes), so past this many a document is
// refused (`json.too-large`) rather than grow to gigabytes: about 330 MB of parse tree at most.
// Real definitions, solutions, workload and trace lines hold hundreds.
inline constexpr std::size_t k_max_json_containers = std::size_t{1} << 22;
inline constexpr std::uintmax_t k_default_max_file_bytes = std::uintmax_t{512} << 20;

// Where a value starts, and when it was recorded (parse order), to tell stale records apart.
struct LineRecord {
  int line = 0;
  std::uint32_t order = 0;
};

// A parsed document and where its values start.
struct JsonDocument {
  std::filesystem::path file;
  Json root;
  // Line (1-based, in the file) where values start, by RFC 6901 pointer ("" is the root); for
  // object members, the line of the key. Scalars inside arrays are not recorded (their array's line
  // is close enough), nor containers past an array's first k_max_recorded_array_items, nor
  // pointers longer than k_max_recorded_pointer (past it a pointer stops growing, and a
  // diagnostic points at its deepest ancestor within the cap): memory stays linear in the
  // document for huge arrays, deep nesting and hostile keys.
  std::unordered_map<std::string, LineRecord> lines;
  // Members whose key was repeated, with the parse order at which the winning value started:
  // records below them made earlier belong to the value that lost.
  std::unordered_map<std::string, std::uint32_t> replaced;

  // Line of `pointer`, or of its nearest recorded ancestor (a missing key reports its parent's
  // line). 0 when nothing is known. Costs O(depth) hash lookups.
  int line_of(std::string_view pointer) const;
};

inline constexpr std::size_t k_max_recorded_pointer = 4096;
// Containers inside an array are recorded for its first this many items only (later ones report
// the array's line).
inline constexpr std::size_t k_max_recorded_array_items = 1024;
// Duplicate keys reported one by one per document; the rest are counted in one last warning
// ("… and N more duplicate keys").
inline constexpr std::size_t k_max_reported_duplicate_keys = 100;

// Whether to index the line of every value. Dataset validation reports no lines and skips it;
// then the pointers of parse errors and duplicate-key warnings are left empty too.
enum class LineIndex { recorded, skipped };

// Parses one JSON document. `first_line` is the file line on which `text` starts (JSON Lines).
// Syntax problems come back as the error (`json.parse` / `json.too-deep` / `json.too-large`, with
// file, line and the pointer of the innermost container); duplicate keys are reported to `sink` as
// warnings.
Expected<JsonDocument> parse_json(std::string_view text, const std::filesystem::path& file,
                                  DiagnosticSink& sink, int first_line = 1,
                                  LineIndex index = LineIndex::recorded);

// Parses `text` with the checks and errors of parse_json (no line index), but of an object root
// keeps only the members named in `kept`: the others are checked and dropped, which costs far less
// than building them. For a look at a few keys of documents that may be big. Duplicate keys are
// not reported.
Expected<JsonDocument> parse_json_members(std::string_view text, const std::filesystem::path& file,
                                          const std::vector<std::string_view>& kept);

// One non-blank line of a JSON Lines file.
struct JsonlLine {
  int line;              // 1-based physical line number; blank lines count
  std::string_view text; // stripped of surrounding whitespace
};

// Splits like Python's str.splitlines() (\n, \r\n, \r, \v, \f, \x1c-\x1e, U+0085, U+2028,
// U+2029), strips each line and drops blank ones, as the old tool's JSONL loader does.
std::vector<JsonlLine> split_jsonl_lines(std::string_view text);

// Reads a whole file. Errors: `io.not-found`, `io.read` (including directories), `io.too-large`
// when it is bigger than `max_bytes`.
Expected<std::string> read_text_file(const std::filesystem::path& file,
                                     std::uintmax_t max_bytes = k_default_max_file_bytes);

// What stat() says of a file, as far as telling whether it changed goes: its identity, type and
// permission bits, size, and modification and status-change times in nanoseconds.
struct FileStatus {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint32_t mode = 0;
  std::int64_t size = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;
};

// stat() of `file` (links followed); nullopt when it fails.
std::optional<FileStatus> file_status(const std::filesystem::path& file);

// A file's text, and the status of what was read.
struct TextFile {
  Expected<std::string> text;
  // fstat() of the opened file taken before its first byte was read, so that a change made while
  // it was read shows as a later status. nullopt when the text is an error, or came through the
  // careful path that read_text_file takes for files that are not plainly readable.
  std::optional<FileStatus> status;
};

// read_text_file, with the status of the file read and no extra system call for it.
TextFile read_text_file_with_status(const std::filesystem::path& file,
                                    std::uintmax_t max_bytes = k_default_max_file_bytes);

// A short rendering of a JSON value for messages: compact, truncated to 80 characters.
std::string json_excerpt(const Json& value);

// The canonical text of a document fib writes (definitions, staged and tagged files): 2-space
// indent, UTF-8 written as is (never \u-escaped; invalid UTF-8 replaced), keys in document order,
// one trailing newline. Numbers that are not finite (which parse_json reads, as Python's json
// module does) are written as Python writes them, Infinity, -Infinity and NaN, so that they read
// back as they were (nlohmann's dump alone would write null).
std::string canonical_json_text(const Json& document);

// `text` cut to 80 bytes (at a UTF-8 character boundary) with "..." appended when it was longer:
// how user text is echoed in messages.
std::string text_excerpt(std::string_view text);

} // namespace fib
