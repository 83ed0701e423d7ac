// libFuzzer target: a definition document through the model parser and the checks that run
// without Python. Property: never crashes or hangs, whatever the JSON holds.
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fib::DiagnosticList sink;
  auto document = fib::parse_json(text, "fuzz.json", sink);
  if (document) {
    const fib::Definition definition = fib::parse_definition(*document, sink);
    (void)definition;
  }
  return 0;
}
