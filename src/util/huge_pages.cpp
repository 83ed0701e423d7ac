#include "fib/util/huge_pages.hpp"

#include "util/parallel_for.hpp"

#include <fib/base/build_features.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace fib {
namespace {

#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)

constexpr std::size_t k_reserved_heap = std::size_t{96} << 20;
constexpr std::size_t k_largest_heap_block = std::size_t{1} << 20;
constexpr std::size_t k_shared_arena_cores = 2;

struct Range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
};

// The address range of the "[heap]" mappings (the program break's area; its growth can be a
// mapping of its own, for one after fork()), or {0, 0}.
Range heap_range() {
  Range range;
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) {
    return range;
  }
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    // The pathname field is the last one: exactly "[heap]" (a file whose name contains it ends
    // differently).
    const std::size_t length = std::strlen(line);
    constexpr std::string_view k_heap = " [heap]\n";
    if (length < k_heap.size() ||
        std::string_view(line + length - k_heap.size(), k_heap.size()) != k_heap) {
      continue;
    }
    unsigned long begin = 0;
    unsigned long end = 0;
    if (std::sscanf(line, "%lx-%lx", &begin, &end) == 2) {
      range.begin = range.begin == 0 ? begin : std::min<std::uintptr_t>(range.begin, begin);
      range.end = std::max<std::uintptr_t>(range.end, end);
    }
  }
  std::fclose(maps);
  return range;
}

#endif

} // namespace

HugePageHeap prepare_huge_page_heap() {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  if (k_built_with_address_sanitizer) {
    return HugePageHeap::unavailable; // its allocator is not glibc's, and has no program break
  }
  // Blocks up to k_largest_heap_block come from the heap (not from mappings of their own, which
  // would fault in 4 KiB pages), and its top is not trimmed below twice the reservation: growing
  // it again later would add a range the advice below does not cover (the kernel keeps the heap's
  // later growth in a mapping of its own). An explicit malloc_trim still trims it.
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(k_largest_heap_block)) == 0 ||
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(k_reserved_heap * 2)) == 0 ||
      mallopt(M_TOP_PAD, static_cast<int>(k_reserved_heap)) == 0) {
    return HugePageHeap::unavailable;
  }
  // Allocations until glibc moves the program break (by the request and the pad: the heap then
  // spans the reserved range, which is advised as a whole below); the blocks are freed at once.
  // A heap whose top already holds that much free space needs none.
  constexpr std::size_t k_most_blocks = 128;
  void* blocks[k_most_blocks] = {};
  const void* const start = ::sbrk(0);
  std::size_t count = 0;
  while (count < k_most_blocks && ::sbrk(0) == start) {
    blocks[count] = std::malloc(k_largest_heap_block / 2);
    if (blocks[count] == nullptr) {
      break;
    }
    ++count;
  }
  for (std::size_t i = 0; i < count; ++i) {
    std::free(blocks[i]);
  }
  const Range heap = heap_range();
  if (heap.end <= heap.begin) {
    return HugePageHeap::unavailable;
  }
  if (::madvise(reinterpret_cast<void*>(heap.begin), heap.end - heap.begin, MADV_HUGEPAGE) != 0) {
    return HugePageHeap::unavailable;
  }
  // On up to k_shared_arena_cores cores all threads allocate from the main arena, inside the
  // advised range: a thread arena of its own would be a separate 64 MiB mapping without the
  // advice, faulting in 4 KiB pages (a warm dataset run's lookup threads took most of their page
  // faults there). With more cores, more threads would queue for the one arena's lock; that was
  // not measured, so glibc's arenas stay.
  if (detail::core_count() <= k_shared_arena_cores) {
    (void)mallopt(M_ARENA_MAX, 1);
  }
  return HugePageHeap::ready;
#else
  return HugePageHeap::unavailable;
#endif
}

} // namespace fib
