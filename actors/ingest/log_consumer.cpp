#include "actors/ingest/log_consumer.hpp"
#include "logging/log.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/internal/partition_gaps.hpp"
#include "actors/ingest/internal/records.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/sequencer.hpp"

#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <pthread.h>
#include <set>
#include <utility>

namespace engram::ingest {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::ingest); }

/// Most batches between the consumer and the store at once.
constexpr std::size_t max_in_flight = 4;

/// What was read off engram-log as the store stage takes it: each record decoded (a sealed
/// one opened with `keys`), those that carry no reading read with `reader`. `seen` is told
/// each record's kind ("forgotten", "undecodable" or the record kind) with what was read.
actors::event_batch to_batch(
    const std::vector<std::unique_ptr<RdKafka::Message>>& msgs, const std::string& topic, const std::string& cluster,
    const schemas::decode_limits& limits, key_ring* keys, const reading::reader_context& reader, bool re_extract,
    const std::function<void(const RdKafka::Message&, const std::string&, const detail::read_record&)>& seen) {
  actors::event_batch batch;
  batch.done = std::make_shared<std::promise<actors::batch_result>>();
  const auto now = std::chrono::steady_clock::now();
  for (const auto& msg : msgs) {
    actors::log_record rec;
    rec.position = storage::log_position{topic, msg->partition(), msg->offset(), cluster};
    rec.received_at = now;
    auto read = detail::read_log_record(*msg, limits, keys);
    std::string kind;
    if (read.forgotten) {  // a forgotten message's record: nothing to apply, nothing poisonous
      rec.rejection = read.rejection;
      kind = "forgotten";
    } else if (!read.payload) {
      rec.rejection = read.rejection;
      kind = "undecodable";
      logger().warn("{}/{}@{} skipped: {}", topic, msg->partition(), msg->offset(), rec.rejection);
    } else {
      rec.payload = std::move(read.payload);
      kind = std::string(schemas::to_string(schemas::kind_of(*rec.payload)));
    }
    seen(*msg, kind, read);
    batch.records.push_back(std::move(rec));
  }
  std::vector<schemas::log_payload*> payloads;
  for (auto& rec : batch.records)
    if (rec.payload)
      payloads.push_back(&*rec.payload);
  reading::read_unread(payloads, reader, re_extract);
  return batch;
}

}  // namespace

struct log_consumer::impl : RdKafka::RebalanceCb {
  config::engram_config cfg;
  std::string brokers;
  std::shared_ptr<storage::graph_store> store;
  actors::stage_actor head;
  gap_handling gaps;
  services::metrics* metrics = nullptr;
  actors::ingest_status* status = nullptr;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<kafka_producer> dlq;  // made on first use
  /// Batches sent to the pipeline, oldest first: (records, completion).
  std::deque<std::pair<std::size_t, std::future<actors::batch_result>>> in_flight;
  /// Given to every batch sent (event_batch::let_go); set while partitions are revoked, then
  /// replaced. Records of batches in flight left not applied, since the last revocation.
  std::shared_ptr<std::atomic<bool>> letting_go = std::make_shared<std::atomic<bool>>(false);
  std::size_t left_in_flight = 0;
  std::atomic<bool>* failed = nullptr;
  /// begin() was called: the fields above are set and the consumer's thread polls.
  bool begun = false;
  /// Reads the records that carry no reading.
  reading::reader_context reader;
  /// engramctl replay --re-extract: what format-2 records say was read is dropped.
  bool re_extract = false;
  /// The data keys of sealed records.
  std::shared_ptr<key_ring> keys;
  ownership_hooks hooks;
  /// The partitions assigned now (the rebalance callback keeps it, on this thread): a batch
  /// fetched before a revocation drops the records of partitions no longer assigned.
  std::set<std::int32_t> owned;

  /// Set when the store's disk is full: nothing more is applied (the store refuses every
  /// write from the failed one on), the partitions are paused, engramd stays up for reads
  /// and /readyz says why. The store is asked to write again after 1 s, then after twice the
  /// wait each time, up to 30 s (reset by a batch applied whole): once it can, applying goes
  /// on from the offsets stored (try_resume). A restart with space resumes likewise.
  bool stalled = false;
  std::chrono::steady_clock::time_point next_resume;
  std::chrono::milliseconds resume_wait{0};
  static constexpr std::chrono::milliseconds first_resume_wait{1000}, longest_resume_wait{30000};

