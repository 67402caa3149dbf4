#include "services/heap.hpp"

#include <malloc.h>

#include <cstddef>

// jemalloc's control interface: present only when the process is linked with it.
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen)
    __attribute__((weak));

namespace engram::services {
namespace {

std::uint64_t jemalloc_stat(const char* name) {
  std::size_t value = 0;
  std::size_t size = sizeof(value);
  return mallctl(name, &value, &size, nullptr, 0) == 0 ? value : 0;
}

}  // namespace

heap_figures heap_now() {
  heap_figures f;
  if (mallctl != nullptr) {
    std::uint64_t epoch = 1;
    std::size_t size = sizeof(epoch);
    mallctl("epoch", &epoch, &size, &epoch, size);  // the statistics are a snapshot taken here
    f.allocator = "jemalloc";
    f.in_use = jemalloc_stat("stats.allocated");
    const auto resident = jemalloc_stat("stats.resident");
    f.free = resident > f.in_use ? resident - f.in_use : 0;
    f.mapped = jemalloc_stat("stats.active");
    return f;
  }
  const auto m = ::mallinfo2();
  f.in_use = m.uordblks + m.hblkhd;
  f.free = m.fordblks;
  f.mapped = m.hblkhd;
  return f;
}

void release_free_heap() {
  if (mallctl != nullptr) {
    // MALLCTL_ARENAS_ALL (4096): every arena.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  ::malloc_trim(0);
}

}  // namespace engram::services
