#pragma once
// Facts about how this binary was compiled that change what fib can promise at run time.

namespace fib {

// True when compiled with AddressSanitizer (clang's __has_feature, GCC's __SANITIZE_ADDRESS__).
// ASan reserves terabytes of virtual address space for its shadow memory at start-up, so an
// RLIMIT_AS below that makes every later allocation fail: such a build does not cap the worker's
// address space (docs/building.md), and the tests of that cap skip. Its allocator replaces
// glibc's, so prepare_huge_page_heap (fib/util/huge_pages.hpp) leaves the heap alone there.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool k_built_with_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool k_built_with_address_sanitizer = true;
#else
inline constexpr bool k_built_with_address_sanitizer = false;
#endif
#else
inline constexpr bool k_built_with_address_sanitizer = false;
#endif

} // namespace fib
