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
// them), blocks up to 1 MiB come from it instead of separate mappings, and its top is not handed
// back while it is below 192 MiB (handing it back and growing again would leave the new part
// without the advice). The 2 MiB pieces touched before the advice are collapsed into huge pages
// (Linux 6.1 and later). On a machine of at most two cores threads started later allocate from
// two arenas, both advised: the main one and a second one made here (glibc's M_ARENA_MAX is set
// to 2). Process-wide: the forked worker processes of the run inherit it.
// Does nothing and says `unavailable` where it does not apply (not glibc or Linux, an
// AddressSanitizer build, the heap cannot be found, the kernel refuses); the program works the
// same either way.
HugePageHeap prepare_huge_page_heap();

// Ends the heap's current 2 MiB piece before fork(): glibc's free space at the top of the heap is
// made to start on the next 2 MiB boundary, behind a block that is kept and never written. After
// fork() the parent and each child then take their new memory from huge pages of their own,
// instead of writing into the piece they share, which the kernel would split and copy to each of
// them 4 KiB at a time (a page fault each). Call it in the parent just before fork(), with no
// other thread allocating; calling it again before a later fork() costs at most another 2 MiB of
// address space (never of memory). Does nothing unless prepare_huge_page_heap said `ready`, or
// where the heap is not laid out as expected.
void end_heap_piece_before_fork();

} // namespace fib
