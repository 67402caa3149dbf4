#pragma once
// A store applier: the actor that writes the graph store for the engram-log partitions given
// to it (store.appliers of them run, partition p on applier p mod appliers: store_router).
// For each record of a batch, in order: dedup and contradiction decide what the record's
// entries are (against the store with every earlier record of its organisation applied: the
// same decisions live, after a restart and in a replay), then the store applies the record in
// its own WriteBatch (mutations, decisions and offset advance). Then the batch is complete
// (its promise, or its part of a joined batch). Every organisation is on one partition, so
// its records are applied by one applier, one at a time; what appliers share (the store's
// in-memory indexes and caches, dedup's indexes) is safe to share and holds nothing whose
// value depends on how two organisations' records interleave. Spawn it detached: RocksDB
// writes block.

#include "services/metrics.hpp"
#include "services/notifier.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/common/status.hpp"
#include "contradiction/contradiction.hpp"
#include "dedup/dedup.hpp"
#include "storage/graph_store.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace engram::actors {

/// Dedup and contradiction, as the store stage runs them.
struct resolver {
  std::unique_ptr<dedup::deduplicator> dedup;
  std::unique_ptr<contradiction::contradiction_finder> contradiction;
  /// Where the vector index snapshots are written when the stage stops and after a forget
  /// ("" = never).
  std::string snapshot_dir;
  /// With snapshot_dir: dedup's snapshots and then the store's indexes are written again once
  /// this many batches changed the store's indexes since they were (storage.snapshot_every;
  /// graph_store::checkpoint_indexes). 0: only at a stop.
  std::uint64_t snapshot_every = 0;
  /// engram-log read back, for a forget of messages (null: such a forget is refused).
  std::shared_ptr<log_source> log;
  /// Deletes the data keys of these messages of an organisation (all of its messages when the
  /// list is empty) once a forget is applied: crypto-shredding. Null: no keys.
  std::function<void(const std::string& org, const std::vector<std::string>& events)> shred;
  /// Told how long each message's and save's named steps took (dedup, contradiction, write);
  /// null: not timed.
  services::metrics* steps = nullptr;
};

struct store_writer_state {
  static inline const char* name = "store";
  std::shared_ptr<storage::graph_store> store;
  std::shared_ptr<resolver> resolve;
  services::metrics* counters = nullptr;
  /// Told each partition's next offset as soon as it is durable.
  ingest_status* status = nullptr;
  /// Told every applied event (read-your-writes for MCP saves); may be null.
  services::apply_notifier* notifier = nullptr;
  /// Its thread is named "engram-applier" (set on its first batch).
  bool named = false;
  /// What the metrics call it ("store-applier", "store-applier-1").
  std::string label;
};

stage_actor::behavior_type store_writer(stage_actor::stateful_pointer<store_writer_state> self,
                                        std::shared_ptr<storage::graph_store> store, std::shared_ptr<resolver> resolve,
                                        services::metrics* m, ingest_status* status, services::apply_notifier* notifier,
                                        std::string label);

/// Writes every organisation's vector index snapshot (resolver::snapshot_dir), once no
/// applier runs any more (engramd's stop): the next start loads them instead of rebuilding.
/// False when dedup's snapshots were due and not written (the store's are then not written
/// either: dedup trusts its snapshots as current only beside the store's).
bool save_snapshots_at_stop(const resolver& r);

/// Resolves (when `r` is given) and applies one record: a message or save through dedup
/// and contradiction, a branch save into its branch, a knowledge command (a merge applies
/// the branch's saves first). What the store stage does per record, exposed for tools and
/// tests that apply records without a pipeline. `answer` (optional) gets what a waiting
/// caller is told.
[[nodiscard]] storage::errc resolve_and_apply(storage::graph_store& store, resolver* r, const log_record& rec,
                                              storage::apply_outcome* outcome,
                                              services::applied_event* answer = nullptr);

}  // namespace engram::actors
