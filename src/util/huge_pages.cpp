#include "fib/util/huge_pages.hpp"

#include "util/parallel_for.hpp"

#include <fib/base/build_features.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

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

// One line of /proc/self/maps: the mapping's range, its inode (0 for memory that is not a
// file's) and its name ("" for none; "[heap]", a file's path, ...).
struct Mapping {
  Range range;
  unsigned long inode = 0;
  std::string_view name;
};

// Calls visit(mapping) for each mapping of this process, in address order; nothing when the list
// cannot be read.
template <class Visit> void for_each_mapping(Visit visit) {
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) {
    return;
  }
  char* line = nullptr;
  std::size_t capacity = 0;
  ssize_t length = 0;
  while ((length = ::getline(&line, &capacity, maps)) > 0) {
    unsigned long begin = 0;
    unsigned long end = 0;
    unsigned long inode = 0;
    int name_at = 0;
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %lu %n", &begin, &end, &inode, &name_at) < 3 ||
        name_at <= 0 || name_at > length) {
      continue;
    }
    // The name is the rest of the line, without its newline.
    std::string_view name(line + name_at, static_cast<std::size_t>(length - name_at));
    if (!name.empty() && name.back() == '\n') {
      name.remove_suffix(1);
    }
    visit(Mapping{{begin, end}, inode, name});
  }
  std::free(line);
  std::fclose(maps);
}

// The address range of the "[heap]" mappings (the program break's area; its growth can be a
// mapping of its own, for one after fork()), or {0, 0}.
Range heap_range() {
  Range range;
  for_each_mapping([&](const Mapping& mapping) {
    if (mapping.name != "[heap]") {
      return;
    }
    range.begin =
        range.begin == 0 ? mapping.range.begin : std::min(range.begin, mapping.range.begin);
    range.end = std::max(range.end, mapping.range.end);
  });
  return range;
}

// glibc keeps each arena but the main one in heaps of this size, each aligned to it (its
// HEAP_MAX_SIZE on 64-bit systems), the arena's own bookkeeping at the start of the first.
constexpr std::uintptr_t k_arena_heap = std::uintptr_t{64} << 20;

// The anonymous mappings (no file, no name) that make up `range`, or none when anything else
// lies in it or part of a mapping sticks out of it.
std::vector<Range> anonymous_mappings_in(Range range) {
  std::vector<Range> found;
  bool foreign = false;
  for_each_mapping([&](const Mapping& mapping) {
    if (mapping.range.end <= range.begin || mapping.range.begin >= range.end) {
      return; // outside
    }
    if (mapping.inode != 0 || !mapping.name.empty() || mapping.range.begin < range.begin ||
        mapping.range.end > range.end) {
      foreign = true;
      return;
    }
    found.push_back(mapping.range);
  });
  if (foreign) {
    found.clear();
  }
  return found;
}

// Makes glibc's arena limit two and creates the second arena now, on a thread of its own that
// ends at once (the arena then waits on glibc's free list for the next thread started), with its
// heap advised as the main heap is and its first 2 MiB piece, which already holds the arena's
// bookkeeping, collapsed. Threads started later allocate from one of the two arenas, whichever is
// free. Where the arena cannot be told apart from the main heap or its heap is not as expected,
// it stays unadvised: allocation works the same, in 4 KiB pages there.
void prepare_second_arena() {
  (void)mallopt(M_ARENA_MAX, 2);
  const Range main_heap = heap_range();
  const auto create_and_advise = [main_heap] {
    void* const probe = std::malloc(k_smallest_chunk);
    const auto at = reinterpret_cast<std::uintptr_t>(probe);
    if (probe != nullptr && (at < main_heap.begin || at >= main_heap.end)) {
      const std::uintptr_t base = round_down(at, k_arena_heap);
      for (const Range& mapping : anonymous_mappings_in({base, base + k_arena_heap})) {
        (void)::madvise(reinterpret_cast<void*>(mapping.begin), mapping.end - mapping.begin,
                        MADV_HUGEPAGE);
        if (mapping.begin == base && mapping.end - mapping.begin >= k_huge_page) {
          (void)::madvise(reinterpret_cast<void*>(base), k_huge_page, k_madvise_collapse);
        }
      }
    }
    std::free(probe);
  };
  try {
    std::thread(create_and_advise).join();
  } catch (const std::system_error&) {
    // No thread: none will be started later either, and the limit alone changes nothing.
  }
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
  while (count < k_most_blocks && ::sbrk(0) == start) {
    const std::size_t free_top = mallinfo2().keepcost;
    if (free_top >= k_reserved_heap) {
      break;
    }
    blocks[count] = std::malloc(free_top + k_smallest_chunk);
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
  // On up to k_shared_arena_cores cores threads allocate from two arenas, both advised: the main
  // one and a second one made here. glibc's own arenas, one per thread, would each be a separate
  // 64 MiB mapping without the advice, faulting in 4 KiB pages (a warm dataset run's lookup
  // threads took most of their page faults there); one arena for all made the scan's two threads
  // wait for its lock (docs/architecture.md, "Memory and page faults"). With more cores glibc's
  // arenas stay: what more threads on two advised arenas would cost was not measured.
  if (detail::core_count() <= k_shared_arena_cores) {
    prepare_second_arena();
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
