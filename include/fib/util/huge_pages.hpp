#pragma once
// Transparent huge pages for the heap of a memory-hungry run: on machines where every page fault
// is expensive (virtual machines whose page tables the hypervisor shadows), a heap that faults in
// 2 MiB at a time instead of 4 KiB costs a fraction of the kernel time. See docs/architecture.md,
// "Memory and page faults".

namespace fib {

// --- Interface ---

// Whether the heap was set up for huge pages.
enum class HugePageHeap { ready, unavailable };

// Reserves a large heap up front and asks the kernel (madvise MADV_HUGEPAGE) to back it with
// transparent huge pages where it can. Call it once, early, on the main thread, before other
// threads start. glibc's main arena then grows inside that reserved range (96 MiB of address
// space: memory becomes resident only as it is touched, in 2 MiB pieces where the kernel has
// them), on a machine of at most two cores every thread allocates from that arena (glibc's
// M_ARENA_MAX is set to 1 once the heap is advised, so threads started later get no arena of
// their own), blocks up to 1 MiB come from it instead of separate mappings, and its top is not
// handed
// back while it is below 192 MiB (handing it back and growing again would leave the new part
// without the advice). Process-wide: the forked worker processes of the run inherit it.
// Does nothing and says `unavailable` where it does not apply (not glibc or Linux, an
// AddressSanitizer build, the heap cannot be found, the kernel refuses); the program works the
// same either way.
HugePageHeap prepare_huge_page_heap();

} // namespace fib