  /// Waits for the oldest batch and records its outcome. Returns false on a store failure.
  bool complete_oldest() {
    auto [records, fut] = std::move(in_flight.front());
    in_flight.pop_front();
    auto r = actors::result_of(fut);  // the store told `status` each applied offset already
    if (r.stopped) {
      logger().error(
          "the store stopped before applying a batch of {} records: stopping; the stored offsets are "
          "where a restart resumes",
          records);
      failed->store(true);
      return false;
    }
    if (r.error == storage::errc::no_space) {
      if (!stalled) {
        resume_wait = resume_wait.count() == 0 ? first_resume_wait : std::min(2 * resume_wait, longest_resume_wait);
        next_resume = std::chrono::steady_clock::now() + resume_wait;
        logger().error(
            "{}: applying stopped after {} of {} records; reads go on; it goes on by itself once there is "
            "space (tried again in {} s)",
            store->write_failure().value_or("disk full"), r.done, records, resume_wait.count() / 1000.0);
      }
      stalled = true;
      return false;
    }
    if (r.error == storage::errc::ok && r.done == records)
      resume_wait = std::chrono::milliseconds(0);
    left_in_flight += r.error == storage::errc::ok ? records - r.done : 0;
    if (r.error != storage::errc::ok) {
      logger().error(
          "the store failed ({}) after {} of {} records: stopping; the stored offsets "
          "are where a restart resumes",
          store->write_failure().value_or(storage::to_string(r.error)), r.done, records);
      failed->store(true);
      return false;
    }
    return true;
  }

  /// While stalled: the batches still in flight fail too; the assignment is paused (fetching
  /// nothing) and what was fetched before is dropped; polling keeps the group membership.
  /// Paused again on every turn: a rebalance may have assigned partitions since the last.
  void stall() {
    drain();
    std::vector<RdKafka::TopicPartition*> parts;
    if (consumer->assignment(parts) == RdKafka::ERR_NO_ERROR && !parts.empty())
      (void)consumer->pause(parts);
    RdKafka::TopicPartition::destroy(parts);
    (void)detail::consume_batch(*consumer, cfg.ingest.batch_size, std::chrono::milliseconds(200), "ingest");
  }

  /// While stalled, when the wait is over: the store writes again (storage's resume_writes),
  /// what the failed writes built is built again (hooks.writes_resumed), and every owned
  /// partition is assigned again at its next offset to apply (as the store says: the records
  /// after the failure were never applied, nor anything fetched after them). False while it
  /// cannot: the next try waits twice as long.
  bool try_resume() {
    if (std::chrono::steady_clock::now() < next_resume)
      return false;
    const auto again = [&](const std::string& why) {
      resume_wait = std::min(2 * resume_wait, longest_resume_wait);
      next_resume = std::chrono::steady_clock::now() + resume_wait;
      logger().warn("applying cannot go on yet ({}): tried again in {} s", why, resume_wait.count() / 1000.0);
      return false;
    };
    if (auto e = store->resume_writes(); e != storage::errc::ok)
      return again(store->write_failure().value_or(storage::to_string(e)));
    if (hooks.writes_resumed)
      if (auto rebuilt = hooks.writes_resumed(); !rebuilt)
        return again(rebuilt.error());
    std::map<std::int32_t, std::int64_t> offsets;
    for (const auto& [p, s] : status->partitions())
      if (owned.count(p))
        offsets[p] = s.next_offset;
    // stall() paused them, and an assignment keeps what the application paused.
    std::vector<RdKafka::TopicPartition*> parts;
    for (const auto& [p, _] : offsets)
      parts.push_back(RdKafka::TopicPartition::create(cfg.kafka.topics.log, p));
    (void)consumer->resume(parts);
    RdKafka::TopicPartition::destroy(parts);
    detail::reassign(*consumer, cfg.kafka.topics.log, offsets, "ingest");
    stops.pause_stopped(*consumer);
    std::string list;
    for (const auto& [p, o] : offsets)
      list += (list.empty() ? "" : ", ") + std::to_string(p) + "@" + std::to_string(o);
    logger().info("the store writes again: applying goes on from [{}]", list);
    stalled = false;
    return true;
  }

