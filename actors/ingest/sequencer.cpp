#include "actors/ingest/sequencer.hpp"
#include "logging/log.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/internal/partition_gaps.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/sealing.hpp"
#include "schemas/log_record.hpp"
#include "schemas/time.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

namespace engram::ingest {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::sequencer); }

/// A refused event that is a chunk of a document (its organizationId and document valid on
/// their own): the chunk_failed command that records why, so the chunk's status says failed
/// instead of pending. Nothing for other events.
std::optional<schemas::knowledge_command> chunk_failure(std::string_view bytes, const schemas::decode_error& bad,
                                                        std::int32_t partition, std::int64_t offset) {
  if (bad.what == schemas::decode_error::kind::too_large || bad.what == schemas::decode_error::kind::invalid_utf8)
    return std::nullopt;
  auto chunk = schemas::refused_chunk_of(bytes);
  if (!chunk)
    return std::nullopt;
  schemas::knowledge_command c;
  c.event_id = "chunk-failed:" + chunk->event_id + "@" + std::to_string(partition) + ":" + std::to_string(offset);
  c.organization_id = std::move(chunk->organization_id);
  c.issued_at_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  c.issued_at = schemas::format_rfc3339(c.issued_at_ms);
  c.issued_by = "sequencer";
  c.op = schemas::command_op::chunk_failed;
  c.id = std::move(chunk->document.id);
  c.title = std::move(chunk->document.title);
  c.chunk = static_cast<std::int32_t>(chunk->document.chunk);
  c.chunks = static_cast<std::int32_t>(chunk->document.chunks);
  c.reason = bad.to_string();  // may hold a cut value: the record's JSON replaces invalid UTF-8
  return c;
}
}  // namespace

struct sequencer::impl : RdKafka::RebalanceCb {
  config::engram_config cfg;
  services::metrics* metrics = nullptr;
  sequencer_options opts;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<kafka_producer> producer;

  /// Next offset to read of each assigned partition; the partitions stopped at an open gap.
  std::map<std::int32_t, std::int64_t> next_read;
  detail::partition_gaps stops;
  actors::gap_registry own_registry;

  /// Commits `offset` for `partition` (past an accepted gap); false when the broker refused.
  bool commit_at(RdKafka::KafkaConsumer& c, std::int32_t partition, std::int64_t offset) {
    std::vector<RdKafka::TopicPartition*> at{
        RdKafka::TopicPartition::create(cfg.kafka.topics.inbound, partition, offset)};
    auto e = c.commitSync(at);
    RdKafka::TopicPartition::destroy(at);
    if (e != RdKafka::ERR_NO_ERROR)
      logger().error("{}/{}: cannot commit offset {} past the gap: {}", cfg.kafka.topics.inbound, partition, offset,
                     RdKafka::err2str(e));
    return e == RdKafka::ERR_NO_ERROR;
  }

  /// `opts.gaps`, with the inbound offset committed past an accepted gap before it is
  /// recorded, so a restart does not meet it again.
  gap_handling gaps_here(RdKafka::KafkaConsumer& c) {
    gap_handling h = opts.gaps;
    if (!h.registry)
      h.registry = &own_registry;
    h.record = [this, &c, record = opts.gaps.record](const actors::log_gap& g) {
      return commit_at(c, g.partition, g.to) && (!record || record(g));
    };
    return h;
  }

  /// Takes what the group assigns at the committed offsets, and says how many partitions this
  /// process reads. A committed offset the broker no longer holds is a gap.
  void rebalance_cb(RdKafka::KafkaConsumer* c, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    const auto& topic = cfg.kafka.topics.inbound;
    next_read.clear();
    stops.clear();
    if (err != RdKafka::ERR__ASSIGN_PARTITIONS) {
      c->unassign();
      (opts.gaps.registry ? *opts.gaps.registry : own_registry).forget(topic);
      metrics->set_extract_partitions(0);
      logger().info("{}: partitions revoked", topic);
      return;
    }
    if (auto e = c->committed(partitions, 10000); e != RdKafka::ERR_NO_ERROR)
      logger().warn("{}: cannot read the committed offsets ({}): reading from the oldest records kept", topic,
                    RdKafka::err2str(e));
    for (auto* tp : partitions) {
      const std::int64_t committed = tp->offset();
      if (committed < 0) {  // never committed: the oldest record kept
        tp->set_offset(RdKafka::Topic::OFFSET_BEGINNING);
        next_read[tp->partition()] = RdKafka::Topic::OFFSET_BEGINNING;
        continue;
      }
      auto marks = detail::watermarks(*c, topic, tp->partition(), "sequencer");
      const auto start = stops.start_at(tp->partition(), committed, marks, gaps_here(*c));
      tp->set_offset(start.value_or(committed));
      next_read[tp->partition()] = start.value_or(committed);
    }
    c->assign(partitions);
    stops.pause_stopped(*c);
    metrics->set_extract_partitions(partitions.size());
    logger().info("{}: {} partitions assigned", topic, partitions.size());
  }

