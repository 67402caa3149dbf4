#include "services/metrics.hpp"

#include "services/heap.hpp"

#include <array>
#include <atomic>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <set>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <mutex>

namespace engram::services {

struct metrics::impl {
  prometheus::Registry registry;
  prometheus::Family<prometheus::Counter>& records = prometheus::BuildCounter()
                                                         .Name("engram_log_records_total")
                                                         .Help("engram-log records handled by the store, by outcome")
                                                         .Register(registry);
  prometheus::Counter& applied = records.Add({{"outcome", "applied"}});
  prometheus::Counter& duplicates = records.Add({{"outcome", "duplicate"}});
  prometheus::Counter& skipped = records.Add({{"outcome", "skipped"}});
  prometheus::Family<prometheus::Counter>& dlq =
      prometheus::BuildCounter()
          .Name("engram_dead_letter_total")
          .Help("Inbound events sent to the dead-letter topic, by reason kind")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& actor_restarts =
      prometheus::BuildCounter()
          .Name("engram_actor_restarts_total")
          .Help("Supervised actors started again after stopping unasked, by actor")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& actor_messages = prometheus::BuildCounter()
                                                                .Name("engram_actor_messages_total")
                                                                .Help("Messages each actor handled, by actor")
                                                                .Register(registry);
  prometheus::Family<prometheus::Counter>& actor_busy =
      prometheus::BuildCounter()
          .Name("engram_actor_busy_seconds_total")
          .Help("Seconds each actor spent handling messages, by actor")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& actor_mailbox =
      prometheus::BuildGauge()
          .Name("engram_actor_mailbox")
          .Help("Messages left in each actor's mailbox after the last one it handled, by actor")
          .Register(registry);
  struct actor_series {
    prometheus::Counter* messages;
    prometheus::Counter* busy;
    prometheus::Gauge* mailbox;
  };
  std::mutex actors_mutex;
  std::map<std::string, actor_series, std::less<>> actor_series_of;
  std::map<std::string, metrics::actor_figures, std::less<>> actor_figures;
  prometheus::Counter& sequenced = prometheus::BuildCounter()
                                       .Name("engram_sequenced_total")
                                       .Help("Inbound events appended to engram-log by the sequencer")
                                       .Register(registry)
                                       .Add({});
  prometheus::Histogram& latency =
      prometheus::BuildHistogram()
          .Name("engram_apply_latency_seconds")
          .Help("From receipt off engram-log to durable in RocksDB")
          .Register(registry)
          .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                           0.5, 1, 2.5, 5});
  prometheus::Family<prometheus::Counter>& mcp_requests =
      prometheus::BuildCounter()
          .Name("engram_mcp_requests_total")
          .Help("MCP requests by tool (or method) and outcome (ok, tool_error, rpc_error, http_<status>)")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& mcp_latency =
      prometheus::BuildHistogram()
          .Name("engram_mcp_request_seconds")
          .Help("MCP request latency by tool (or method), answer included (a save waits until applied)")
          .Register(registry);
  std::mutex mcp_mutex;
  prometheus::Family<prometheus::Gauge>& rocksdb =
      prometheus::BuildGauge()
          .Name("engram_rocksdb")
          .Help(
              "RocksDB figures by name: memtable_bytes, pending_compaction_bytes, running_compactions, live_sst_bytes, "
              "table_readers_bytes, block_cache_bytes")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& memory =
      prometheus::BuildGauge()
          .Name("engram_memory_bytes")
          .Help(
              "Bytes of the in-memory indexes by part: entry_vectors (HNSW and labels), passage_vectors, postings "
              "(entries' BM25), passage_postings, entities, dedup_facts (the facts of dedup's candidates kept)")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& heap =
      prometheus::BuildGauge()
          .Name("engram_process_heap_bytes")
          .Help(
              "The heap as the allocator sees it (jemalloc in engramd, glibc elsewhere): in_use (by the program), free "
              "(held for later, not returned), mmapped (glibc: chunks mmapped alone; jemalloc: active extents)")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& recall_stages =
      prometheus::BuildGauge()
          .Name("engram_recall_stage_seconds_total")
          .Help(
              "Seconds recall_knowledge spent in each stage since start: people (names the query names), words "
              "(BM25; the passages' only when the calling thread searched them), embed (the query's vector), "
              "vectors (the nearest entries), graph (the graph's list), entries (candidates read and weighed), "
              "passages (the wait for the passages' lane, then their folding), present (the answer built)")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& apply_steps =
      prometheus::BuildCounter()
          .Name("engram_apply_step_seconds_total")
          .Help(
              "Seconds the store appliers spent in each step of applying messages and saves since start: dedup (the "
              "vector index and the structure), contradiction, write (the record's RocksDB write batch)")
          .Register(registry);
  prometheus::Counter& step_dedup = apply_steps.Add({{"step", "dedup"}});
  prometheus::Counter& step_contradiction = apply_steps.Add({{"step", "contradiction"}});
  prometheus::Counter& step_write = apply_steps.Add({{"step", "write"}});
  prometheus::Family<prometheus::Gauge>& allocator = prometheus::BuildGauge()
                                                         .Name("engram_process_allocator")
                                                         .Help("1 for the allocator serving malloc: jemalloc or glibc")
                                                         .Register(registry);
  prometheus::Gauge& heap_in_use = heap.Add({{"kind", "in_use"}});
  prometheus::Gauge& heap_free = heap.Add({{"kind", "free"}});
  prometheus::Gauge& heap_mmapped = heap.Add({{"kind", "mmapped"}});
  prometheus::Family<prometheus::Gauge>& embedding_cache =
      prometheus::BuildGauge()
          .Name("engram_embedding_cache")
          .Help("The embedding cache (embedder.cache_size): entries held; hits and misses since start")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& partition_state =
      prometheus::BuildGauge()
          .Name("engram_partition_state")
          .Help("store.cluster: 1 on the state each engram-log partition is in here (ready, restoring, not_owned)")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& restore_remaining =
      prometheus::BuildGauge()
          .Name("engram_restore_remaining_records")
          .Help("store.cluster: records a partition being restored here still has to apply")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& standby_lag =
      prometheus::BuildGauge()
          .Name("engram_standby_lag")
          .Help("store.cluster: records a partition followed here as a standby is behind its high-water mark")
          .Register(registry);
  std::set<std::int32_t> standby_partitions;
  prometheus::Family<prometheus::Gauge>& cluster =
      prometheus::BuildGauge()
          .Name("engram_cluster")
          .Help(
              "store.cluster: live members heard of (members), requests forwarded to an owner (forwarded) and "
              "answered 'retry' (retried) since start, event streams relayed from owners now (relaying), partitions "
              "let go and dropped from the store (dropped)")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& lag = prometheus::BuildGauge()
                                                   .Name("engram_log_lag")
                                                   .Help("engram-log records not yet applied, by partition")
                                                   .Register(registry);
  prometheus::Family<prometheus::Gauge>& gaps =
      prometheus::BuildGauge()
          .Name("engram_log_gap_records")
          .Help(
              "Records deleted from the broker before they were read, by topic and partition: the records of "
              "the gap a partition is stopped at (0 once accepted)")
          .Register(registry);
  prometheus::Gauge& ready =
      prometheus::BuildGauge().Name("engram_ready").Help("1 once caught up at start").Register(registry).Add({});
  prometheus::Family<prometheus::Counter>& extraction =
      prometheus::BuildCounter()
          .Name("engram_extraction_entries_total")
          .Help("Entries read by extraction, by outcome (kept, dropped_low_confidence, dropped_injected, suspicious)")
          .Register(registry);
  prometheus::Counter& kept = extraction.Add({{"outcome", "kept"}});
  prometheus::Counter& dropped = extraction.Add({{"outcome", "dropped_low_confidence"}});
  prometheus::Counter& suspicious = extraction.Add({{"outcome", "suspicious"}});
  prometheus::Counter& dropped_injected = extraction.Add({{"outcome", "dropped_injected"}});
  prometheus::Family<prometheus::Counter>& messages_by_class =
      prometheus::BuildCounter()
          .Name("engram_messages_classified_total")
          .Help("Messages extracted, by class: person, bulk (newsletters, lists, notifications) or spam")
          .Register(registry);
  std::array<std::atomic<std::uint64_t>, 3> by_class{};
  prometheus::Family<prometheus::Counter>& llm_fallback =
      prometheus::BuildCounter()
          .Name("engram_llm_fallback_total")
          .Help("Messages the LLM extractor could not read, by reason; the rules read them instead")
          .Register(registry);
  prometheus::Counter& embedding_failures = prometheus::BuildCounter()
                                                .Name("engram_embedding_failures_total")
                                                .Help("Batches whose entries could not be embedded")
                                                .Register(registry)
                                                .Add({});
  prometheus::Family<prometheus::Counter>& resolutions =
      prometheus::BuildCounter()
          .Name("engram_dedup_outcomes_total")
          .Help("New entries by dedup/contradiction outcome (created, merged, linked, superseded)")
          .Register(registry);
  prometheus::Counter& contradictions = prometheus::BuildCounter()
                                            .Name("engram_contradictions_total")
                                            .Help("contradicts relations raised (older entry flagged for review)")
                                            .Register(registry)
                                            .Add({});
  prometheus::Gauge& extract_partitions = prometheus::BuildGauge()
                                              .Name("engram_extract_partitions")
                                              .Help("Partitions of inbound-messages this process's extract stage reads")
                                              .Register(registry)
                                              .Add({});
  prometheus::Gauge& event_streams = prometheus::BuildGauge()
                                         .Name("engram_mcp_event_streams")
                                         .Help("GET /mcp event streams open (clients told of tool list changes)")
                                         .Register(registry)
                                         .Add({});
  prometheus::Gauge& index_size = prometheus::BuildGauge()
                                      .Name("engram_vector_index_size")
                                      .Help("Vectors searchable in the per-organisation HNSW indexes")
                                      .Register(registry)
                                      .Add({});
  prometheus::Family<prometheus::Counter>& commands = prometheus::BuildCounter()
                                                          .Name("engram_commands_total")
                                                          .Help("Knowledge commands applied by the store, by op")
                                                          .Register(registry);
  prometheus::Family<prometheus::Counter>& timer_actions =
      prometheus::BuildCounter()
          .Name("engram_timer_actions_total")
          .Help("What the timers did: expired_entries, dropped_branch_saves, reminders_sent, reminders_recovered")
          .Register(registry);
  prometheus::Counter& expired = timer_actions.Add({{"action", "expired_entries"}});
  prometheus::Counter& dropped_saves = timer_actions.Add({{"action", "dropped_branch_saves"}});
  prometheus::Counter& reminders_sent = timer_actions.Add({{"action", "reminders_sent"}});
  prometheus::Counter& reminders_recovered = timer_actions.Add({{"action", "reminders_recovered"}});
  prometheus::Counter& timer_rounds = prometheus::BuildCounter()
                                          .Name("engram_timer_rounds_total")
                                          .Help("Timers rounds run to their end (the store had caught up with the log)")
                                          .Register(registry)
                                          .Add({});
  std::atomic<std::uint64_t> applied_total{0};
  std::atomic<std::uint64_t> dlq_total{0};
  // Family::Add is thread-safe, but keeping label sets stable is simpler under one lock.
  std::mutex mutex;
};

