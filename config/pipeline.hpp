#pragma once
// What this engramd process does (roles), where its store lives (storage) and how it takes
// inbound events in (ingest): the roles, storage and ingest sections of engram.yaml.

#include <cstdint>
#include <string>
#include <vector>

namespace engram::config {

/// What this engramd process does (docs/architecture.md). `extract`: reads inbound-messages,
/// extracts and embeds, appends to engram-log (the sequencer). `store`: consumes
/// engram-log and applies it to the store, and serves MCP and the timers. Several
/// `extract` processes may share the inbound partitions (one consumer group); each store
/// stays the single writer of its data. Default: both.
struct roles_config {
  bool extract = true;
  bool store = true;
};

struct storage_config {
  /// RocksDB directory. Default: "./data/engram".
  std::string path = "./data/engram";
  /// RocksDB's memory in MiB: one block cache (data, index and filter blocks) that the
  /// memtables of every column family are charged to; they are flushed past half of it.
  /// Default: 32.
  std::uint32_t memory_mb = 32;
};

struct ingest_config {
  /// Larger inbound events go to the dead-letter topic. Default: 1 MiB.
  std::uint64_t max_event_bytes = 1048576;
  /// Most records the engram-log consumer hands to the pipeline at once (and the most
  /// inbound messages the extract stage takes at once). Default: 500.
  std::uint32_t batch_size = 500;
  /// Threads the extract stage reads messages on (each message on one; order kept).
  /// 0: one per core. Default: 0.
  std::uint32_t extract_threads = 0;
  /// The extract stage commits what it appended at least this often within a large batch
  /// (and stops between chunks of 32 messages on SIGTERM). Default: 1,000 ms.
  std::uint32_t batch_ms = 1000;
  /// Partitions whose lost records an operator accepts, as "topic:partition" (e.g.
  /// "engram-log:3"). When records a partition still needs were deleted from the broker
  /// (retention, a full test broker), engramd stops reading that partition and is not ready;
  /// a partition named here instead resumes at the oldest record left, and the gap is recorded
  /// in the store and shown in /v1/stats. Default: none (a gap is never jumped by default).
  std::vector<std::string> accept_gaps;
  /// True when `accept_gaps` names this partition of `topic`.
  [[nodiscard]] bool accepts_gap(const std::string& topic, std::int32_t partition) const;
};

}  // namespace engram::config
