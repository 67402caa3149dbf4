#pragma once
// The sequencer, the extract stage: reads inbound-messages in its own consumer group,
// validates each event, reads it (extraction and embedding, through `extract`) and appends
// it with what was read to engram-log (an extracted-message record, key = organizationId),
// or sends it to the dead-letter topic with the reason. The inbound offset is committed only
// after the appends are acknowledged (acks=all), so an event is forwarded at least once; a
// duplicate on engram-log is a no-op when applied (the store knows every eventId).
//
// A batch is handled in chunks of at most `chunk` messages; a stop request is honoured
// between chunks: what was appended is committed, the rest is read again by whoever
// consumes the partition next.
//
// Several engramd processes may run it in the same consumer group: each partition of
// inbound-messages is read by one of them, in order, and every partition of engram-log
// still has one writer of the store (config `roles`).

#include "services/metrics.hpp"
#include "actors/ingest/gaps.hpp"
#include "actors/ingest/key_ring.hpp"
#include "config/config.hpp"
#include "schemas/knowledge.hpp"
#include "base/result.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>

namespace engram::ingest {

/// The header carrying the dead-letter reason ("field: reason").
inline constexpr const char* reason_header = "reason";

struct sequencer_options {
  /// Reads valid messages, in order, into what each record carries (one extraction per
  /// message, vectors included). It may return early, incomplete, once the stop flag it is
  /// given turns true: the sequencer then drops the chunk, and it is read again. Unset: each
  /// message is appended alone (format 1) and read when applied.
  std::function<std::vector<schemas::extraction>(std::span<const schemas::inbound_message>,
                                                 const std::atomic<bool>& stop)>
      extract;
  /// The encoder's name, written into each record (for people reading the log).
  std::string embedder;
  /// Messages read and appended between two checks of a stop request (extract also checks
  /// between messages, and a chunk stopped there is dropped whole).
  std::size_t chunk = 32;
  /// Records deleted from inbound-messages before they were forwarded: the partition stops
  /// at such a gap unless `gaps` accepts it (then its offset is committed past it). A
  /// partition the group never committed starts at the oldest record kept (no gap: Engram
  /// had not read that topic before). `gaps.registry` null: a registry of the sequencer's own.
  gap_handling gaps;
  /// Test seam: called after a batch's appends are acknowledged and before the inbound
  /// offsets are committed. Returning false stops the sequencer right there, without
  /// committing, the way a crash at that moment would.
  std::function<bool()> before_commit;
  /// Seals each message's record with a data key of its own, written here first (null: records
  /// go to engram-log in clear, as earlier releases wrote them).
  std::shared_ptr<key_ring> keys;
};

class sequencer {
public:
  /// Starts the consumer thread. An error when a client cannot be made.
  [[nodiscard]] static engram::result<std::unique_ptr<sequencer>> start(const config::engram_config& cfg,
                                                                        const std::string& brokers,
                                                                        services::metrics& metrics,
                                                                        sequencer_options opts);
  ~sequencer();
  /// Stops the thread after its current chunk; leaves the consumer group.
  void stop();
  /// True while the thread runs.
  [[nodiscard]] bool running() const { return running_; }

private:
  sequencer() = default;
  void run();
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace engram::ingest