metrics::metrics() : impl_(std::make_unique<impl>()) {}
metrics::~metrics() = default;

void metrics::count_applied(std::uint64_t n) {
  impl_->applied.Increment(static_cast<double>(n));
  impl_->applied_total += n;
}
void metrics::count_duplicates(std::uint64_t n) { impl_->duplicates.Increment(static_cast<double>(n)); }
void metrics::count_skipped(std::uint64_t n) { impl_->skipped.Increment(static_cast<double>(n)); }
void metrics::count_dead_letter(std::string_view kind) {
  std::lock_guard lock(impl_->mutex);
  impl_->dlq.Add({{"reason", std::string(kind)}}).Increment();
  ++impl_->dlq_total;
}
void metrics::count_actor_restart(std::string_view actor) {
  std::lock_guard lock(impl_->actors_mutex);
  impl_->actor_restarts.Add({{"actor", std::string(actor)}}).Increment();
  auto it = impl_->actor_figures.find(actor);
  if (it == impl_->actor_figures.end())
    it = impl_->actor_figures.emplace(std::string(actor), actor_figures{}).first;
  ++it->second.restarts;
}
void metrics::count_actor_message(std::string_view actor, double busy_seconds, std::size_t mailbox) {
  std::lock_guard lock(impl_->actors_mutex);
  auto s = impl_->actor_series_of.find(actor);
  if (s == impl_->actor_series_of.end()) {
    const std::map<std::string, std::string> label{{"actor", std::string(actor)}};
    s = impl_->actor_series_of
            .emplace(std::string(actor),
                     impl::actor_series{&impl_->actor_messages.Add(label), &impl_->actor_busy.Add(label),
                                        &impl_->actor_mailbox.Add(label)})
            .first;
  }
  s->second.messages->Increment();
  s->second.busy->Increment(busy_seconds);
  s->second.mailbox->Set(static_cast<double>(mailbox));
  auto f = impl_->actor_figures.find(actor);
  if (f == impl_->actor_figures.end())
    f = impl_->actor_figures.emplace(std::string(actor), actor_figures{}).first;
  ++f->second.messages;
  f->second.busy_seconds += busy_seconds;
  f->second.mailbox = mailbox;
}
std::map<std::string, metrics::actor_figures> metrics::actors() const {
  std::lock_guard lock(impl_->actors_mutex);
  return {impl_->actor_figures.begin(), impl_->actor_figures.end()};
}
void metrics::count_sequenced(std::uint64_t n) { impl_->sequenced.Increment(static_cast<double>(n)); }
void metrics::count_extraction(std::uint64_t entries, std::uint64_t dropped, std::uint64_t suspicious,
                               std::uint64_t dropped_injected) {
  impl_->dropped_injected.Increment(static_cast<double>(dropped_injected));
  impl_->kept.Increment(static_cast<double>(entries));
  impl_->dropped.Increment(static_cast<double>(dropped));
  impl_->suspicious.Increment(static_cast<double>(suspicious));
}
void metrics::count_message_class(std::string_view cls) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->messages_by_class.Add({{"class", std::string(cls)}}).Increment();
  }
  const std::size_t i = cls == "person" ? 0 : cls == "bulk" ? 1 : 2;
  ++impl_->by_class[i];
}
std::array<std::uint64_t, 3> metrics::messages_by_class() const {
  return {impl_->by_class[0].load(), impl_->by_class[1].load(), impl_->by_class[2].load()};
}
void metrics::count_llm_fallback(std::string_view reason) {
  std::lock_guard lock(impl_->mutex);
  impl_->llm_fallback.Add({{"reason", std::string(reason)}}).Increment();
}
void metrics::count_embedding_failure() { impl_->embedding_failures.Increment(); }
void metrics::count_resolution(std::string_view outcome, std::uint64_t contradictions) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->resolutions.Add({{"outcome", std::string(outcome)}}).Increment();
  }
  impl_->contradictions.Increment(static_cast<double>(contradictions));
}
void metrics::count_command(std::string_view op) {
  std::lock_guard lock(impl_->mutex);
  impl_->commands.Add({{"op", std::string(op)}}).Increment();
}
void metrics::count_timer_round(std::uint64_t expired, std::uint64_t dropped_saves, std::uint64_t reminders_sent,
                                std::uint64_t reminders_recovered) {
  impl_->timer_rounds.Increment();
  impl_->expired.Increment(static_cast<double>(expired));
  impl_->dropped_saves.Increment(static_cast<double>(dropped_saves));
  impl_->reminders_sent.Increment(static_cast<double>(reminders_sent));
  impl_->reminders_recovered.Increment(static_cast<double>(reminders_recovered));
}
void metrics::set_extract_partitions(std::size_t n) { impl_->extract_partitions.Set(static_cast<double>(n)); }
void metrics::set_index_size(std::uint64_t vectors) { impl_->index_size.Set(static_cast<double>(vectors)); }
void metrics::set_event_streams(std::size_t open) { impl_->event_streams.Set(static_cast<double>(open)); }
void metrics::observe_apply_latency(double seconds) { impl_->latency.Observe(seconds); }

