#pragma once
// A clustered store member letting go of what it no longer owns (docs/scaling-out.md): a
// partition held in this member's store (it has a stored position) that the group no longer
// assigns here and that this member does not follow as a standby is dropped once it stayed so
// for store.drop_after_ms: its position first, then each of its organisations, on the store
// stage between batches. Were it assigned here again, it is restored from engram-log.
//
// Never while an assignment is under way: the consumer reads the stored positions of the
// partitions it is given before it marks them owned, so an assignment waits for a drop in
// progress (assigning()) and a drop waits for the assignment to finish (assigned()).
//
// It looks every second as a periodic actor (actors/common/periodic.hpp, supervised by the
// engine). After the drops of one look, the key ranges of the organisations dropped are
// compacted on that actor's thread (graph_store::compact_dropped): range tombstones left in place slow the
// reads of the organisations kept (docs/scaling-out.md has the figures).

#include "actors/common/pipeline.hpp"
#include "actors/common/status.hpp"
#include "actors/ingest/log_consumer.hpp"
#include "storage/graph_store.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace engram::engine {

struct janitor_options {
  /// engram-log's name.
  std::string topic;
  /// store.drop_after_ms (0: never).
  std::chrono::milliseconds after{300000};
  /// An organisation's partition.
  std::function<std::int32_t(const std::string&)> partition_of;
  /// The partitions this member should follow as a standby (cluster::standby_wanted).
  std::function<std::set<std::int32_t>()> standby_wanted;
};

class janitor {
public:
  janitor(janitor_options opts, std::shared_ptr<storage::graph_store> store, actors::stage_actor store_actor,
          actors::ingest_status& status, ingest::log_follower* follower);
  ~janitor();
  janitor(const janitor&) = delete;
  janitor& operator=(const janitor&) = delete;

  /// Finishes drops a crash interrupted: organisations held whose partition has no stored
  /// position (a partition's position goes first). Before the consumer starts; how many.
  [[nodiscard]] engram::result<std::size_t> finish_interrupted();
  /// Whether it ever drops (store.drop_after_ms > 0): else no actor need look.
  [[nodiscard]] bool enabled() const { return opts_.after.count() > 0; }
  /// One look: drops what waited long enough (the janitor actor's work, every second).
  void sweep();
  /// Ends a look under way early (its compaction is cancelled) and makes every later one
  /// do nothing: before the actor is stopped.
  void stop();

  /// The consumer's hooks: an assignment begins (waits while a drop runs), and ended.
  void assigning();
  void assigned();

  /// Partitions held here that wait to be dropped (neither owned nor followed).
  [[nodiscard]] std::vector<std::int32_t> waiting() const;
  /// Partitions dropped since start.
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }
  /// Compactions of dropped organisations' key ranges finished since start.
  [[nodiscard]] std::uint64_t compacted() const { return compacted_; }

private:
  [[nodiscard]] bool stop_requested() const { return stopping_; }
  /// Drops `partition` on the store stage; false when it was skipped (it came back).
  engram::result<bool> drop(std::int32_t partition, std::function<bool()> still_gone);

  janitor_options opts_;
  std::shared_ptr<storage::graph_store> store_;
  actors::stage_actor store_actor_;
  actors::ingest_status& status_;
  ingest::log_follower* follower_;
  /// Held by a drop, and by an assignment while it is under way.
  std::mutex drop_mutex_;
  bool assigning_ = false;
  /// Since when each held partition has been neither owned nor followed (this thread's).
  std::map<std::int32_t, std::chrono::steady_clock::time_point> since_;
  mutable std::mutex waiting_mutex_;
  std::vector<std::int32_t> waiting_;
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> compacted_{0};
  /// Set by stop(): a compaction of dropped ranges under way ends early.
  std::atomic<bool> cancel_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace engram::engine
