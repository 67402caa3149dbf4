#include "actors/ingest/internal/kafka.hpp"

#include <spdlog/spdlog.h>

namespace engram::ingest::detail {

std::unique_ptr<RdKafka::Conf> make_conf(const std::string& brokers, const properties& user,
                                         const properties& required, std::string* error) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  auto set = [&](const std::string& k, const std::string& v, const char* origin) {
    if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK) {
      *error = std::string(origin) + " librdkafka property '" + k + "': " + err;
      return false;
    }
    return true;
  };
  if (!set("bootstrap.servers", brokers, "kafka.brokers:"))
    return nullptr;
  for (const auto& [k, v] : user)
    if (!set(k, v, "kafka.rdkafka:"))
      return nullptr;
  for (const auto& [k, v] : required)
    if (!set(k, v, "engram:"))
      return nullptr;
  return conf;
}

std::vector<std::unique_ptr<RdKafka::Message>> consume_batch(RdKafka::KafkaConsumer& consumer,
                                                             std::size_t max,
                                                             std::chrono::milliseconds wait,
                                                             const char* who) {
  std::vector<std::unique_ptr<RdKafka::Message>> out;
  int timeout = static_cast<int>(wait.count());
  while (out.size() < max) {
    std::unique_ptr<RdKafka::Message> msg(consumer.consume(out.empty() ? timeout : 0));
    switch (msg->err()) {
      case RdKafka::ERR_NO_ERROR:
        out.push_back(std::move(msg));
        continue;
      case RdKafka::ERR__TIMED_OUT:
      case RdKafka::ERR__PARTITION_EOF:
        return out;  // nothing more right now
      default:
        spdlog::warn("{}: consume failed: {}", who, msg->errstr());
        return out;
    }
  }
  return out;
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
