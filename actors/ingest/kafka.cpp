#include "actors/ingest/internal/kafka.hpp"
#include "logging/log.hpp"

#include "actors/ingest/sequencer.hpp"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace engram::ingest::detail {

namespace {

/// Property name -> 'C' (consumer only), 'P' (producer only) or '*', read once from
/// librdkafka's own table of properties.
const std::map<std::string, char>& property_scopes() {
  static const std::map<std::string, char> scopes = [] {
    std::map<std::string, char> out;
    char* buf = nullptr;
    std::size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    if (!f)
      return out;
    rd_kafka_conf_properties_show(f);
    std::fclose(f);
    std::istringstream in(std::string(buf, len));
    std::free(buf);
    std::string line;
    while (std::getline(in, line)) {
      // "name                 |  C  | range | default | importance | description"
      auto bar = line.find('|');
      if (bar == std::string::npos || bar + 4 > line.size())
        continue;
      auto name = line.substr(0, line.find(' '));
      char scope = line[bar + 3];
      if (!name.empty() && (scope == 'C' || scope == 'P' || scope == '*'))
        out.emplace(name, scope);
    }
    return out;
  }();
  return scopes;
}

/// librdkafka's log lines and error events, into the "kafka" module logger (so log.format
/// and log.levels.kafka apply to them too). Log lines come from librdkafka's threads, error
/// events from poll/consume.
class kafka_events final : public RdKafka::EventCb {
public:
  void event_cb(RdKafka::Event& event) override {
    auto& log = logging::get(logging::module::kafka);
    switch (event.type()) {
      case RdKafka::Event::EVENT_LOG: {
        const int syslog = static_cast<int>(event.severity());
        const auto level = syslog <= 3   ? spdlog::level::err
                           : syslog == 4 ? spdlog::level::warn
                           : syslog <= 6 ? spdlog::level::info
                                         : spdlog::level::debug;
        log.log(level, "{}: {}", event.fac(), event.str());
        break;
      }
      case RdKafka::Event::EVENT_ERROR:
        log.log(event.fatal() ? spdlog::level::err : spdlog::level::warn, "{}: {}", RdKafka::err2str(event.err()),
                event.str());
        break;
      default: break;
    }
  }
};

kafka_events events;

}  // namespace

engram::result<std::unique_ptr<RdKafka::Conf>> make_conf(client_role role, const std::string& brokers,
                                                         const properties& user, const properties& required) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  // The reason a property was refused, or none.
  auto set = [&](const std::string& k, const std::string& v, const char* origin) -> std::optional<std::string> {
    if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK)
      return std::string(origin) + " librdkafka property '" + k + "': " + err;
    return std::nullopt;
  };
  if (auto refused = set("bootstrap.servers", brokers, "kafka.brokers:"))
    return engram::fail(std::move(*refused));
  if (conf->set("event_cb", static_cast<RdKafka::EventCb*>(&events), err) != RdKafka::Conf::CONF_OK)
    return engram::fail("librdkafka event_cb: " + err);
  const char other = role == client_role::consumer ? 'P' : 'C';
  for (const auto& [k, v] : user) {
    if (auto it = property_scopes().find(k); it != property_scopes().end() && it->second == other)
      continue;  // meant for the other kind of client
    if (auto refused = set(k, v, "kafka.rdkafka:"))
      return engram::fail(std::move(*refused));
  }
  for (const auto& [k, v] : required)
    if (auto refused = set(k, v, "engram:"))
      return engram::fail(std::move(*refused));
  return conf;
}

namespace {

/// A consumer in `group` that commits only what it is told to and reports no partition end;
/// `offset_reset` where it has no committed offset.
engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> new_consumer(const std::string& brokers, const properties& user,
                                                                     const std::string& group, const char* offset_reset,
                                                                     RdKafka::RebalanceCb* rebalance, const char* who) {
  // Latency default (kafka.rdkafka may override it): a fetch waits at most 10 ms for data,
  // not librdkafka's 500 ms. The mock broker answers a waiting fetch only at the deadline,
  // and an agent's save waits for the pipeline to read it back (read-your-writes).
  properties tuned = user;
  tuned.emplace("fetch.wait.max.ms", "10");
  auto conf = make_conf(client_role::consumer, brokers, tuned,
                        {{"group.id", group},
                         {"enable.auto.commit", "false"},
                         {"enable.auto.offset.store", "false"},
                         {"auto.offset.reset", offset_reset},
                         {"enable.partition.eof", "false"}});
  if (!conf)
    return engram::fail(conf.error());
  std::string err;
  if (rebalance && (*conf)->set("rebalance_cb", rebalance, err) != RdKafka::Conf::CONF_OK)
    return engram::fail(std::string(who) + ": " + err);
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf->get(), err));
  if (!consumer)
    return engram::fail(std::string(who) + " consumer: " + err);
  return consumer;
}

}  // namespace

engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> make_consumer(const std::string& brokers,
                                                                      const properties& user, const std::string& group,
                                                                      const std::string& topic,
                                                                      RdKafka::RebalanceCb* rebalance,
                                                                      const char* who) {
  auto consumer = new_consumer(brokers, user, group, "error", rebalance, who);
  if (!consumer)
    return consumer;
  if (auto e = (*consumer)->subscribe({topic}); e != RdKafka::ERR_NO_ERROR)
    return engram::fail(std::string(who) + ": cannot subscribe to " + topic + ": " + RdKafka::err2str(e));
  return consumer;
}

engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> make_reader(const std::string& brokers, const properties& user,
                                                                    const std::string& group, const std::string& topic,
                                                                    const std::map<std::int32_t, std::int64_t>& offsets,
                                                                    const char* offset_reset, const char* who) {
  auto consumer = new_consumer(brokers, user, group, offset_reset, nullptr, who);
  if (!consumer)
    return consumer;
  std::vector<RdKafka::TopicPartition*> parts;
  for (const auto& [p, offset] : offsets)
    parts.push_back(RdKafka::TopicPartition::create(topic, p, offset));
  auto assigned = (*consumer)->assign(parts);
  RdKafka::TopicPartition::destroy(parts);
  if (assigned != RdKafka::ERR_NO_ERROR)
    return engram::fail(std::string(who) + ": cannot assign " + topic + ": " + RdKafka::err2str(assigned));
  return consumer;
}

std::vector<std::pair<std::string, std::string>> dead_letter_headers(const std::string& reason, std::string_view kind,
                                                                     const RdKafka::Message& msg) {
  return {{reason_header, reason},
          {"reason-kind", std::string(kind)},
          {"source-topic", msg.topic_name()},
          {"source-partition", std::to_string(msg.partition())},
          {"source-offset", std::to_string(msg.offset())}};
}

std::vector<std::unique_ptr<RdKafka::Message>> consume_batch(
    RdKafka::KafkaConsumer& consumer, std::size_t max, std::chrono::milliseconds wait, const char* who,
    std::vector<std::pair<std::int32_t, std::int64_t>>* resets) {
  std::vector<std::unique_ptr<RdKafka::Message>> out;
  int timeout = static_cast<int>(wait.count());
  while (out.size() < max) {
    std::unique_ptr<RdKafka::Message> msg(consumer.consume(out.empty() ? timeout : 0));
    switch (msg->err()) {
      case RdKafka::ERR_NO_ERROR: out.push_back(std::move(msg)); continue;
      case RdKafka::ERR__TIMED_OUT:
      case RdKafka::ERR__PARTITION_EOF: return out;  // nothing more right now
      case RdKafka::ERR__AUTO_OFFSET_RESET:
        if (resets) {
          resets->emplace_back(msg->partition(), msg->offset());
          return out;
        }
        logging::get(who).error("{}/{}: {}", msg->topic_name(), msg->partition(), msg->errstr());
        return out;
      default: logging::get(who).warn("consume failed: {}", msg->errstr()); return out;
    }
  }
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> watermarks(RdKafka::KafkaConsumer& consumer,
                                                                const std::string& topic, std::int32_t partition,
                                                                const char* who) {
  std::int64_t lo = 0, hi = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto e = consumer.query_watermark_offsets(topic, partition, &lo, &hi, 5000);
    if (e == RdKafka::ERR_NO_ERROR)
      return std::pair{lo, hi};
    logging::get(who).warn("{}/{}: cannot read watermarks (attempt {} of 3): {}", topic, partition, attempt + 1,
                           RdKafka::err2str(e));
  }
  return std::nullopt;
}

void reassign(RdKafka::KafkaConsumer& consumer, const std::string& topic,
              const std::map<std::int32_t, std::int64_t>& offsets, const char* who) {
  std::vector<RdKafka::TopicPartition*> parts;
  for (const auto& [p, offset] : offsets)
    parts.push_back(RdKafka::TopicPartition::create(topic, p, offset));
  if (auto e = consumer.assign(parts); e != RdKafka::ERR_NO_ERROR)
    logging::get(who).error("{}: assign failed: {}", topic, RdKafka::err2str(e));
  RdKafka::TopicPartition::destroy(parts);
}

std::string header(RdKafka::Message& msg, const std::string& name) {
  RdKafka::Headers* hs = msg.headers();
  if (!hs)
    return {};
  RdKafka::Headers::Header h = hs->get_last(name);
  if (h.err() != RdKafka::ERR_NO_ERROR || !h.value())
    return {};
  return std::string(static_cast<const char*>(h.value()), h.value_size());
}

}  // namespace engram::ingest::detail
