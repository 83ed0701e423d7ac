// Benchmark helper (not a test): fib::sha256's throughput on one 64 MiB buffer, best of five.
//
//   g++ -O2 -std=c++20 -Iinclude bench/sha256_throughput.cpp build/src/libfib_core.a -lfmt \
//       -o /tmp/sha256_throughput && /tmp/sha256_throughput
//
// Prints MB/s (10^6 bytes a second) and whether the processor's SHA extensions were used.

#include <fib/util/sha256.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

int main() {
  const std::string data(std::size_t{64} << 20, 'x');
  double best = 1e9;
  unsigned first = 0;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const fib::Sha256Digest digest = fib::sha256(data);
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    first = digest[0];
  }
  std::printf("%.0f MB/s (SHA extensions: %s; digest starts %02x)\n",
              static_cast<double>(data.size()) / best / 1e6,
              fib::sha256_uses_sha_extensions() ? "yes" : "no", first);
  return 0;
}
