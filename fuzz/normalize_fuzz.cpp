// libFuzzer target: the normalize engine (normalize/normalize.hpp) on a definition document,
// without Python (the reference rules are then skipped, as the engine documents). Property: never
// crashes or hangs, whatever the JSON holds.
#include <fib/io/json_io.hpp>
#include <fib/model/python_frontend.hpp>
#include <fib/normalize/normalize.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fib::DiagnosticList sink;
  auto document = fib::parse_json(text, "fuzz.json", sink);
  if (document) {
    fib::NoPython python;
    const fib::NormalizeOptions options;
    auto normalized = fib::normalize_definition(*document, options, python);
    (void)normalized;
  }
  return 0;
}
