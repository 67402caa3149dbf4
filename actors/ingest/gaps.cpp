#include "actors/ingest/gaps.hpp"
#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/internal/partition_gaps.hpp"
#include "logging/log.hpp"

#include <spdlog/spdlog.h>

#include <string>
#include <vector>

namespace engram::ingest {

bool settle_gap(const gap_handling& h, const actors::log_gap& g, const char* who) {
  auto& log = logging::get(who);
  if (!h.accept || !h.accept(g)) {
    log.error(
        "{}: this partition stops here, the others go on (the broker's retention or size limit deleted "
        "them; {} needs every record). To go on without them: --set ingest.accept_gaps={}:{}",
        g.describe(), g.topic, g.topic, g.partition);
    h.registry->found(g);
    return false;
  }
  if (h.record && !h.record(g)) {
    log.error("{}: accepted, but the gap could not be recorded in the store: this partition stays stopped",
              g.describe());
    h.registry->found(g);
    return false;
  }
  log.error("{}: accepted by the operator; reading goes on at offset {} and the gap is recorded", g.describe(), g.to);
  h.registry->accepted(g);
  return true;
}

}  // namespace engram::ingest

namespace engram::ingest::detail {

std::optional<std::int64_t> partition_gaps::start_at(std::int32_t partition, std::int64_t needed,
                                                     const std::optional<std::pair<std::int64_t, std::int64_t>>& marks,
                                                     const gap_handling& h) {
  if (!marks || needed >= marks->first)
    return needed;
  actors::log_gap g{topic_, partition, needed, marks->first};
  if (settle_gap(h, g, who_))
    return g.to;
  stopped_.insert(partition);
  return std::nullopt;
}

void partition_gaps::pause_stopped(RdKafka::KafkaConsumer& c) const {
  if (stopped_.empty())
    return;
  std::vector<RdKafka::TopicPartition*> paused;
  for (auto p : stopped_)
    paused.push_back(RdKafka::TopicPartition::create(topic_, p));
  if (auto e = c.pause(paused); e != RdKafka::ERR_NO_ERROR)
    logging::get(who_).error("pause failed: {}", RdKafka::err2str(e));
  RdKafka::TopicPartition::destroy(paused);
}

std::optional<std::int64_t> partition_gaps::reset(RdKafka::KafkaConsumer& c, std::int32_t partition, std::int64_t from,
                                                  std::map<std::int32_t, std::int64_t> offsets, const gap_handling& h) {
  const auto marks = watermarks(c, topic_, partition, who_);
  if (!marks || from >= marks->first)
    logging::get(who_).warn("{}/{}: offset {} was reported out of range but the broker holds it ({}): reading on",
                            topic_, partition, from,
                            marks ? std::to_string(marks->first) + ".." + std::to_string(marks->second)
                                  : std::string("watermarks unknown"));
  const auto at = start_at(partition, from, marks, h);
  offsets[partition] = at.value_or(from);
  for (auto& [p, o] : offsets)
    if (o < 0)
      o = RdKafka::Topic::OFFSET_BEGINNING;
  reassign(c, topic_, offsets, who_);
  pause_stopped(c);
  return at;
}

}  // namespace engram::ingest::detail