  /// An offset reset error while reading: the record `offset` of `partition` is gone.
  void on_reset(std::int32_t partition, std::int64_t offset) {
    const std::int64_t from = std::max<std::int64_t>(0, offset >= 0                  ? offset
                                                        : next_read.count(partition) ? next_read[partition]
                                                                                     : 0);
    next_read[partition] = stops.reset(*consumer, partition, from, next_read, gaps_here(*consumer)).value_or(from);
  }

  // The run loop's steps (sequencer::run).
  using batch_type = std::vector<std::unique_ptr<RdKafka::Message>>;
  // Per partition: the first offset not yet committed, and the next offset after what was
  // handled. settle() waits for the appends, then commits what was handled: true when both
  // went through (or there was nothing to settle).
  using ranges = std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>>;
  /// What run() fixes once: the decode limits, the chunk size and how often a batch settles.
  struct run_limits {
    schemas::decode_limits limits;
    std::size_t chunk;
    std::chrono::milliseconds settle_every;
  };
  /// How forwarding a batch went: every produce queued, every settle along the way through.
  struct batch_outcome {
    bool queued = true, settled = true;
  };
  /// Messages appended since the last settle (counted when it goes through).
  std::size_t handled = 0;
  /// The before_commit test seam stopped the run, as a crash would.
  bool crashed = false;

  void read_again(const ranges& range);
  bool settle(ranges& range);
  batch_outcome forward_batch(const batch_type& batch, ranges& range, const std::atomic<bool>& stop,
                              const run_limits& lim);
  /// How forwarding a chunk went.
  enum class chunk_outcome {
    queued,   ///< every produce queued
    refused,  ///< a produce was refused
    stopped,  ///< a stop request cut its reading short: nothing of it was produced
  };
  /// Decodes messages [begin, end) of `batch` and reads the valid ones; unless `stop` cut the
  /// reading short, dead-letters the invalid ones and appends the valid ones to engram-log.
  chunk_outcome forward_chunk(const batch_type& batch, std::size_t begin, std::size_t end,
                              const schemas::decode_limits& limits, const std::atomic<bool>& stop);
  /// An event that does not decode: to the dead-letter topic with the reason (and a
  /// chunk_failed command to engram-log for a document's chunk); false when a produce was refused.
  bool dead_letter(const RdKafka::Message& msg, std::string_view bytes, const schemas::decode_error& bad);
  /// The valid events of a chunk to engram-log: with what `opts.extract` read from them
  /// (`read`, one a message), or alone (`read` empty); false when a produce was refused.
  bool append_valid(std::vector<schemas::inbound_message>& valid, std::vector<schemas::extraction>& read,
                    const std::vector<const RdKafka::Message*>& valid_msgs);
};

