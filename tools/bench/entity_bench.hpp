#pragma once
// Benchmarks of the entity graph: the reference MCP memory server and Engram side
// by side under the same workload and the same client (Python's standard library, over the
// reference's stdio or one kept-alive HTTP connection to engramd: tools/bench/memory_compare.py),
// and graph_traverse / graph_path over HTTP on a large generated graph. Figures only; nothing
// here asserts a speed.

#include <cstddef>
#include <string>

namespace engram::bench {

struct entity_bench_options {
  /// Entities (and as many relations) in the side-by-side workload.
  std::size_t memory_entities = 10000;
  /// The generated graph for traversal and paths.
  std::size_t graph_entities = 100000, graph_edges = 300000;
  /// Calls per figure.
  std::size_t queries = 200;
  std::string model_path;
  /// Run the side by side (needs Node and tools/dev.sh setup's .cache/node).
  bool side_by_side = true;
};

int entities(const entity_bench_options& o);

}  // namespace engram::bench
