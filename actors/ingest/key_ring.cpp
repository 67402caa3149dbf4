#include "actors/ingest/key_ring.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/topics.hpp"
#include "logging/log.hpp"

#include <spdlog/spdlog.h>

#include <set>

namespace engram::ingest {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::kafka); }
constexpr int max_idle_polls = 20;  // of 250 ms each
}  // namespace

std::map<std::string, std::string> key_topic_settings() {
  return {{"cleanup.policy", "compact"},
          {"retention.ms", "-1"},
          {"delete.retention.ms", "86400000"},
          {"min.compaction.lag.ms", "0"}};
}

struct key_ring::impl {
  std::string topic;
  std::map<std::string, std::string> keys;
  /// Names whose tombstone was read: forgotten, known without asking the broker again.
  std::set<std::string> deleted;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<kafka_producer> producer;
  /// partition -> next offset read.
  std::map<std::int32_t, std::int64_t> next;
};

key_ring::~key_ring() {
  if (impl_ && impl_->consumer)
    impl_->consumer->close();
}

engram::result<std::shared_ptr<key_ring>> key_ring::open(const std::string& brokers,
                                                         const std::map<std::string, std::string>& rdkafka,
                                                         const std::string& topic, bool create) {
  if (create) {
    // One partition: keys are few and small, and a forget's tombstones then keep their order.
    auto made = create_topic(brokers, rdkafka, topic, 1, key_topic_settings());
    if (!made)
      return engram::fail("kafka.topics.keys: cannot create the key topic: " + made.error());
    if (*made == topic_created::created)
      logger().info("key topic {}: created, compacted (cleanup.policy=compact)", topic);
    else if (*made == topic_created::created_plain)
      logger().warn(
          "key topic {}: created plain on the test broker (librdkafka's mock cluster cannot make a "
          "compacted topic; a real broker gets cleanup.policy=compact)",
          topic);
  }
  auto ranges = partition_ranges(brokers, {topic});
  if (!ranges || ranges->empty())
    return engram::fail("kafka.topics.keys: the key topic '" + topic +
                        "' is missing or does not answer (create it compacted: cleanup.policy=compact, or let "
                        "engramd create it: kafka.create_key_topic; docs/forgetting.md)" +
                        (ranges ? std::string() : ": " + ranges.error()));
  std::shared_ptr<key_ring> ring(new key_ring());
  ring->impl_ = std::make_unique<impl>();
  auto& m = *ring->impl_;
  m.topic = topic;
  for (const auto& r : *ranges)
    m.next[r.partition] = r.start;
  // Its fetches wait at most 10 ms: the watermark requests of a catch-up queue behind them.
  auto consumer = detail::make_reader(brokers, rdkafka, "engram-keys-reader", topic, m.next, "earliest", "key topic");
  if (!consumer)
    return engram::fail(consumer.error());
  m.consumer = std::move(*consumer);
  auto producer = kafka_producer::create(brokers, rdkafka);
  if (!producer)
    return engram::fail(producer.error());
  m.producer = std::move(*producer);
  std::lock_guard lock(ring->mutex_);
  if (!ring->catch_up())
    return engram::fail("key topic '" + topic + "': not read to its end (the broker does not answer)");
  logger().info("key topic {}: {} keys", topic, m.keys.size());
  return ring;
}

bool key_ring::catch_up() {
  auto& m = *impl_;
  std::map<std::int32_t, std::int64_t> end;
  for (const auto& [p, next] : m.next) {
    std::int64_t lo = 0, hi = 0;
    if (m.consumer->query_watermark_offsets(m.topic, p, &lo, &hi, 5000) != RdKafka::ERR_NO_ERROR)
      return false;
    if (hi > next)
      end[p] = hi;
  }
  int idle = 0;
  while (!end.empty()) {
    std::unique_ptr<RdKafka::Message> msg(m.consumer->consume(250));
    if (msg->err() == RdKafka::ERR__TIMED_OUT) {
      if (++idle >= max_idle_polls)
        return false;
      continue;
    }
    if (msg->err() != RdKafka::ERR_NO_ERROR) {
      logger().warn("key topic {}: {}", m.topic, msg->errstr());
      if (++idle >= max_idle_polls)
        return false;
      continue;
    }
    idle = 0;
    if (msg->key()) {
      if (msg->payload()) {
        m.keys[*msg->key()] = std::string(static_cast<const char*>(msg->payload()), msg->len());
        m.deleted.erase(*msg->key());
      } else {
        m.keys.erase(*msg->key());
        m.deleted.insert(*msg->key());
      }
    }
    m.next[msg->partition()] = msg->offset() + 1;
    if (auto it = end.find(msg->partition()); it != end.end() && msg->offset() + 1 >= it->second)
      end.erase(it);
  }
  return true;
}

std::optional<std::string> key_ring::get(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& keys = impl_->keys;
  if (auto it = keys.find(name); it != keys.end())
    return it->second;
  if (impl_->deleted.count(name))
    return std::nullopt;
  if (!catch_up())
    logger().warn("key topic {}: not read to its end while looking for a key", impl_->topic);
  if (auto it = keys.find(name); it != keys.end())
    return it->second;
  return std::nullopt;
}

engram::result<void> key_ring::put(const std::vector<std::pair<std::string, data_key>>& keys) {
  std::lock_guard lock(mutex_);
  auto& m = *impl_;
  for (const auto& [name, key] : keys)
    if (!m.producer->produce(m.topic, name, key.bytes))
      return engram::fail(m.producer->last_error());
  if (!m.producer->flush(std::chrono::seconds(30)))
    return engram::fail("keys not acknowledged by " + m.topic + ": " + m.producer->last_error());
  for (const auto& [name, key] : keys)
    m.keys[name] = key.bytes;
  return {};
}

engram::result<std::size_t> key_ring::shred(const std::string& org, const std::vector<std::string>& events) {
  std::lock_guard lock(mutex_);
  auto& m = *impl_;
  (void)catch_up();  // keys another engramd wrote
  std::vector<std::string> names;
  auto collect = [&](const std::string& prefix) {
    for (auto it = m.keys.lower_bound(prefix); it != m.keys.end() && it->first.starts_with(prefix); ++it)
      names.push_back(it->first);
  };
  if (events.empty())
    collect(org + "/");
  for (const auto& e : events)
    collect(org + "/" + e + "/");
  for (const auto& name : names)
    if (!m.producer->produce(m.topic, name, std::string_view{}))  // no value: a tombstone
      return engram::fail(m.producer->last_error());
  if (!names.empty() && !m.producer->flush(std::chrono::seconds(30)))
    return engram::fail("tombstones not acknowledged by " + m.topic + ": " + m.producer->last_error());
  for (const auto& name : names) {
    m.keys.erase(name);
    m.deleted.insert(name);
  }
  return names.size();
}

std::size_t key_ring::size() const {
  std::lock_guard lock(mutex_);
  return impl_->keys.size();
}

}  // namespace engram::ingest
