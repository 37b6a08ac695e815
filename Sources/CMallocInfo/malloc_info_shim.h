// glibc's allocator statistics and malloc_trim for the caches and group-policy-bench (Swift's Glibc
// module leaves out <malloc.h>).
// Header only: nothing is compiled or linked besides the C library itself.
#ifndef GROUP_POLICY_MALLOC_INFO_SHIM_H
#define GROUP_POLICY_MALLOC_INFO_SHIM_H

#include <stddef.h>

#if defined(__GLIBC__) || (defined(__linux__) && __has_include(<malloc.h>))
#include <malloc.h>

/// Bytes in use in the heap (allocated and not freed), or 0 where unknown.
static inline size_t group_policy_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().uordblks;
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
