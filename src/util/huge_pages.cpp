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
constexpr std::uintptr_t k_huge_page = std::uintptr_t{2} << 20;
constexpr std::uintptr_t k_page = 4096;
// glibc's chunks on 64-bit: a chunk's user memory starts 16 bytes after the chunk, a chunk is
// at least 32 bytes, and sizes are multiples of 16.
constexpr std::uintptr_t k_chunk_header = 16;
constexpr std::uintptr_t k_smallest_chunk = 32;
constexpr std::uintptr_t k_chunk_alignment = 16;
#if defined(MADV_COLLAPSE)
constexpr int k_madvise_collapse = MADV_COLLAPSE;
#else
constexpr int k_madvise_collapse = 25; // Linux 6.1 and later; older kernels refuse it (EINVAL)
#endif

// Set once prepare_huge_page_heap has advised the heap.
bool g_heap_prepared = false;

std::uintptr_t round_down(std::uintptr_t value, std::uintptr_t step) {
  return value - value % step;
}

// Where the free space at the top of the main arena starts: the program break less the top
// chunk's size (mallinfo2's keepcost, which glibc sets from the main arena's top chunk).
std::uintptr_t heap_top_start() {
  const struct mallinfo2 info = mallinfo2();
  return reinterpret_cast<std::uintptr_t>(::sbrk(0)) - info.keepcost;
}

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
  // An allocation just bigger than the free space at the top makes glibc move the program break
  // by the request and the pad: the heap then spans the reserved range, which is advised as a
  // whole below. The block is freed at once. Its size keeps the bytes glibc writes past it (the
  // new top's header) next to the old break, in memory the heap already used; a heap whose top
  // already holds that much free space needs no allocation.
  constexpr std::size_t k_most_blocks = 128;
  void* blocks[k_most_blocks] = {};
  const void* const start = ::sbrk(0);
  const std::uintptr_t old_break = reinterpret_cast<std::uintptr_t>(start);
  std::size_t count = 0;
  while (count < k_most_blocks && ::sbrk(0) == start && mallinfo2().keepcost < k_reserved_heap) {
    blocks[count] = std::malloc(mallinfo2().keepcost + k_smallest_chunk);
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
  // A 2 MiB piece that already had a page before the advice faults in 4 KiB pages from then on
  // (the kernel makes huge pages on fault only where nothing is mapped yet): collapse the whole
  // pieces up to the old break into huge pages now. Kernels before 6.1 refuse; nothing changes.
  for (std::uintptr_t piece = round_down(heap.begin + k_huge_page - 1, k_huge_page);
       piece + k_huge_page <= heap.end && piece < old_break + k_page; piece += k_huge_page) {
    (void)::madvise(reinterpret_cast<void*>(piece), k_huge_page, k_madvise_collapse);
  }
  // On up to k_shared_arena_cores cores all threads allocate from the main arena, inside the
  // advised range: a thread arena of its own would be a separate 64 MiB mapping without the
  // advice, faulting in 4 KiB pages (a warm dataset run's lookup threads took most of their page
  // faults there). With more cores, more threads would queue for the one arena's lock; that was
  // not measured, so glibc's arenas stay.
  if (detail::core_count() <= k_shared_arena_cores) {
    (void)mallopt(M_ARENA_MAX, 1);
  }
  g_heap_prepared = true;
  return HugePageHeap::ready;
#else
  return HugePageHeap::unavailable;
#endif
}

void end_heap_piece_before_fork() {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  if (!g_heap_prepared) {
    return;
  }
  // A free chunk in glibc's bins that fits the request would be handed out instead of the top:
  // such a block is kept too (it is already resident, and writing into it after the fork would
  // copy its pages), and the request is made again, a few times at most.
  constexpr int k_most_tries = 8;
  for (int attempt = 0; attempt < k_most_tries; ++attempt) {
    const std::uintptr_t top = heap_top_start();
    if ((top + k_chunk_header) % k_huge_page == 0) {
      return; // already there
    }
    // The new top chunk starts 16 bytes before a 2 MiB boundary, so that the memory of the
    // next block handed out from it starts on the boundary.
    std::uintptr_t boundary = round_down(top + k_huge_page - 1, k_huge_page);
    while (boundary < top + k_chunk_header + k_smallest_chunk) {
      boundary += k_huge_page;
    }
    const std::uintptr_t pad_chunk = boundary - k_chunk_header - top;
    if (pad_chunk % k_chunk_alignment != 0 || pad_chunk + k_smallest_chunk > mallinfo2().keepcost) {
      return; // not the layout this expects, or a top too small to hold it: leave the heap be
    }
    // glibc sizes a chunk as the request plus 8 bytes, rounded up to 16.
    void* const pad = std::malloc(pad_chunk - sizeof(std::size_t));
    if (pad == nullptr) {
      return;
    }
    // Kept until the process ends (its pages are never written): the memory behind it is what
    // the parent and the children share and must not write.
    if (reinterpret_cast<std::uintptr_t>(pad) == top + k_chunk_header) {
      return;
    }
  }
#endif
}

} // namespace fib