void metrics::set_rocksdb(const std::map<std::string, std::uint64_t>& stats) {
  for (const auto& [name, value] : stats)
    impl_->rocksdb.Add({{"name", name}}).Set(static_cast<double>(value));
}

void metrics::set_memory(const std::map<std::string, std::uint64_t>& parts) {
  for (const auto& [part, bytes] : parts)
    impl_->memory.Add({{"part", part}}).Set(static_cast<double>(bytes));
}

void metrics::set_recall_stages(const std::map<std::string, double>& seconds) {
  for (const auto& [stage, s] : seconds)
    impl_->recall_stages.Add({{"stage", stage}}).Set(s);
}

void metrics::add_apply_step(std::string_view step, double seconds) {
  // The three steps' counters are made once: no label look-up per record.
  auto& m = *impl_;
  (step == "dedup" ? m.step_dedup : step == "contradiction" ? m.step_contradiction : m.step_write).Increment(seconds);
}

std::map<std::string, double> metrics::apply_steps() const {
  return {{"contradiction", impl_->step_contradiction.Value()},
          {"dedup", impl_->step_dedup.Value()},
          {"write", impl_->step_write.Value()}};
}

void metrics::set_heap() {
  const auto h = heap_now();
  impl_->allocator.Add({{"name", h.allocator}}).Set(1);
  impl_->heap_in_use.Set(static_cast<double>(h.in_use));
  impl_->heap_free.Set(static_cast<double>(h.free));
  impl_->heap_mmapped.Set(static_cast<double>(h.mapped));
}

