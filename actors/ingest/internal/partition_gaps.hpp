#pragma once
// What both readers of a topic (the sequencer on the inbound topic, the log consumer on
// engram-log) do with a partition whose next record the broker no longer holds, written once:
// the gap is decided (gaps.hpp: accepted, reading goes on at the oldest record kept; else the
// partition stops, paused, and the others go on), when the group assigns the partition and
// when an offset reset error is met while reading it.

#include "actors/ingest/gaps.hpp"

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace engram::ingest::detail {

class partition_gaps {
public:
  partition_gaps() = default;
  /// `who`: the logger (and the reader's name in what it logs).
  partition_gaps(std::string topic, const char* who) : topic_(std::move(topic)), who_(who) {}

  /// A new assignment (or a revocation): nothing is stopped.
  void clear() { stopped_.clear(); }
  /// True when `partition` is stopped at an open gap.
  [[nodiscard]] bool stopped(std::int32_t partition) const { return stopped_.count(partition) > 0; }

  /// Where to read `partition` from when the next record needed is `needed` and the broker
  /// holds `marks` (oldest, high-water mark; nullopt: not known): `needed`, or the gap's end
  /// when the gap before the oldest record is accepted; nullopt when the partition stops.
  [[nodiscard]] std::optional<std::int64_t> start_at(std::int32_t partition, std::int64_t needed,
                                                     const std::optional<std::pair<std::int64_t, std::int64_t>>& marks,
                                                     const gap_handling& h);

  /// Pauses every stopped partition (an assignment resumes every partition).
  void pause_stopped(RdKafka::KafkaConsumer& c) const;

  /// An offset reset error met while reading `partition`: the record `from` is gone. Decides
  /// the gap, then assigns `offsets` (partition -> next offset; negative: the oldest record
  /// kept) again, `partition` where it reads on, and pauses the stopped ones. Returns where
  /// `partition` reads on (the gap's end when accepted), or nullopt when it stopped (at `from`).
  std::optional<std::int64_t> reset(RdKafka::KafkaConsumer& c, std::int32_t partition, std::int64_t from,
                                    std::map<std::int32_t, std::int64_t> offsets, const gap_handling& h);

private:
  std::string topic_;
  const char* who_ = "ingest";
  std::set<std::int32_t> stopped_;
};

}  // namespace engram::ingest::detail
