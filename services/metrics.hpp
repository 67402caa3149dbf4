#pragma once
// Prometheus metrics of one engramd. Thread-safe: every actor and thread may update it.

#include "reading/observer.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace engram::services {

class metrics final : public reading::read_observer {
public:
  metrics();
  ~metrics();
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  /// Counts store outcomes of engram-log records.
  void count_applied(std::uint64_t n);
  void count_duplicates(std::uint64_t n);
  void count_skipped(std::uint64_t n);
  /// Counts an inbound event sent to the dead-letter topic; `kind` is the decode error kind.
  void count_dead_letter(std::string_view kind);
  /// A supervised actor ("mcp-saves", "timers") started again (engram_actor_restarts_total{actor}).
  void count_actor_restart(std::string_view actor);
  /// One message an actor handled (one run of a periodic actor): how long it took, and how
  /// many messages were left in its mailbox when it was done (engram_actor_messages_total,
  /// engram_actor_busy_seconds_total, engram_actor_mailbox, each by actor).
  void count_actor_message(std::string_view actor, double busy_seconds, std::size_t mailbox);
  struct actor_figures {
    std::uint64_t messages = 0;
    double busy_seconds = 0;
    /// Left in its mailbox after the last message it handled.
    std::size_t mailbox = 0;
    std::uint64_t restarts = 0;
  };
  /// Each actor's figures since start, by name (/v1/stats "actors").
  [[nodiscard]] std::map<std::string, actor_figures> actors() const;
  /// Counts inbound events appended to engram-log by the sequencer.
  void count_sequenced(std::uint64_t n);
  /// Partitions of inbound-messages the extract stage of this process reads now.
  void set_extract_partitions(std::size_t n);
  /// Counts what extraction kept, dropped below extraction.confidence_threshold, marked
  /// suspicious (prompt-injection patterns in the source), and dropped as the injected
  /// instruction itself.
  void count_extraction(std::uint64_t entries, std::uint64_t dropped_low_confidence, std::uint64_t suspicious,
                        std::uint64_t dropped_injected) override;
  /// Counts a message the LLM extractor could not read (the rules read it instead).
  void count_llm_fallback(std::string_view reason) override;
  /// One message extracted, by class (person, bulk, spam; extractor/bulk.hpp).
  void count_message_class(std::string_view cls) override;
  /// Messages extracted since start by class: person, bulk, spam.
  [[nodiscard]] std::array<std::uint64_t, 3> messages_by_class() const;
  /// Counts a batch whose entries could not be embedded (stored without vectors).
  void count_embedding_failure() override;
  /// Counts what dedup and contradiction decided for a new entry: outcome is created,
  /// merged, linked or superseded; `contradictions` new contradicts relations.
  void count_resolution(std::string_view outcome, std::uint64_t contradictions);
  /// Counts a knowledge command applied by the store, by op (validate, resolve_review,
  /// merge_branch, discard_branch, expire, reminder_sent).
  void count_command(std::string_view op);
  /// Counts one timers round that ran (engram_timer_rounds_total) and what it did: entries
  /// expired, branch saves dropped, reminders sent, reminders found sent but unrecorded
  /// (recorded instead of sent again).
  void count_timer_round(std::uint64_t expired, std::uint64_t dropped_saves, std::uint64_t reminders_sent,
                         std::uint64_t reminders_recovered);
  /// Vectors searchable in the per-organisation indexes.
  void set_index_size(std::uint64_t vectors);
  /// Seconds from receiving a record off Kafka to its batch being durable in RocksDB.
  void observe_apply_latency(double seconds);
  /// One MCP request: `tool` (or the method when not a tools/call), its outcome (ok,
  /// tool_error, rpc_error, or the HTTP status when not 200) and how long it took.
  void observe_mcp(std::string_view tool, std::string_view outcome, double seconds);
  /// Consumer lag of one engram-log partition (high-water mark - next offset to apply).
  void set_lag(std::int32_t partition, std::int64_t lag);
  /// store.cluster: each engram-log partition's state here (1 on the series of its state:
  /// ready, restoring, not_owned), the records a restoring one still has to apply, the live
  /// members this one hears of, and its requests forwarded and answered "retry".
  struct cluster_figures {
    std::map<std::int32_t, std::string> states;
    std::map<std::int32_t, std::int64_t> remaining;
    std::size_t members = 0;
    std::uint64_t forwarded = 0;
    std::uint64_t retried = 0;
    /// Event streams relayed from their owners now.
    std::size_t relaying = 0;
    /// Partitions this member let go and dropped from its store since start.
    std::uint64_t dropped = 0;
    /// Partitions followed here as a standby: records behind their high-water mark.
    std::map<std::int32_t, std::int64_t> standby_lag;
  };
  void set_cluster(const cluster_figures& f);
  /// Records of the gap a partition is stopped at (0: none, or accepted).
  void set_gap(const std::string& topic, std::int32_t partition, std::int64_t records);
  void set_ready(bool ready);
  /// GET /mcp event streams open.
  void set_event_streams(std::size_t open);
  /// RocksDB figures (graph_store::engine_stats), as gauges engram_rocksdb_<name>.
  void set_rocksdb(const std::map<std::string, std::uint64_t>& stats);
  /// Bytes of the in-memory indexes by part (graph_store::memory_stats, and "entry_vectors"
  /// from dedup), as engram_memory_bytes{part}.
  void set_memory(const std::map<std::string, std::uint64_t>& parts);
  /// The process's heap as its allocator sees it (heap.hpp): bytes in use by the program,
  /// free but held, and mapped (engram_process_heap_bytes{kind}). RSS beyond in use + free is
  /// code, stacks and memory the allocator does not manage.
  void set_heap();
  /// Seconds recall spent in each stage since start (query::recall_stage), as
  /// engram_recall_stage_seconds_total{stage}.
  void set_recall_stages(const std::map<std::string, double>& seconds);
  /// The embedding cache: texts held, and texts answered from it / computed since start
  /// (engram_embedding_cache{kind="entries|hits|misses"}).
  void set_embedding_cache(std::size_t entries, std::uint64_t hits, std::uint64_t misses);

  /// Seconds one record spent in a named step of its store applier ("dedup",
  /// "contradiction"; anything else counts as "write"), added to
  /// engram_apply_step_seconds_total{step}.
  void add_apply_step(std::string_view step, double seconds);
  /// Seconds spent in each apply step since start.
  [[nodiscard]] std::map<std::string, double> apply_steps() const;

  [[nodiscard]] std::uint64_t applied() const;
  [[nodiscard]] std::uint64_t dead_lettered() const;

  /// The Prometheus text exposition format (version 0.0.4).
  [[nodiscard]] std::string render() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace engram::services
