#pragma once
// The process's heap, whichever allocator it runs on. engramd is linked with jemalloc
// (ENGRAM_JEMALLOC, docs/operations.md "Memory"): it returns freed pages within about a
// second instead of keeping them, which glibc's malloc did (tens of MiB after a burst of
// recalls). Other programs (tests, tools, sanitized builds) run on glibc's malloc. Which one
// is chosen at run time: jemalloc's mallctl is looked up as a weak symbol.

#include <cstdint>

namespace engram::services {

struct heap_figures {
  /// Bytes the program has allocated and not freed.
  std::uint64_t in_use = 0;
  /// Bytes the allocator holds for later allocations (glibc: free chunks, resident or not;
  /// jemalloc: resident pages beyond what is allocated, its own metadata included).
  std::uint64_t free = 0;
  /// glibc: bytes in chunks mmapped on their own; jemalloc: bytes of its active extents.
  std::uint64_t mapped = 0;
  /// "jemalloc" or "glibc".
  const char* allocator = "glibc";
};

/// What the allocator reports now (jemalloc's statistics are refreshed first).
[[nodiscard]] heap_figures heap_now();

/// Gives the heap's free whole pages back to the system (glibc: malloc_trim; jemalloc: a
/// purge of every arena).
void release_free_heap();

}  // namespace engram::services