void metrics::set_embedding_cache(std::size_t entries, std::uint64_t hits, std::uint64_t misses) {
  impl_->embedding_cache.Add({{"kind", "entries"}}).Set(static_cast<double>(entries));
  impl_->embedding_cache.Add({{"kind", "hits"}}).Set(static_cast<double>(hits));
  impl_->embedding_cache.Add({{"kind", "misses"}}).Set(static_cast<double>(misses));
}

void metrics::observe_mcp(std::string_view tool, std::string_view outcome, double seconds) {
  std::lock_guard lock(impl_->mcp_mutex);  // Family::Add is thread-safe; the lock keeps the two in step
  impl_->mcp_requests.Add({{"tool", std::string(tool)}, {"outcome", std::string(outcome)}}).Increment();
  impl_->mcp_latency
      .Add({{"tool", std::string(tool)}},
           prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10})
      .Observe(seconds);
}
void metrics::set_lag(std::int32_t partition, std::int64_t lag) {
  std::lock_guard lock(impl_->mutex);
  impl_->lag.Add({{"partition", std::to_string(partition)}}).Set(static_cast<double>(lag));
}
void metrics::set_cluster(const cluster_figures& f) {
  std::lock_guard lock(impl_->mutex);
  for (const auto& [p, state] : f.states) {
    const auto partition = std::to_string(p);
    for (const char* s : {"ready", "restoring", "not_owned"})
      impl_->partition_state.Add({{"partition", partition}, {"state", s}}).Set(state == s ? 1 : 0);
    const auto left = f.remaining.find(p);
    impl_->restore_remaining.Add({{"partition", partition}})
        .Set(left == f.remaining.end() ? 0 : static_cast<double>(left->second));
  }
  for (const auto& [p, lag] : f.standby_lag)
    impl_->standby_lag.Add({{"partition", std::to_string(p)}}).Set(static_cast<double>(lag));
  for (auto p : impl_->standby_partitions)  // followed no longer: no series
    if (!f.standby_lag.count(p))
      impl_->standby_lag.Remove(&impl_->standby_lag.Add({{"partition", std::to_string(p)}}));
  impl_->standby_partitions.clear();
  for (const auto& [p, _] : f.standby_lag)
    impl_->standby_partitions.insert(p);
  impl_->cluster.Add({{"figure", "members"}}).Set(static_cast<double>(f.members));
  impl_->cluster.Add({{"figure", "forwarded"}}).Set(static_cast<double>(f.forwarded));
  impl_->cluster.Add({{"figure", "retried"}}).Set(static_cast<double>(f.retried));
  impl_->cluster.Add({{"figure", "relaying"}}).Set(static_cast<double>(f.relaying));
  impl_->cluster.Add({{"figure", "dropped"}}).Set(static_cast<double>(f.dropped));
}
void metrics::set_gap(const std::string& topic, std::int32_t partition, std::int64_t records) {
  std::lock_guard lock(impl_->mutex);
  impl_->gaps.Add({{"topic", topic}, {"partition", std::to_string(partition)}}).Set(static_cast<double>(records));
}
void metrics::set_ready(bool ready) { impl_->ready.Set(ready ? 1 : 0); }
std::uint64_t metrics::applied() const { return impl_->applied_total.load(); }
std::uint64_t metrics::dead_lettered() const { return impl_->dlq_total.load(); }

std::string metrics::render() const { return prometheus::TextSerializer().Serialize(impl_->registry.Collect()); }

}  // namespace engram::services
