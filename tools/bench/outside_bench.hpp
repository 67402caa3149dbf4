#pragma once
// engramd as an operator sees it: one organisation's store grown from dense mail to
// N entries, then engramd started on it as a child process and measured from outside: time to
// ready, whole-process RSS per entry, what RSS is made of (/metrics), recall over HTTP with
// distinct queries on one kept-alive connection (p50, p99). It prints figures; nothing here
// asserts a speed.

#include "config/pipeline.hpp"

#include <cstddef>
#include <string>

namespace engram::bench {

struct outside_options {
  std::string model_path;
  /// Entries to grow the organisation to (at least).
  std::size_t entries = 100000;
  /// Distinct recall queries, from messages that are not in the store.
  std::size_t queries = 700;
  /// storage.memory_mb of the store and of engramd (engramd's default).
  std::size_t memory_mb = config::storage_config{}.memory_mb;
  /// Where the store is built and kept ("": a temporary directory, removed at the end). A
  /// store this benchmark built there for the same `entries` is used again as it is; one
  /// built for fewer entries, or stopped short of its target, grows on from where it is
  /// (its progress is written every 100,000 entries: a million takes hours here).
  std::string store_dir;
  /// Build (or grow) the store and stop: no engramd. Exits 1 if the target was not reached.
  bool build_only = false;
  /// Then, in place of engramd, time BM25 alone in process over the store opened read-only.
  bool words_only = false;
  /// Then, in place of engramd, the HNSW search of the store's entry vectors against exact
  /// search, by candidate list (ef), for the recall queries.
  bool ef_curve = false;
};

int outside(const outside_options& o);

}  // namespace engram::bench