engram::result<std::unique_ptr<sequencer>> sequencer::start(const config::engram_config& cfg,
                                                            const std::string& brokers, services::metrics& metrics,
                                                            sequencer_options opts) {
  std::unique_ptr<sequencer> s(new sequencer());
  s->impl_ = std::make_unique<impl>();
  auto& m = *s->impl_;
  m.cfg = cfg;
  m.stops = detail::partition_gaps(cfg.kafka.topics.inbound, "sequencer");
  m.metrics = &metrics;
  m.opts = std::move(opts);
  auto consumer = detail::make_consumer(brokers, cfg.kafka.rdkafka, cfg.kafka.group_id + "-sequencer",
                                        cfg.kafka.topics.inbound, &m, "sequencer");
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

// Reads again from the first uncommitted offsets: whatever did reach engram-log is a
// duplicate there, and duplicates are no-ops when applied.
void sequencer::impl::read_again(const ranges& range) {
  const auto& topics = cfg.kafka.topics;
  for (const auto& [p, r] : range) {
    std::unique_ptr<RdKafka::TopicPartition> tp(RdKafka::TopicPartition::create(topics.inbound, p, r.first));
    (void)consumer->seek(*tp, 5000);  // a failed seek shows up as a re-read gap: logged by librdkafka
    next_read[p] = r.first;           // an assignment after an offset reset starts here too
  }
}

bool sequencer::impl::settle(ranges& range) {
  const auto& topics = cfg.kafka.topics;
  if (!producer->flush(std::chrono::seconds(30))) {
    logger().error("appends not acknowledged ({}); reading again from the last commit", producer->last_error());
    read_again(range);
    return false;
  }
  metrics->count_sequenced(handled);
  handled = 0;
  if (opts.before_commit && !opts.before_commit()) {
    logger().warn("stopping before commit (test seam)");
    crashed = true;
    return false;
  }
  std::vector<RdKafka::TopicPartition*> offsets;
  for (auto& [p, r] : range)
    if (r.second > r.first) {
      offsets.push_back(RdKafka::TopicPartition::create(topics.inbound, p, r.second));
      r.first = r.second;
    }
  if (offsets.empty())
    return true;
  if (auto e = consumer->commitSync(offsets); e != RdKafka::ERR_NO_ERROR)
    logger().warn("commit failed ({}): these messages will be read again", RdKafka::err2str(e));
  RdKafka::TopicPartition::destroy(offsets);
  return true;
}

bool sequencer::impl::dead_letter(const RdKafka::Message& msg, std::string_view bytes,
                                  const schemas::decode_error& bad) {
  const auto& topics = cfg.kafka.topics;
  bool queued = true;
  auto reason = bad.to_string();
  logger().warn("{}/{}@{}{} to {}: {}", topics.inbound, msg.partition(), msg.offset(),
                bad.event_id.empty() ? std::string() : " (event '" + bad.event_id + "')", topics.dead_letter, reason);
  std::string key = msg.key() ? *msg.key() : std::string();
  auto headers = detail::dead_letter_headers(reason, schemas::to_string(bad.what), msg);
  if (!bad.event_id.empty())
    headers.emplace_back("eventId", bad.event_id);
  queued &= producer->produce(topics.dead_letter, key, bytes, headers);
  metrics->count_dead_letter(schemas::to_string(bad.what));
  if (auto failed = chunk_failure(bytes, bad, msg.partition(), msg.offset())) {
    const auto rec = schemas::encode(schemas::log_payload{std::move(*failed)});
    queued &= producer->produce(topics.log, rec.key, rec.value, {{schemas::kind_header, rec.kind}});
  }
  return queued;
}

bool sequencer::impl::append_valid(std::vector<schemas::inbound_message>& valid, std::vector<schemas::extraction>& read,
                                   const std::vector<const RdKafka::Message*>& valid_msgs) {
  const auto& topics = cfg.kafka.topics;
  std::vector<schemas::encoded_record> records;
  records.reserve(valid.size());
  if (opts.extract) {
    for (std::size_t k = 0; k < valid.size(); ++k) {
      schemas::extracted_message x{valid[k], std::move(read[k]), opts.embedder};
      records.push_back(schemas::encode(schemas::log_payload{std::move(x)}));
    }
  } else {
    for (std::size_t k = 0; k < valid.size(); ++k) {
      const auto& msg = *valid_msgs[k];
      records.push_back({valid[k].organization_id, schemas::kind_inbound_message,
                         std::string(static_cast<const char*>(msg.payload()), msg.len())});
    }
  }
  if (opts.keys) {
    // Each message sealed with a key of its own; the keys are on the key topic before any
    // record sealed with them is on engram-log.
    std::vector<std::pair<std::string, data_key>> keys;
    keys.reserve(records.size());
    for (std::size_t k = 0; k < records.size(); ++k) {
      auto key = new_data_key();
      const auto& org = valid[k].organization_id;
      const auto& event = valid[k].event_id;
      records[k].value = seal(org, event, records[k].kind, records[k].value, key);
      records[k].kind = sealed_kind;
      keys.emplace_back(key_name(org, event, key.id), std::move(key));
    }
    if (auto put = opts.keys->put(keys); !put) {
      logger().error("data keys not written ({}): nothing of this batch goes to engram-log", put.error());
      return false;
    }
  }
  bool queued = true;
  for (const auto& rec : records)
    queued &= producer->produce(topics.log, rec.key, rec.value, {{schemas::kind_header, rec.kind}});
  return queued;
}

sequencer::impl::chunk_outcome sequencer::impl::forward_chunk(const batch_type& batch, std::size_t begin,
                                                              std::size_t end, const schemas::decode_limits& limits,
                                                              const std::atomic<bool>& stop) {
  std::vector<schemas::inbound_message> valid;
  std::vector<const RdKafka::Message*> valid_msgs;
  struct refused {
    const RdKafka::Message* msg;
    std::string_view bytes;
    schemas::decode_error why;
  };
  std::vector<refused> invalid;
  for (std::size_t i = begin; i < end; ++i) {
    const auto& msg = *batch[i];
    std::string_view bytes(static_cast<const char*>(msg.payload()), msg.len());
    schemas::inbound_message ev;
    if (auto bad = schemas::decode(bytes, limits, ev)) {
      invalid.push_back({&msg, bytes, std::move(*bad)});
    } else {
      valid.push_back(std::move(ev));
      valid_msgs.push_back(&msg);
    }
  }
  // Reading comes first, so a chunk a stop cut short leaves nothing behind: it is read
  // again, whole, by whoever reads the partition next.
  std::vector<schemas::extraction> read;
  if (opts.extract && !valid.empty()) {
    read = opts.extract(valid, stop);
    if (stop)
      return chunk_outcome::stopped;
  }
  bool queued = true;
  for (const auto& r : invalid)
    queued &= dead_letter(*r.msg, r.bytes, r.why);
  queued &= append_valid(valid, read, valid_msgs);
  handled += valid.size();
  return queued ? chunk_outcome::queued : chunk_outcome::refused;
}

sequencer::impl::batch_outcome sequencer::impl::forward_batch(const batch_type& batch, ranges& range,
                                                              const std::atomic<bool>& stop, const run_limits& lim) {
  batch_outcome out;
  auto since = std::chrono::steady_clock::now();
  for (std::size_t begin = 0; begin < batch.size() && out.queued; begin += lim.chunk) {
    if (begin > 0 && stop)
      break;  // between chunks: what was appended is committed below, the rest read again
    if (begin > 0 && std::chrono::steady_clock::now() - since >= lim.settle_every) {
      // A large batch settles as it goes: progress is committed every ingest.batch_ms.
      if (!(out.settled = settle(range)))
        break;
      since = std::chrono::steady_clock::now();
    }
    const std::size_t end = std::min(batch.size(), begin + lim.chunk);
    const auto chunk = forward_chunk(batch, begin, end, lim.limits, stop);
    if (chunk == chunk_outcome::stopped)
      break;  // as between chunks: nothing of this one was appended
    out.queued &= chunk == chunk_outcome::queued;
    for (std::size_t i = begin; i < end; ++i)
      range[batch[i]->partition()].second = batch[i]->offset() + 1;
  }
  return out;
}

void sequencer::run() {
  auto& m = *impl_;
  const auto& topics = m.cfg.kafka.topics;
  const impl::run_limits lim{schemas::decode_limits{m.cfg.ingest.max_event_bytes},
                             std::max<std::size_t>(1, m.opts.chunk),
                             std::chrono::milliseconds(std::max<std::uint32_t>(1, m.cfg.ingest.batch_ms))};
  logger().info("{} -> {} ({}; dead letters to {}), group {}-sequencer", topics.inbound, topics.log,
                m.opts.extract ? "extracted and embedded here" : "messages alone, read when applied",
                topics.dead_letter, m.cfg.kafka.group_id);
  std::vector<std::pair<std::int32_t, std::int64_t>> resets;
  while (!stop_ && !m.crashed) {
    // An offset reset met in the last poll is decided once that poll's messages are handled.
    for (const auto& [p, offset] : resets)
      m.on_reset(p, offset);
    resets.clear();
    auto batch = detail::consume_batch(*m.consumer, m.cfg.ingest.batch_size, std::chrono::milliseconds(100),
                                       "sequencer", &resets);
    for (const auto& msg : batch)
      m.next_read[msg->partition()] = msg->offset() + 1;
    if (batch.empty())
      continue;
    impl::ranges range;
    for (const auto& msg : batch)
      range.try_emplace(msg->partition(), msg->offset(), msg->offset());
    const auto [queued, settled] = m.forward_batch(batch, range, stop_, lim);
    if (m.crashed)
      break;
    if (!settled || !queued || !m.settle(range)) {
      if (m.crashed)
        break;
      if (!queued)  // a produce was refused: read the unsettled part again
        m.read_again(range);
      m.handled = 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
  }
  if (!m.crashed)
    m.consumer->close();
  running_ = false;
  logger().info("stopped");
}

}  // namespace engram::ingest
