// libFuzzer target: fib's safetensors reader (io/safetensors.hpp) on arbitrary file contents,
// header and values. Property: never crashes or hangs; an accepted header's tensors tile the data.
#include <fib/io/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/fib-safetensors-fuzz-" + std::to_string(::getpid());
  if (std::FILE* file = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    return 0;
  }
  auto header = fib::read_safetensors_header(path);
  if (header) {
    for (const auto& [key, entry] : header->tensors) {
      if (entry.data_end < entry.data_begin || header->data_start + entry.data_end > size) {
        std::abort(); // the reader promised offsets inside the file
      }
      (void)fib::read_tensor_values(path, *header, key, 1 << 16);
    }
  }
  return 0;
}
