#pragma once
// Benchmark of the store alone: synthetic inbound events decoded and applied to RocksDB, one
// WriteBatch per event, without Kafka or the pipeline. It prints figures; nothing here
// asserts a speed.

#include <cstddef>

namespace engram::bench {

/// Events/s of decode + apply on one thread over `n` synthetic events, each of `runs` runs on
/// a new store; prints every run and their median.
int bench_store(std::size_t n, int runs);

}  // namespace engram::bench
