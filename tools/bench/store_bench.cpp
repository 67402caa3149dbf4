// The store alone: synthetic events decoded and applied to RocksDB, events/s (store_bench.hpp).
#include "tools/bench/store_bench.hpp"

#include "schemas/inbound_message.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/synthetic.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace engram::bench {

int bench_store(std::size_t n, int runs) {
  using clock_type = std::chrono::steady_clock;
  std::vector<double> rates;
  auto evs = evaluation::synthetic::events(n, 200, synthetic_organisations);
  for (int run = 0; run < runs; ++run) {
    auto dir = std::filesystem::temp_directory_path() / ("engram-bench-store-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto store = open_store(dir.string());
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
      schemas::inbound_message m;
      if (auto bad = schemas::decode(evs[i], {}, m))
        throw std::runtime_error(bad->to_string());
      storage::apply_outcome out{};
      if (store->apply({"engram-log", 0, static_cast<std::int64_t>(i), "bench"}, &m, &out) != storage::errc::ok)
        throw std::runtime_error("apply failed");
    }
    rates.push_back(static_cast<double>(n) / std::chrono::duration<double>(clock_type::now() - t0).count());
    std::printf("  run %d: %.0f events/s\n", run + 1, rates.back());
    store.reset();
    std::filesystem::remove_all(dir);
  }
  std::printf("store (decode + apply, WAL on, no fsync, 1 thread, %zu events, median of %d runs): %.0f events/s\n", n,
              runs, median(rates));
  return 0;
}

}  // namespace engram::bench
