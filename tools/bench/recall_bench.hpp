#pragma once
// Benchmark of recall_knowledge and save_knowledge over MCP/HTTP on loopback against an
// engine whose organisation holds N entries: latency of recalls (whole held-out sentences
// and query-sized texts), recalls/s with two clients, the in-process parts of a recall (BM25,
// query embedding), save round trips, the engine's start and the resident memory it added.
// It prints figures; nothing here asserts a speed.

#include <cstddef>
#include <string>

namespace engram::bench {

/// What bench_recall measured (milliseconds unless named otherwise).
struct recall_figures {
  std::size_t entries = 0;
  double recall_p50 = 0, recall_p99 = 0, recalls_per_s = 0;
  double short_p50 = 0, short_p99 = 0;  // query-sized texts
  double text_p50 = 0, embed_p50 = 0;
  double save_p50 = 0, save_p99 = 0;
  double open_s = 0;
  /// Resident memory the engine added: start (store opened, index rebuilt) plus the recalls.
  std::size_t engine_rss = 0;
};

/// recall_knowledge and save_knowledge over HTTP on loopback against an engine whose
/// organisation holds `n` entries. Entries: the ham corpus's extracted sentences with real
/// USE Lite vectors (the model at `model_path`); beyond those, the same sentences numbered,
/// with their vectors moved by a little noise (a realistic spread for the index at 100k
/// without 100k encoder runs). `queries` distinct held-out sentences are recalled (at most
/// 1,000), `saves` saves timed.
recall_figures bench_recall(const std::string& model_path, const std::string& data_dir, std::size_t n,
                            std::size_t queries, std::size_t saves = 100);

}  // namespace engram::bench