  bool drain() {
    bool ok = true;
    while (!in_flight.empty())
      ok &= complete_oldest();
    return ok;
  }

  /// The partitions stopped at an open gap (paused).
  detail::partition_gaps stops;

  /// `gaps` with the store as the record of an accepted gap (its offset moves past it).
  gap_handling gaps_here(const std::string& cluster) {
    gap_handling h = gaps;
    h.record = [this, cluster](const actors::log_gap& g) {
      auto e = store->record_gap({g.topic, g.partition, g.from, g.to}, /*advance=*/true, cluster);
      if (e != storage::errc::ok)
        logger().error("{}/{}: cannot record the gap: {}", g.topic, g.partition, storage::to_string(e));
      return e == storage::errc::ok;
    };
    return h;
  }

  void rebalance_cb(RdKafka::KafkaConsumer* c, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    if (!begun) {  // closed before begin(): nothing was served, nothing to hand over
      c->unassign();
      return;
    }
    const auto& topic = cfg.kafka.topics.log;
    logger().debug("{}: the group {} {} partitions", topic,
                   err == RdKafka::ERR__ASSIGN_PARTITIONS ? "assigns" : "revokes", partitions.size());
    // Nothing of the old assignment may still be on its way. On a revocation each applier
    // finishes the record in hand and leaves the rest to the partitions' next owner, who
    // reads them from the offsets stored with the records applied.
    if (err != RdKafka::ERR__ASSIGN_PARTITIONS)
      letting_go->store(true);
    drain();
    letting_go = std::make_shared<std::atomic<bool>>(false);
    if (err != RdKafka::ERR__ASSIGN_PARTITIONS) {
      if (left_in_flight > 0)
        logger().info("{}: {} records fetched and not applied are left to the partitions' next owner", topic,
                      std::exchange(left_in_flight, 0));
      status->revoked_all();
      const auto gone = std::move(owned);
      owned.clear();
      if (hooks.guard) {  // whatever acts for an owned organisation finishes first
        std::unique_lock finished(*hooks.guard);
      }
      stops.clear();
      gaps.registry->forget(topic);  // the next owner of those partitions meets them
      c->unassign();
      logger().info("{} partitions revoked", topic);
      if (hooks.revoked)
        hooks.revoked(gone);
      if (hooks.changed)
        hooks.changed();
      return;
    }
    if (hooks.assigning) {  // a standby's reading of them reaches the store first
      std::set<std::int32_t> coming;
      for (auto* tp : partitions)
        coming.insert(tp->partition());
      hooks.assigning(coming);
    }
    std::string cluster = c->clusterid(5000);
    auto stored = store->offsets(topic);
    std::map<std::int32_t, actors::assignment> assigned;
    stops.clear();
    for (auto* tp : partitions) {
      auto marks = detail::watermarks(*c, topic, tp->partition(), "ingest");
      const std::int64_t hi = marks ? marks->second : -1;
      const std::int64_t needed = needed_offset(tp->partition(), stored, cluster, marks);
      std::int64_t start = stops.start_at(tp->partition(), needed, marks, gaps_here(cluster)).value_or(needed);
      if (!marks && !stored.count(tp->partition()))
        start = RdKafka::Topic::OFFSET_BEGINNING;  // checked when the first fetch fails or succeeds
      tp->set_offset(start);
      assigned[tp->partition()] = {std::max<std::int64_t>(start, 0), hi};
    }
    status->assigned(assigned);
    status->joined_group();
    owned.clear();
    for (const auto& [p, _] : assigned)
      owned.insert(p);
    if (auto e = c->assign(partitions); e != RdKafka::ERR_NO_ERROR)
      logger().error("assign failed: {}", RdKafka::err2str(e));
    stops.pause_stopped(*c);
    std::string list;
    for (auto p : owned)
      list += (list.empty() ? "" : ",") + std::to_string(p);
    logger().info("{} partitions assigned: [{}]", topic, list);
    if (hooks.changed)
      hooks.changed();
  }

