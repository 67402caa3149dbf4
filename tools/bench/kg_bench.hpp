#pragma once
// Benchmark of knowledge bundles: `engramctl kg apply` of a generated bundle of
// N entities against engramd (a child process on an in-process Kafka-protocol broker), then
// list_<type> with filters and get_<type> over MCP/HTTP. Figures only; nothing asserts a speed.

#include <cstddef>
#include <string>

namespace engram::bench {

struct kg_bench_options {
  /// Entities in the bundle (50 families, the rest parts).
  std::size_t entities = 10000;
  /// Calls per figure.
  std::size_t queries = 200;
  std::string model_path;
};

int kg(const kg_bench_options& o);

}  // namespace engram::bench
