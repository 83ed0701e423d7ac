// What touching fresh anonymous memory costs on this machine, in 4 KiB pages and in transparent
// huge pages. Not part of the build; compile and run it by hand:
//
//   g++ -O2 -std=c++20 bench/fresh_memory.cpp -o /tmp/fresh_memory
//   /tmp/fresh_memory 32        # MiB per round; prints one line per round and kind of page
//
// Each round maps a new region, advises it (MADV_HUGEPAGE or MADV_NOHUGEPAGE), writes one byte
// per 4 KiB page and unmaps it again. The time is that of the writes, that is of the page faults
// and of the kernel zeroing the pages (and of whatever the hypervisor does to back them).

#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr std::size_t k_huge_page = std::size_t{2} << 20;
constexpr std::size_t k_small_page = 4096;

// Milliseconds to touch `bytes` of a fresh region advised for huge pages or against them; a
// negative value when the region cannot be mapped.
double touch_fresh(std::size_t bytes, bool huge) {
  const std::size_t mapped = bytes + k_huge_page; // room to align the start to a huge page
  void* region =
      ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) {
    return -1.0;
  }
  const auto start = (reinterpret_cast<std::uintptr_t>(region) + k_huge_page - 1) &
                     ~static_cast<std::uintptr_t>(k_huge_page - 1);
  auto* bytes_at = reinterpret_cast<volatile char*>(start);
  (void)::madvise(reinterpret_cast<void*>(start), bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const auto begin = std::chrono::steady_clock::now();
  for (std::size_t offset = 0; offset < bytes; offset += k_small_page) {
    bytes_at[offset] = 1;
  }
  const auto end = std::chrono::steady_clock::now();
  ::munmap(region, mapped);
  return std::chrono::duration<double, std::milli>(end - begin).count();
}

} // namespace

int main(int argc, char** argv) {
  const long mib = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 32;
  if (mib <= 0 || mib > 4096) {
    std::fprintf(stderr, "usage: fresh_memory [MiB, 1-4096]\n");
    return 2;
  }
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
  for (int round = 1; round <= 3; ++round) {
    for (const bool huge : {true, false}) {
      const double ms = touch_fresh(bytes, huge);
      if (ms < 0) {
        std::perror("mmap");
        return 1;
      }
      std::printf("round %d: %ld MiB in %s pages: %.2f ms (%.2f GB/s)\n", round, mib,
                  huge ? "huge" : "4 KiB", ms, static_cast<double>(bytes) / 1e6 / ms);
    }
  }
  return 0;
}