  /// The offset a complete store needs next of `partition`: the stored one when it belongs to
  /// this cluster and this topic's life, else 0 (everything; events applied before are
  /// skipped by eventId). Unknown watermarks: the stored offset (or the beginning), and not
  /// ready until the consumer learns the high-water mark from a fetch.
  std::int64_t needed_offset(std::int32_t partition, const std::map<std::int32_t, storage::stored_offset>& stored,
                             const std::string& cluster,
                             const std::optional<std::pair<std::int64_t, std::int64_t>>& marks) {
    const auto& topic = cfg.kafka.topics.log;
    auto it = stored.find(partition);
    if (it == stored.end()) {
      logger().info("{}/{}: nothing applied yet, reading from offset 0", topic, partition);
      return 0;
    }
    if (it->second.cluster_id != cluster) {
      logger().warn(
          "{}/{}: last read on cluster '{}', now on '{}' (a new broker starts empty): reading "
          "from the beginning; events applied before are skipped by eventId",
          topic, partition, it->second.cluster_id, cluster);
      return 0;
    }
    if (marks && it->second.next_offset > marks->second) {
      logger().warn(
          "{}/{}: stored offset {} is past the end ({}): the topic was recreated; reading "
          "from the beginning; events applied before are skipped by eventId",
          topic, partition, it->second.next_offset, marks->second);
      return 0;
    }
    logger().info("{}/{}: resuming at stored offset {} (high-water mark {})", topic, partition, it->second.next_offset,
                  marks ? std::to_string(marks->second) : std::string("not known yet"));
    return it->second.next_offset;
  }

  /// An offset reset error: the record `offset` of `partition` is no longer on the broker.
  /// Everything read before it is applied first; then the gap is decided, and the partitions
  /// are assigned again from where each stands (the stopped one at the gap's end when
  /// accepted, else paused).
  void on_reset(std::int32_t partition, std::int64_t offset, const std::string& cluster) {
    drain();
    auto st = status->partitions();
    auto it = st.find(partition);
    const std::int64_t from = offset >= 0 ? offset : it != st.end() ? it->second.next_offset : 0;
    std::map<std::int32_t, std::int64_t> offsets;
    for (const auto& [p, s] : st)
      offsets[p] = s.next_offset;
    if (auto at = stops.reset(*consumer, partition, from, std::move(offsets), gaps_here(cluster)); at && *at != from)
      status->applied(partition, *at);  // past the accepted gap
  }

  void dead_letter(const RdKafka::Message& msg, const std::string& reason, std::string_view kind) {
    if (!dlq) {
      auto made = kafka_producer::create(brokers, cfg.kafka.rdkafka);
      if (!made) {
        logger().error("cannot create the dead-letter producer: {}", made.error());
        return;
      }
      dlq = std::move(*made);
    }
    std::string key = msg.key() ? *msg.key() : std::string();
    (void)dlq->produce(cfg.kafka.topics.dead_letter, key,
                       std::string_view(static_cast<const char*>(msg.payload()), msg.len()),
                       detail::dead_letter_headers(reason, kind, msg));  // at least once, like the sequencer
    metrics->count_dead_letter(kind);
  }
};

engram::result<std::unique_ptr<log_consumer>> log_consumer::subscribe(const config::engram_config& cfg,
                                                                      const std::string& brokers) {
  std::unique_ptr<log_consumer> lc(new log_consumer());
  lc->impl_ = std::make_unique<impl>();
  auto& m = *lc->impl_;
  m.cfg = cfg;
  m.stops = detail::partition_gaps(cfg.kafka.topics.log, "ingest");
  m.brokers = brokers;
  auto consumer =
      detail::make_consumer(brokers, cfg.kafka.rdkafka, cfg.kafka.group_id, cfg.kafka.topics.log, &m, "ingest");
  if (!consumer)
    return engram::fail(consumer.error());
  m.consumer = std::move(*consumer);
  return lc;
}

void log_consumer::begin(std::shared_ptr<storage::graph_store> store, actors::stage_actor head,
                         services::metrics& metrics, actors::ingest_status& status, gap_handling gaps,
                         reading::reader_context reader, bool re_extract, std::shared_ptr<key_ring> keys,
                         ownership_hooks hooks) {
  auto& m = *impl_;
  m.reader = std::move(reader);
  m.keys = std::move(keys);
  m.hooks = std::move(hooks);
  m.re_extract = re_extract;
  m.store = std::move(store);
  m.head = std::move(head);
  m.gaps = std::move(gaps);
  m.metrics = &metrics;
  m.status = &status;
  m.failed = &failed_;
  m.begun = true;
  thread_ = std::thread([this] { run(); });
}

