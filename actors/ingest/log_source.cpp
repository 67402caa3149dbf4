#include "actors/ingest/log_source.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/internal/records.hpp"
#include "logging/log.hpp"

#include <spdlog/spdlog.h>

namespace engram::ingest {

namespace {

spdlog::logger& logger() { return logging::get(logging::module::store); }

/// Messages waited for in a row before the broker counts as not answering (1 s each).
constexpr int max_idle_polls = 30;
/// Records read before each reading and hand-over.
constexpr std::size_t batch = 256;

class kafka_log_source final : public actors::log_source {
public:
  kafka_log_source(const config::engram_config& cfg, std::string brokers, reading::reader_context reader,
                   bool re_extract, std::shared_ptr<key_ring> keys)
      : topic_(cfg.kafka.topics.log),
        brokers_(std::move(brokers)),
        user_(cfg.kafka.rdkafka),
        group_(cfg.kafka.group_id + "-rebuild"),
        limits_{cfg.ingest.max_event_bytes},
        reader_(std::move(reader)),
        re_extract_(re_extract),
        keys_(std::move(keys)) {}

  std::string check(std::int32_t partition, std::int64_t end) override {
    auto consumer = make(partition);
    if (!consumer)
      return consumer.error();
    auto marks = detail::watermarks(**consumer, topic_, partition, "store");
    (*consumer)->close();
    if (!marks)
      return topic_ + "/" + std::to_string(partition) +
             " does not answer: the records before the forget cannot be read";
    if (marks->first > 0)
      return topic_ + "/" + std::to_string(partition) + " starts at offset " + std::to_string(marks->first) +
             ": the records before it were deleted, so the organisation cannot be rebuilt without them";
    if (marks->second < end)
      return topic_ + "/" + std::to_string(partition) + " ends at offset " + std::to_string(marks->second) +
             ", before " + std::to_string(end);
    return {};
  }

  storage::errc read(std::int32_t partition, std::int64_t end,
                     const std::function<storage::errc(actors::log_record&)>& each) override {
    auto consumer = make(partition);
    if (!consumer) {
      logger().error("rebuild: {}", consumer.error());
      return storage::errc::io_error;
    }
    std::vector<actors::log_record> records;
    auto hand_over = [&]() -> storage::errc {
      std::vector<schemas::log_payload*> payloads;
      for (auto& rec : records)
        if (rec.payload)
          payloads.push_back(&*rec.payload);
      reading::read_unread(payloads, reader_, re_extract_);
      for (auto& rec : records)
        if (auto e = each(rec); e != storage::errc::ok)
          return e;
      records.clear();
      return storage::errc::ok;
    };
    std::int64_t next = 0;
    int idle = 0;
    auto e = storage::errc::ok;
    while (next < end && e == storage::errc::ok) {
      std::unique_ptr<RdKafka::Message> msg((*consumer)->consume(1000));
      if (msg->err() == RdKafka::ERR__TIMED_OUT) {
        if (++idle < max_idle_polls)
          continue;
        logger().error("rebuild: {}/{} gave nothing for {} s at offset {} (reading up to {})", topic_, partition,
                       max_idle_polls, next, end);
        e = storage::errc::io_error;
        break;
      }
      if (msg->err() != RdKafka::ERR_NO_ERROR) {
        logger().error("rebuild: {}/{} at offset {}: {}", topic_, partition, next, msg->errstr());
        e = storage::errc::io_error;
        break;
      }
      idle = 0;
      if (msg->offset() >= end)
        break;
      next = msg->offset() + 1;
      actors::log_record rec;
      rec.position = storage::log_position{topic_, partition, msg->offset(), {}};
      auto read = detail::read_log_record(*msg, limits_, keys_.get());
      rec.payload = std::move(read.payload);
      rec.rejection = std::move(read.rejection);
      records.push_back(std::move(rec));
      if (records.size() >= batch || next >= end)
        e = hand_over();
    }
    if (e == storage::errc::ok && !records.empty())
      e = hand_over();
    (*consumer)->close();
    return e;
  }

private:
  engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> make(std::int32_t partition) const {
    return detail::make_reader(brokers_, user_, group_, topic_, {{partition, 0}}, "error", "rebuild");
  }

  std::string topic_;
  std::string brokers_;
  detail::properties user_;
  std::string group_;
  schemas::decode_limits limits_;
  reading::reader_context reader_;
  bool re_extract_;
  std::shared_ptr<key_ring> keys_;
};

}  // namespace

std::shared_ptr<actors::log_source> make_log_source(const config::engram_config& cfg, const std::string& brokers,
                                                    reading::reader_context reader, bool re_extract,
                                                    std::shared_ptr<key_ring> keys) {
  return std::make_shared<kafka_log_source>(cfg, brokers, std::move(reader), re_extract, std::move(keys));
}

}  // namespace engram::ingest
