#include "actors/ingest/members.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/key_ring.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/topics.hpp"
#include "logging/log.hpp"

#include <librdkafka/rdkafka.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace engram::ingest {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::kafka); }
using json = nlohmann::json;
using steady = std::chrono::steady_clock;
}  // namespace

std::int32_t partition_of(std::string_view organization, std::int32_t partitions) {
  // The partitioner never reads its topic or opaque arguments.
  return rd_kafka_msg_partitioner_consistent_random(nullptr, organization.data(), organization.size(), partitions,
                                                    nullptr, nullptr);
}

std::string member_record::to_json() const {
  auto by_partition = [](const std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>>& m, const char* second) {
    json out = json::object();
    for (const auto& [p, at] : m)
      out[std::to_string(p)] = {{"applied", at.first}, {second, at.second}};
    return out;
  };
  return json{{"member", name},
              {"url", url},
              {"seq", seq},
              {"owned", owned},
              {"ready", ready},
              {"progress", by_partition(progress, "target")},
              {"standby", by_partition(standby, "highWatermark")}}
      .dump();
}

std::optional<member_record> member_record::parse(std::string_view text) {
  auto j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("member") || !j["member"].is_string() || !j.contains("url") ||
      !j["url"].is_string())
    return std::nullopt;
  member_record r;
  r.name = j["member"].get<std::string>();
  r.url = j["url"].get<std::string>();
  r.seq = j.value("seq", std::uint64_t{0});
  auto ints = [&](const char* field, std::vector<std::int32_t>& out) {
    if (j.contains(field) && j[field].is_array())
      for (const auto& v : j[field])
        if (v.is_number_integer())
          out.push_back(v.get<std::int32_t>());
  };
  ints("owned", r.owned);
  ints("ready", r.ready);
  auto by_partition = [&](const char* field, const char* second,
                          std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>>& out) {
    if (j.contains(field) && j[field].is_object())
      for (const auto& [k, v] : j[field].items())
        if (v.is_object())
          out[std::atoi(k.c_str())] = {v.value("applied", std::int64_t{0}), v.value(second, std::int64_t{0})};
  };
  by_partition("progress", "target", r.progress);
  by_partition("standby", "highWatermark", r.standby);
  return r;
}

struct members_topic::impl {
  std::string topic;
  std::chrono::milliseconds heartbeat{2000};
  std::function<member_record()> self;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<kafka_producer> producer;
  std::mutex publish_mutex;
  std::uint64_t seq = 0;
  std::string name;

  mutable std::mutex table_mutex;
  struct heard {
    member_record record;
    steady::time_point at;
  };
  std::map<std::string, heard> table;

  std::atomic<bool> stopping{false};
  std::thread thread;

  void publish() {
    std::lock_guard lock(publish_mutex);
    auto r = self();
    r.seq = ++seq;
    name = r.name;
    auto d = producer->deliver(topic, r.name, r.to_json());
    if (!d.delivered)
      logger().warn("members topic {}: this member's record not acknowledged: {}", topic, d.error);
  }

  void take(RdKafka::Message& msg) {
    if (!msg.key())
      return;
    std::lock_guard lock(table_mutex);
    if (!msg.payload()) {  // a tombstone: the member stopped cleanly
      table.erase(*msg.key());
      return;
    }
    auto r = member_record::parse(std::string_view(static_cast<const char*>(msg.payload()), msg.len()));
    if (!r || r->name != *msg.key())
      return;
    auto& h = table[r->name];
    if (r->seq < h.record.seq && h.record.url == r->url)
      return;  // an older record of the same life, read after a newer one
    h = {std::move(*r), steady::now()};
  }

  void run() {
    auto last = steady::time_point{};
    while (!stopping) {
      if (steady::now() - last >= heartbeat) {
        publish();
        last = steady::now();
      }
      std::unique_ptr<RdKafka::Message> msg(consumer->consume(100));
      if (msg->err() == RdKafka::ERR_NO_ERROR)
        take(*msg);
    }
  }
};

engram::result<std::unique_ptr<members_topic>> members_topic::open(const std::string& brokers,
                                                                   const std::map<std::string, std::string>& rdkafka,
                                                                   const std::string& topic,
                                                                   std::chrono::milliseconds heartbeat,
                                                                   std::function<member_record()> self) {
  // Compacted like the key topic: the last record of each member is all that matters.
  auto made = create_topic(brokers, rdkafka, topic, 1, key_topic_settings());
  if (!made)
    return engram::fail("kafka.topics.members: cannot create the members topic: " + made.error());
  auto ranges = partition_ranges(brokers, {topic});
  if (!ranges || ranges->empty())
    return engram::fail("kafka.topics.members: the members topic '" + topic + "' is missing or does not answer" +
                        (ranges ? std::string() : ": " + ranges.error()));
  std::unique_ptr<members_topic> t(new members_topic());
  t->impl_ = std::make_unique<impl>();
  auto& m = *t->impl_;
  m.topic = topic;
  m.heartbeat = heartbeat;
  m.self = std::move(self);
  std::map<std::int32_t, std::int64_t> from;
  for (const auto& r : *ranges)
    from[r.partition] = r.start;
  auto consumer = detail::make_reader(brokers, rdkafka, "engram-members-reader", topic, from, "earliest", "members");
  if (!consumer)
    return engram::fail(consumer.error());
  m.consumer = std::move(*consumer);
  auto producer = kafka_producer::create(brokers, rdkafka, std::chrono::seconds(10));
  if (!producer)
    return engram::fail(producer.error());
  m.producer = std::move(*producer);
  m.thread = std::thread([p = &m] { p->run(); });
  return t;
}

members_topic::~members_topic() { stop(); }

void members_topic::publish_now() { impl_->publish(); }

std::vector<member_view> members_topic::members() const {
  std::lock_guard lock(impl_->table_mutex);
  std::vector<member_view> out;
  const auto now = steady::now();
  for (const auto& [_, h] : impl_->table) {
    auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - h.at);
    out.push_back({h.record, age, age < 3 * impl_->heartbeat});
  }
  return out;
}

std::optional<member_record> members_topic::owner_of(std::int32_t partition, const std::string& self_name) const {
  std::lock_guard lock(impl_->table_mutex);
  const auto now = steady::now();
  const impl::heard* best = nullptr;
  for (const auto& [name, h] : impl_->table) {
    if (name == self_name || now - h.at >= 3 * impl_->heartbeat)
      continue;
    if (std::find(h.record.owned.begin(), h.record.owned.end(), partition) == h.record.owned.end())
      continue;
    if (!best || h.at > best->at)
      best = &h;
  }
  if (!best)
    return std::nullopt;
  return best->record;
}

void members_topic::stop() {
  if (!impl_ || impl_->stopping.exchange(true))
    return;
  if (impl_->thread.joinable())
    impl_->thread.join();
  if (!impl_->name.empty()) {
    auto d = impl_->producer->deliver(impl_->topic, impl_->name, std::string_view());
    if (!d.delivered)
      logger().warn("members topic {}: tombstone not acknowledged: {}", impl_->topic, d.error);
  }
  impl_->consumer->close();
}

}  // namespace engram::ingest
