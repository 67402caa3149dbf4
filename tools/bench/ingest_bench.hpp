#pragma once
// Benchmarks of ingest through one engine on an in-process Kafka-protocol broker:
// engram-log -> RocksDB, and inbound-messages -> sequencer -> engram-log -> RocksDB, on
// synthetic events and on the SpamAssassin ham corpus; for the corpus, a replay of
// engram-log into a new store as well. They print figures; nothing here asserts a speed.

#include <cstddef>
#include <cstdint>
#include <string>

namespace engram::bench {

/// What bench_ingest_ham measured.
struct ham_ingest_figures {
  std::size_t messages = 0;                             // per phase
  double log_to_store = 0, end_to_end = 0, replay = 0;  // medians
  std::int64_t replayed = 0;
  /// Texts the encoder computed a message end to end (median), and the encoder's own limit
  /// for them (messages/s over every core).
  double encoded_per_message = 0, encoder_limit = 0;
};

/// The pipeline (rules extraction, USE Lite embeddings at `model_path`, dedup and
/// contradiction) on `n` synthetic events a phase: those already on engram-log into
/// RocksDB, then others through inbound-messages, the sequencer and engram-log. Each of
/// `runs` runs on a new broker and store; prints every run and the medians.
int bench_ingest(const std::string& model_path, std::size_t n, int runs);

/// End to end on real mail: the ham corpus through inbound-messages, the sequencer,
/// engram-log, extraction, embeddings, dedup and contradiction into RocksDB; then a replay
/// of the resulting engram-log into a new store. `limit` messages a phase at most.
ham_ingest_figures bench_ingest_ham(const std::string& model_path, const std::string& data_dir, int runs,
                                    std::size_t limit);

}  // namespace engram::bench
