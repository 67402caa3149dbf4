#pragma once
// The message that flows from the engram-log consumer to the store (where dedup and
// contradiction run just before each record is applied), and the handle the store shares.
//
// Order: CAF delivers messages between two actors in the order they were sent, each applier
// handles one batch at a time, and every record of a partition goes to the same applier
// (store_router), so per-partition order of engram-log holds end to end.

#include "schemas/log_record.hpp"
#include "storage/graph_store.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/typed_actor.hpp>
#include <caf/replies_to.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace engram::actors {

/// One engram-log record on its way to the store: decoded (schemas/log_record.hpp) and read
/// (the consumer reads the few records that carry no reading: reading/read.hpp read_unread),
/// so the store applies it as it is.
struct log_record {
  storage::log_position position;
  /// Empty when the record could not be decoded: the store only advances the offset.
  std::optional<schemas::log_payload> payload;
  /// Why `payload` is empty.
  std::string rejection;
  /// When the consumer received it (apply-latency metric; never stored).
  std::chrono::steady_clock::time_point received_at;
};

/// What the store reports for one batch.
struct batch_result {
  storage::errc error = storage::errc::ok;
  /// Records handled before `error` (all of them on success), in order.
  std::size_t done = 0;
  std::size_t applied = 0;
  std::size_t duplicates = 0;
  std::size_t skipped = 0;
  /// The applier that had (part of) the batch stopped before it reported: nothing after the
  /// stored offsets is known to be applied (store_watch says why).
  bool stopped = false;
};

/// What a batch's future says: the store's result, or `stopped` when its promise was never
/// kept (the applier that had it stopped first).
inline batch_result result_of(std::future<batch_result>& f) {
  try {
    return f.get();
  } catch (const std::future_error&) {
    batch_result r;
    r.stopped = true;
    return r;
  }
}

/// A clustered member lets an engram-log partition go (docs/scaling-out.md): sent to the
/// store stage in place of records, so it runs between batches, never during one.
struct partition_drop {
  std::string topic;
  std::int32_t partition = 0;
  /// Whether an organisation is of that partition.
  std::function<bool(const std::string&)> belongs;
  /// Asked on the store's thread first: false (the partition came back, or is followed as a
  /// standby now), nothing is dropped.
  std::function<bool()> still_gone;
};

/// The parts of one batch that several appliers apply (each its partitions' records): the
/// batch's promise is fulfilled once the last part reports, with the parts' counts summed and
/// the first error met kept.
class batch_join {
public:
  batch_join(std::shared_ptr<std::promise<batch_result>> done, std::size_t parts)
      : done_(std::move(done)), remaining_(parts) {}
  void report(const batch_result& r) {
    std::lock_guard lock(mutex_);
    if (merged_.error == storage::errc::ok)
      merged_.error = r.error;
    merged_.done += r.done;
    merged_.applied += r.applied;
    merged_.duplicates += r.duplicates;
    merged_.skipped += r.skipped;
    if (--remaining_ == 0)
      done_->set_value(merged_);
  }

private:
  std::shared_ptr<std::promise<batch_result>> done_;
  std::mutex mutex_;
  std::size_t remaining_;
  batch_result merged_;
};

/// A batch of consecutive engram-log records. The store fulfils `done` once every record
/// is durable (or at the first failure, or once `let_go` is set). With `drop` set, no
/// records: the store drops that partition's state instead (`done` counts the organisations
/// dropped; `skipped` is 1 when the partition was no longer gone). With `join` set, it is one
/// applier's part of a batch: the part reports there instead (complete()).
struct event_batch {
  std::vector<log_record> records;
  std::shared_ptr<std::promise<batch_result>> done;
  std::optional<partition_drop> drop = std::nullopt;
  std::shared_ptr<batch_join> join = nullptr;
  /// Set by the consumer when its partitions are revoked: the applier finishes the record in
  /// hand and reports the rest not done (`done` < records; their next owner applies them
  /// from the stored offsets). Null: every record is applied.
  std::shared_ptr<const std::atomic<bool>> let_go = nullptr;
};

/// Fulfils the batch with `r`: its promise, or its part of a joined batch.
inline void complete(event_batch& b, const batch_result& r) {
  if (b.join)
    b.join->report(r);
  else
    b.done->set_value(r);
}

}  // namespace engram::actors

// Local-only message: it carries pointers and a promise, and never crosses a process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(engram::actors::event_batch)

namespace engram::actors {

/// engram-log read back, as the consumer reads it: a forget of messages rebuilds its
/// organisation by applying its earlier records again (actors/store/store_writer.cpp).
class log_source {
public:
  log_source() = default;
  log_source(const log_source&) = delete;
  log_source& operator=(const log_source&) = delete;
  virtual ~log_source() = default;
  /// Why the records at offsets [0, end) of `partition` cannot all be read (the oldest were
  /// deleted, the broker does not answer); "" when they can.
  [[nodiscard]] virtual std::string check(std::int32_t partition, std::int64_t end) = 0;
  /// Calls `each` with the records at offsets [0, end) of `partition` in order, decoded and
  /// read (reading::read_unread) as the consumer does. Stops at the first error `each`
  /// returns (returned), or with io_error when the log cannot be read (logged).
  [[nodiscard]] virtual storage::errc read(std::int32_t partition, std::int64_t end,
                                           const std::function<storage::errc(log_record&)>& each) = 0;
};

/// The store takes a batch and applies it.
using stage_actor = caf::typed_actor<caf::reacts_to<event_batch>>;

}  // namespace engram::actors
