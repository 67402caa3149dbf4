#pragma once
// What this engramd process does (roles), where its store lives (storage) and how it takes
// inbound events in (ingest): the roles, storage and ingest sections of engram.yaml.

#include "config/kafka.hpp"

#include <cstdint>
#include <optional>
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
  /// The snapshots of the derived indexes (dedup's vectors, the store's postings and passage
  /// vectors) are written again once this many batches that changed them were journaled
  /// since the last: what an open after a crash indexes again is at most that many
  /// messages' worth. 0: only at a stop. Default: 5000.
  std::uint64_t snapshot_every = 5000;
};

/// Several store engramd sharing the organisations (docs/scaling-out.md): the `store`
/// section of engram.yaml.
struct store_config {
  /// True: this member owns only the engram-log partitions the consumer group assigns it
  /// (the organisations keyed to them), answers "retry after N s" for an organisation whose
  /// partition it is still restoring, and forwards requests for organisations another
  /// member owns. Needs a real broker address (several processes share one group). Default:
  /// false (one store holds every organisation).
  bool cluster = false;
  /// The base URL other members forward requests to ("http://host:port"); required when
  /// clustered. Port 0 ("http://host:0") is the port http.listen bound (one the kernel chose
  /// when http.listen's port is 0 too). Default: none.
  std::string advertised_url;
  /// This member's key on the members topic (kafka.topics.members). Default: the
  /// advertised URL.
  std::string member_name;
  /// How often a member republishes its record on the members topic; a record older than
  /// three of these is a member gone. Default: 2,000 ms.
  std::uint32_t heartbeat_ms = 2000;
  /// How long a forwarded request may take before the caller gets "retry". Default: 30,000 ms.
  std::uint32_t forward_timeout_ms = 30000;
  /// Warm standbys per partition: the next this many live members after a partition's owner
  /// (by member name) follow it into their stores, so that taking it over is a catch-up.
  /// Default: 0.
  std::uint32_t standby_replicas = 0;
  /// How long a partition this member holds state of but neither owns nor follows as a
  /// standby stays in its store before it is dropped (its organisations deleted: restored
  /// from engram-log if the partition comes back). Counted from when it was last owned or
  /// followed, only once the member has joined the group; longer than a rebalance takes.
  /// 0: never dropped. Default: 300,000 ms.
  std::uint32_t drop_after_ms = 300000;
  /// How many store appliers apply engram-log at once (1 to 64): partition p goes to applier
  /// p mod appliers, each applies its partitions' records in order, one at a time. The same
  /// log gives the same store whatever the number. Default: 1.
  std::uint32_t appliers = 1;
  /// The member's name: member_name, else advertised_url.
  [[nodiscard]] std::string name() const { return member_name.empty() ? advertised_url : member_name; }
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

/// With store.cluster: a shared broker and an advertised http:// URL; or the problem.
[[nodiscard]] std::optional<std::string> validate(const store_config& store, const kafka_config& kafka);

}  // namespace engram::config
