// glibc's allocator statistics and malloc_trim for the caches and group-policy-bench (Swift's Glibc
// module leaves out <malloc.h>).
// Header only: nothing is compiled or linked besides the C library itself.
#ifndef GROUP_POLICY_MALLOC_INFO_SHIM_H
#define GROUP_POLICY_MALLOC_INFO_SHIM_H

#include <stddef.h>

#if defined(__GLIBC__) || (defined(__linux__) && __has_include(<malloc.h>))
#include <malloc.h>

/// Bytes allocated and not freed, or 0 where unknown: the arenas' chunks and the blocks large
/// enough to be mapped on their own (in a young process every block of 128 KiB or more).
static inline size_t group_policy_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

/// Returns free heap pages to the system.
static inline void group_policy_heap_trim(void) { malloc_trim(0); }
#else
static inline size_t group_policy_heap_in_use(void) { return 0; }
static inline void group_policy_heap_trim(void) {}
#endif

#endif
