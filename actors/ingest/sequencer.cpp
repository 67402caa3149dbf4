#include "actors/ingest/sequencer.hpp"
#include "actors/common/log.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/producer.hpp"
#include "schemas/log_record.hpp"

#include <spdlog/spdlog.h>

#include <map>

namespace engram::ingest {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::sequencer); }
}  // namespace

struct sequencer::impl {
  config::engram_config cfg;
  actors::metrics* metrics = nullptr;
  sequencer_options opts;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<kafka_producer> producer;
};

engram::result<std::unique_ptr<sequencer>> sequencer::start(const config::engram_config& cfg,
                                                            const std::string& brokers, actors::metrics& metrics,
                                                            sequencer_options opts) {
  std::unique_ptr<sequencer> s(new sequencer());
  s->impl_ = std::make_unique<impl>();
  auto& m = *s->impl_;
  m.cfg = cfg;
  m.metrics = &metrics;
  m.opts = std::move(opts);
  auto consumer = detail::make_consumer(brokers, cfg.kafka.rdkafka, cfg.kafka.group_id + "-sequencer",
                                       cfg.kafka.topics.inbound, nullptr, "sequencer");
  if (!consumer)
    return engram::fail(consumer.error());
  m.consumer = std::move(*consumer);
  auto producer = kafka_producer::create(brokers, cfg.kafka.rdkafka);
  if (!producer)
    return engram::fail(producer.error());
  m.producer = std::move(*producer);
  s->running_ = true;
  s->thread_ = std::thread([p = s.get()] { p->run(); });
  return s;
}

sequencer::~sequencer() { stop(); }

void sequencer::stop() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
}

void sequencer::run() {
  auto& m = *impl_;
  const auto& topics = m.cfg.kafka.topics;
  schemas::decode_limits limits{m.cfg.ingest.max_event_bytes};
  logger().info("{} -> {} (dead letters to {}), group {}-sequencer", topics.inbound, topics.log,
                topics.dead_letter, m.cfg.kafka.group_id);
  bool crashed = false;
  while (!stop_) {
    auto batch = detail::consume_batch(*m.consumer, m.cfg.ingest.batch_size, std::chrono::milliseconds(100),
                                       "sequencer");
    if (batch.empty())
      continue;
    // First and next offset per partition of this batch.
    std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> range;
    std::size_t good = 0;
    bool queued = true;
    for (const auto& msg : batch) {
      auto [it, fresh] = range.try_emplace(msg->partition(), msg->offset(), msg->offset() + 1);
      it->second.second = msg->offset() + 1;
      std::string_view bytes(static_cast<const char*>(msg->payload()), msg->len());
      schemas::inbound_message ev;
      if (auto bad = schemas::decode(bytes, limits, ev)) {
        auto reason = bad->to_string();
        logger().warn("{}/{}@{} to {}: {}", topics.inbound, msg->partition(), msg->offset(),
                      topics.dead_letter, reason);
        std::string key = msg->key() ? *msg->key() : std::string();
        queued &= m.producer->produce(topics.dead_letter, key, bytes,
                                      detail::dead_letter_headers(reason, schemas::to_string(bad->what), *msg));
        m.metrics->count_dead_letter(schemas::to_string(bad->what));
      } else {
        queued &= m.producer->produce(topics.log, ev.organization_id, bytes,
                                      {{schemas::kind_header, schemas::kind_inbound_message}});
        ++good;
      }
    }
    if (!queued || !m.producer->flush(std::chrono::seconds(30))) {
      // Not acknowledged: read the batch again; whatever did reach engram-log is a
      // duplicate there, and duplicates are no-ops when applied.
      logger().error("appends not acknowledged ({}); retrying the batch", m.producer->last_error());
      for (const auto& [p, r] : range) {
        std::unique_ptr<RdKafka::TopicPartition> tp(
            RdKafka::TopicPartition::create(topics.inbound, p, r.first));
        (void)m.consumer->seek(*tp, 5000);  // a failed seek shows up as a re-read gap: logged by librdkafka
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    m.metrics->count_sequenced(good);
    if (m.opts.before_commit && !m.opts.before_commit()) {
      logger().warn("stopping before commit (test seam)");
      crashed = true;
      break;
    }
    std::vector<RdKafka::TopicPartition*> offsets;
    for (const auto& [p, r] : range)
      offsets.push_back(RdKafka::TopicPartition::create(topics.inbound, p, r.second));
    if (auto e = m.consumer->commitSync(offsets); e != RdKafka::ERR_NO_ERROR)
      logger().warn("commit failed ({}): the batch will be forwarded again", RdKafka::err2str(e));
    RdKafka::TopicPartition::destroy(offsets);
  }
  if (!crashed)
    m.consumer->close();
  running_ = false;
  logger().info("stopped");
}

}  // namespace engram::ingest