log_consumer::~log_consumer() { stop(); }

void log_consumer::stop() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  else if (impl_ && impl_->consumer && !impl_->begun) {  // subscribed, never begun: leaves the group
    impl_->consumer->close();
    impl_->consumer.reset();
  }
}

void log_consumer::run() {
  ::pthread_setname_np(::pthread_self(), "engram-consumer");  // in top -H and the benchmarks' CPU by thread
  auto& m = *impl_;
  const auto& topic = m.cfg.kafka.topics.log;
  schemas::decode_limits limits{m.cfg.ingest.max_event_bytes};
  std::string cluster = m.consumer->clusterid(5000);
  logger().info("consuming {} in group {} (cluster '{}')", topic, m.cfg.kafka.group_id, cluster);
  // A first assignment that takes long is said once (it shows in the log, never in state);
  // looked at until the first assignment or the warning.
  const auto subscribed = std::chrono::steady_clock::now();
  bool watching = true;
  while (!stop_ && !failed_) {
    if (watching && (m.status->joined() || std::chrono::steady_clock::now() - subscribed > std::chrono::seconds(30))) {
      watching = false;
      if (!m.status->joined())
        logger().warn(
            "{}: no partitions from group {} after 30 s; if a member of the group was killed the group waits its "
            "session.timeout.ms; a JoinGroup answer the broker never sent is asked again after "
            "max.poll.interval.ms + 3 s",
            topic, m.cfg.kafka.group_id);
    }
    if (m.stalled && !m.try_resume()) {
      m.stall();
      continue;
    }
    // Record finished batches without blocking, so status and lag stay current.
    while (!m.in_flight.empty() &&
           m.in_flight.front().second.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      if (!m.complete_oldest())
        break;
    std::vector<std::pair<std::int32_t, std::int64_t>> resets;
    auto msgs =
        detail::consume_batch(*m.consumer, m.cfg.ingest.batch_size, std::chrono::milliseconds(100), "ingest", &resets);
    // A rebalance may have run inside consume_batch: what was fetched for a partition no
    // longer assigned is not applied (its next owner reads it from its own stored offset).
    std::erase_if(msgs, [&](const auto& msg) { return !m.owned.count(msg->partition()); });
    // The high-water marks librdkafka learnt with its last fetch (no broker round trip).
    for (const auto& [p, s] : m.status->partitions()) {
      std::int64_t lo = 0, hi = -1;
      if (m.consumer->get_watermark_offsets(topic, p, &lo, &hi) == RdKafka::ERR_NO_ERROR && hi >= 0)
        m.status->watermark(p, hi);
    }
    if (msgs.empty()) {
      for (const auto& [p, offset] : resets)
        m.on_reset(p, offset, cluster);
      continue;
    }
    auto batch = to_batch(msgs, topic, cluster, limits, m.keys.get(), m.reader, m.re_extract,
                          [&](const RdKafka::Message& msg, const std::string& kind, const detail::read_record& read) {
                            if (kind == "undecodable")
                              m.dead_letter(msg, read.rejection, read.label);
                            m.status->read(msg.partition(), msg.offset(), kind);
                          });
    m.in_flight.emplace_back(batch.records.size(), batch.done->get_future());
    batch.let_go = m.letting_go;
    caf::anon_send(m.head, std::move(batch));
    while (m.in_flight.size() >= max_in_flight && !failed_)
      if (!m.complete_oldest())
        break;
    for (const auto& [p, offset] : resets)
      m.on_reset(p, offset, cluster);
  }
  m.drain();
  if (m.dlq && !m.dlq->flush(std::chrono::seconds(5)))
    logger().warn("dead letters not acknowledged: {}", m.dlq->last_error());
  m.consumer->close();
  logger().info("stopped");
}

struct log_follower::impl {
  config::engram_config cfg;
  std::shared_ptr<storage::graph_store> store;
  actors::stage_actor head;
  reading::reader_context reader;
  std::shared_ptr<key_ring> keys;
  std::function<std::set<std::int32_t>()> wanted;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::string cluster;
  std::atomic<bool> stopping{false};

  /// Batches sent to the store, oldest first: the next offset of each partition once applied.
  std::deque<std::pair<std::map<std::int32_t, std::int64_t>, std::future<actors::batch_result>>> in_flight;

  mutable std::mutex mutex;
  std::condition_variable cv;
  /// Followed now (the follower thread changes it, under the mutex).
  std::set<std::int32_t> following;
  /// Never followed until unblocked (assigned to this member, or being dropped), with how
  /// many release() calls each is blocked by.
  std::map<std::int32_t, int> blocked;
  /// release() calls waiting for the thread: bumped by the thread when it let them go.
  std::uint64_t asked = 0, done = 0;
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> positions;
  /// Checks in a row a followed partition was not wanted: it is let go at `let_go_after`
  /// (a member heard of late for a moment must not make a standby start over).
  std::map<std::int32_t, int> unwanted;
  static constexpr int let_go_after = 12;  // of 250 ms

  bool complete_oldest() {
    auto [next, fut] = std::move(in_flight.front());
    in_flight.pop_front();
    auto r = actors::result_of(fut);
    if (r.stopped || r.error != storage::errc::ok) {
      logger().error("standby: the store {}; following stops",
                     r.stopped ? "stopped" : "failed (" + storage::to_string(r.error) + ")");
      return false;
    }
    std::lock_guard lock(mutex);
    for (const auto& [p, offset] : next)
      if (following.count(p))
        positions[p].first = offset;
    return true;
  }

  bool drain() {
    bool ok = true;
    while (!in_flight.empty())
      ok &= complete_oldest();
    return ok;
  }

  /// What to follow now, `followed` being what is followed: when not `release`, what the
  /// cluster wants, a partition followed now kept until unwanted `let_go_after` checks in a
  /// row; never a blocked one. Follows it, and lets the release() calls waiting go.
  std::set<std::int32_t> choose(bool release, std::set<std::int32_t> followed) {
    std::set<std::int32_t> want = std::move(followed);
    if (!release) {
      auto now_wanted = wanted();
      for (auto p : want) {
        if (now_wanted.count(p)) {
          unwanted.erase(p);
        } else if (++unwanted[p] < let_go_after) {
          now_wanted.insert(p);
        } else {
          unwanted.erase(p);
        }
      }
      want = std::move(now_wanted);
    }
    std::uint64_t asked_now = 0;
    bool changed = false;
    {
      std::lock_guard lock(mutex);
      for (const auto& [p, _] : blocked)
        want.erase(p);
      asked_now = asked;
      changed = want != following;
    }
    if (changed)
      follow(want);
    if (release) {
      std::lock_guard lock(mutex);
      done = asked_now;
      cv.notify_all();
    }
    return want;
  }

  /// Each followed partition's high-water mark, for positions().
  void note_high_watermarks(const std::set<std::int32_t>& want) {
    for (auto p : want) {
      std::int64_t lo = 0, hi = -1;
      if (consumer->get_watermark_offsets(cfg.kafka.topics.log, p, &lo, &hi) == RdKafka::ERR_NO_ERROR && hi >= 0) {
        std::lock_guard lock(mutex);
        if (auto it = positions.find(p); it != positions.end())
          it->second.second = hi;
      }
    }
  }

  /// Follows `want` from the offsets the store holds (0 for a partition it never applied).
  void follow(const std::set<std::int32_t>& want) {
    drain();
    const auto& topic = cfg.kafka.topics.log;
    auto stored = store->offsets(topic);
    std::map<std::int32_t, std::int64_t> from;
    for (auto p : want) {
      auto it = stored.find(p);
      from[p] = it != stored.end() && it->second.cluster_id == cluster ? it->second.next_offset : 0;
    }
    if (from.empty())
      consumer->unassign();
    else
      detail::reassign(*consumer, topic, from, "standby");
    std::lock_guard lock(mutex);
    following = want;
    std::erase_if(positions, [&](const auto& kv) { return !want.count(kv.first); });
    for (const auto& [p, offset] : from)
      if (!positions.count(p))
        positions[p] = {offset, offset};
    if (!want.empty()) {
      std::string list;
      for (auto p : want)
        list += (list.empty() ? "" : ",") + std::to_string(p);
      logger().info("standby of {} partitions [{}]", topic, list);
    }
  }
};

engram::result<std::unique_ptr<log_follower>> log_follower::start(
    const config::engram_config& cfg, const std::string& brokers, std::shared_ptr<storage::graph_store> store,
    actors::stage_actor head, reading::reader_context reader, std::shared_ptr<key_ring> keys,
    std::function<std::set<std::int32_t>()> wanted) {
  std::unique_ptr<log_follower> f(new log_follower());
  f->impl_ = std::make_unique<impl>();
  auto& m = *f->impl_;
  m.cfg = cfg;
  m.store = std::move(store);
  m.head = std::move(head);
  m.reader = std::move(reader);
  m.keys = std::move(keys);
  m.wanted = std::move(wanted);
  auto consumer = detail::make_reader(brokers, cfg.kafka.rdkafka, cfg.kafka.group_id + "-standby", cfg.kafka.topics.log,
                                      {}, "error", "standby");
  if (!consumer)
    return engram::fail(consumer.error());
  m.consumer = std::move(*consumer);
  m.cluster = m.consumer->clusterid(5000);
  f->thread_ = std::thread([p = f.get()] { p->run(); });
  return f;
}

log_follower::~log_follower() { stop(); }

void log_follower::stop() {
  if (!impl_ || impl_->stopping.exchange(true))
    return;
  impl_->cv.notify_all();
  if (thread_.joinable())
    thread_.join();
  impl_->drain();
  impl_->consumer->close();
}

void log_follower::release(const std::set<std::int32_t>& partitions) {
  auto& m = *impl_;
  std::unique_lock lock(m.mutex);
  for (auto p : partitions)
    ++m.blocked[p];
  bool followed = false;
  for (auto p : partitions)
    followed = followed || m.following.count(p);
  if (!followed || m.stopping)
    return;
  const auto ticket = ++m.asked;
  m.cv.wait(lock, [&] { return m.done >= ticket || m.stopping; });
}

void log_follower::unblock(const std::set<std::int32_t>& partitions) {
  std::lock_guard lock(impl_->mutex);
  for (auto p : partitions)
    if (auto it = impl_->blocked.find(p); it != impl_->blocked.end() && --it->second <= 0)
      impl_->blocked.erase(it);
}

std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> log_follower::positions() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->positions;
}

