// prepare_huge_page_heap: in a child process (it changes the allocator of the whole process), the
// heap is advised for huge pages where the kernel allows them, and allocation works as before.
// end_heap_piece_before_fork: it leaves an unprepared heap alone, and on a prepared one the free
// space at the top starts 16 bytes (glibc's chunk header) before a 2 MiB boundary.

#include <fib/base/build_features.hpp>
#include <fib/util/huge_pages.hpp>

#include <gtest/gtest.h>

#include <malloc.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

// The kernel's transparent huge page mode: "always", "madvise" or "never" (the bracketed word).
std::string huge_page_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto open = text.find('[');
  const auto close = text.find(']');
  return open == std::string::npos || close == std::string::npos
             ? std::string()
             : text.substr(open + 1, close - open - 1);
}

// Whether a [heap] mapping of this process (the heap's growth after fork() is a mapping of its
// own) is eligible for huge pages (smaps' THPeligible).
bool heap_is_eligible() {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_heap = false;
  while (std::getline(smaps, line)) {
    const bool mapping = !line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
                         line.find(' ') > line.find('-');
    if (mapping) {
      in_heap = line.find("[heap]") != std::string::npos;
    } else if (in_heap && line.rfind("THPeligible:", 0) == 0 &&
               line.find('1') != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Whether the mapping of this process that holds `address` is eligible for huge pages (smaps'
// THPeligible).
bool eligible_at(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  while (std::getline(smaps, line)) {
    const bool mapping = !line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
                         line.find(' ') > line.find('-');
    if (mapping) {
      const std::uintptr_t begin = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
      const std::uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return line.find('1') != std::string::npos;
    }
  }
  return false;
}

// Whether `address` lies in a [heap] mapping of this process.
bool in_heap(const void* address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  while (std::getline(maps, line)) {
    if (line.size() < 6 || line.compare(line.size() - 6, 6, "[heap]") != 0) {
      continue;
    }
    const std::uintptr_t begin = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
    const std::uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (at >= begin && at < end) {
      return true;
    }
  }
  return false;
}

// Where glibc's free space at the top of the heap starts: the program break less the top chunk.
std::uintptr_t top_chunk_start() {
  return reinterpret_cast<std::uintptr_t>(::sbrk(0)) - mallinfo2().keepcost;
}

// Whether the next block glibc carves from the top of the heap starts on a 2 MiB boundary.
bool top_ends_a_huge_page() {
  constexpr std::uintptr_t k_huge_page = std::uintptr_t{2} << 20;
  constexpr std::uintptr_t k_chunk_header = 16;
  return (top_chunk_start() + k_chunk_header) % k_huge_page == 0;
}

// Exit codes of the child: 0 all as expected, 1 the heap is not eligible though the kernel allows
// it, 2 allocation misbehaved, 3 prepare said unavailable where it should work, 4 on a machine of
// at most two cores, threads started afterwards allocated from memory not advised for huge pages
// (an arena of glibc's own making) or from more than two arenas, and on a larger one a thread
// allocated inside the heap, 5 end_heap_piece_before_fork changed a heap that was not
// prepared, 6 it did not move a prepared heap's top to a 2 MiB boundary (or a second call did not
// keep it on one).
int child_checks(const std::string& mode) {
  const std::uintptr_t top_before = top_chunk_start();
  end_heap_piece_before_fork();
  if (top_chunk_start() != top_before) {
    return 5;
  }
  const HugePageHeap prepared = prepare_huge_page_heap();
  if (mode == "madvise" || mode == "always") {
    if (prepared != HugePageHeap::ready) {
      return 3;
    }
    if (!heap_is_eligible()) {
      return 1;
    }
    if (std::thread::hardware_concurrency() <= 2) {
      // Three threads alive at once: each allocates from the main heap or the one other arena
      // made for them, both advised for huge pages (smaps' THPeligible).
      constexpr int k_threads = 3;
      void* from_threads[k_threads] = {};
      std::vector<std::thread> threads;
      std::atomic<int> started{0};
      for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&, i] {
          from_threads[i] = std::malloc(4096);
          ++started;
          while (started.load() < k_threads) {
            std::this_thread::yield();
          }
        });
      }
      for (std::thread& thread : threads) {
        thread.join();
      }
      std::set<std::uintptr_t> arenas; // the 64 MiB-aligned region of each block off the heap
      for (void* block : from_threads) {
        if (block == nullptr || !(in_heap(block) || eligible_at(block))) {
          return 4;
        }
        if (!in_heap(block)) {
          arenas.insert(reinterpret_cast<std::uintptr_t>(block) >> 26);
        }
      }
      for (void* block : from_threads) {
        std::free(block);
      }
      if (arenas.size() > 1) {
        return 4;
      }
    } else {
      void* from_thread = nullptr;
      std::thread([&] { from_thread = std::malloc(4096); }).join();
      const bool in_main_heap = from_thread != nullptr && in_heap(from_thread);
      std::free(from_thread);
      if (in_main_heap) {
        return 4; // glibc's arenas, one per thread, on larger machines
      }
    }
    end_heap_piece_before_fork();
    if (!top_ends_a_huge_page()) {
      return 6;
    }
    void* const small = std::malloc(100);
    end_heap_piece_before_fork();
    if (!top_ends_a_huge_page()) {
      return 6;
    }
    std::free(small);
  }
  // Many small blocks and some large ones, written and checked, then freed.
  std::vector<char*> blocks;
  for (int i = 0; i < 20000; ++i) {
    const std::size_t size = i % 1000 == 0 ? std::size_t{3} << 20 : 48 + i % 1000;
    char* block = static_cast<char*>(std::malloc(size));
    if (block == nullptr) {
      return 2;
    }
    std::memset(block, i & 0xff, size);
    blocks.push_back(block);
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (static_cast<unsigned char>(blocks[i][0]) != (i & 0xff)) {
      return 2;
    }
    std::free(blocks[i]);
  }
  return 0;
}

TEST(HugePageHeap, TheHeapIsAdvisedWhereTheKernelAllowsAndAllocationWorks) {
  if (k_built_with_address_sanitizer) {
    EXPECT_EQ(prepare_huge_page_heap(), HugePageHeap::unavailable);
    GTEST_SKIP() << "an AddressSanitizer build's allocator is not glibc's: the heap is left alone";
  }
  // glibc fixes its arena limit when a process first starts a thread, and a fork keeps it: the
  // checks run in a fresh copy of this test binary (no thread started before them), and there in
  // a forked child (prepare changes the allocator of the whole process).
  if (std::getenv("FIB_TEST_HUGE_PAGE_HEAP") == nullptr) {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string command =
        "FIB_TEST_HUGE_PAGE_HEAP=1 '" + self + "' --gtest_filter=HugePageHeap.* >/dev/null 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0)
        << "the checks failed in a fresh process: run " << command << " without the redirection";
    return;
  }
  const std::string mode = huge_page_mode();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::_exit(child_checks(mode));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "transparent huge pages: '" << mode << "'";
}

} // namespace
} // namespace fib
