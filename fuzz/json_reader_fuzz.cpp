// libFuzzer target: fib's JSON reader (io/json_io.hpp) on arbitrary bytes, with and without the
// line index, and the JSON Lines splitter. Properties: never crashes or hangs; a document that
// parses is re-read from its canonical text to the same canonical text.
#include <fib/io/json_io.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fib::DiagnosticList sink;
  auto indexed = fib::parse_json(text, "fuzz.json", sink, 1, fib::LineIndex::recorded);
  auto plain = fib::parse_json(text, "fuzz.json", sink, 1, fib::LineIndex::skipped);
  if (indexed.has_value() != plain.has_value()) {
    std::abort(); // the index must not change what parses
  }
  if (indexed) {
    for (const auto& [pointer, record] : indexed->lines) {
      (void)indexed->line_of(pointer);
    }
    // The canonical text reads back to a document with the same canonical text (compared as
    // text, since NaN equals nothing, itself included).
    const std::string canonical = fib::canonical_json_text(indexed->root);
    fib::DiagnosticList again;
    auto reread = fib::parse_json(canonical, "canonical.json", again);
    if (!reread || fib::canonical_json_text(reread->root) != canonical) {
      std::abort();
    }
  }
  for (const auto& line : fib::split_jsonl_lines(text)) {
    (void)line;
  }
  return 0;
}