void log_follower::run() {
  auto& m = *impl_;
  const auto& topic = m.cfg.kafka.topics.log;
  schemas::decode_limits limits{m.cfg.ingest.max_event_bytes};
  auto checked = std::chrono::steady_clock::time_point{};
  while (!m.stopping) {
    // What to follow: asked to let partitions go (the group assigned them here), or every
    // 250 ms what the cluster says.
    std::set<std::int32_t> want;
    bool release = false;
    {
      std::lock_guard lock(m.mutex);
      release = m.asked > m.done;
      want = m.following;
    }
    if (release || std::chrono::steady_clock::now() - checked > std::chrono::milliseconds(250)) {
      checked = std::chrono::steady_clock::now();
      want = m.choose(release, std::move(want));
    }
    if (want.empty()) {
      std::unique_lock lock(m.mutex);
      m.cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return m.stopping || m.asked > m.done; });
      continue;
    }
    while (!m.in_flight.empty() &&
           m.in_flight.front().second.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      if (!m.complete_oldest())
        return;
    auto msgs = detail::consume_batch(*m.consumer, m.cfg.ingest.batch_size, std::chrono::milliseconds(100), "standby");
    m.note_high_watermarks(want);
    std::erase_if(msgs, [&](const auto& msg) { return !want.count(msg->partition()); });
    if (msgs.empty())
      continue;
    std::map<std::int32_t, std::int64_t> next;
    for (const auto& msg : msgs)
      next[msg->partition()] = msg->offset() + 1;
    auto batch = to_batch(msgs, topic, m.cluster, limits, m.keys.get(), m.reader, false,
                          [](const RdKafka::Message&, const std::string&, const detail::read_record&) {});
    m.in_flight.emplace_back(std::move(next), batch.done->get_future());
    caf::anon_send(m.head, std::move(batch));
    while (m.in_flight.size() >= max_in_flight)
      if (!m.complete_oldest())
        return;
  }
}

}  // namespace engram::ingest
