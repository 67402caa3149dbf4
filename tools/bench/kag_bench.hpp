#pragma once
// Benchmarks of graph queries: kag_query at a generated organisation of N entries
// and M entities (people, organisations, technologies, places, their relations), with 2 and
// 3 hops; relation extraction messages/s; document ingest pages/s. Figures only.

#include <cstddef>

namespace engram::bench {

struct kag_bench_options {
  std::size_t entries = 100000, entities = 50000;
  /// Queries per figure.
  std::size_t queries = 500;
};

int kag(const kag_bench_options& o);

}  // namespace engram::bench
