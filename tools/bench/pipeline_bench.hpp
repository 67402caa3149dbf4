#pragma once
// Benchmarks of the whole pipeline on a backlog: inbound-messages -> extract stage ->
// engram-log -> store, in one engine on an in-process Kafka-protocol broker. They print
// figures; nothing here asserts a speed.

#include "config/config.hpp"
#include "base/result.hpp"

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace engram::bench {

/// The value of `r`; a bench cannot go on without it.
template <class T>
T or_throw(engram::result<T> r) {
  if (!r)
    throw std::runtime_error(r.error());
  return std::move(*r);
}

/// The configuration every benchmark engine starts with: the defaults, on `brokers`, a
/// store at `dir` (removed first), no samples, the converted model, any free port, bulk mail
/// read like any other (extraction.bulk: keep).
/// Whether the engines of the benchmarks run the entry-type model (extraction.type_model;
/// default true, as engramd).
void use_type_model(bool on);
[[nodiscard]] bool type_model_used();
/// Whether they keep passages (extraction.passages; default true, as engramd).
void use_passages(bool on);
/// The relation model and the sentence parser (extraction.relation_model; default off).
void use_relation_model(bool on);
/// The name model (extraction.name_model; default on, as engramd).
void use_name_model(bool on);
[[nodiscard]] bool passages_used();

/// The benchmarks' engine on `brokers` with its store at `dir` (kept as it is), any free
/// port, the encoder at `model_path`, bulk mail kept, the type model and passages as set.
config::engram_config engine_settings(const std::string& brokers, const std::string& dir,
                                      const std::string& model_path);
/// engine_settings() over an empty store (`dir` removed first).
config::engram_config engine_config(const std::string& brokers, const std::string& dir, const std::string& model_path);

/// A replay of the whole of engram-log into a new store, as `engramctl replay` does.
struct replay_figures {
  std::int64_t records = 0;  ///< records the replay read
  double records_per_s = 0;  ///< from its first applied record to its last
  double start_s = 0;        ///< from the engine's start to its first applied record (group join)
  double cpu_s = 0;          ///< CPU time of the process (every thread) over the same span
  double timed_records = 0;  ///< the records applied over that span
  [[nodiscard]] double cpu_ms_per_record() const { return timed_records > 0 ? 1000 * cpu_s / timed_records : 0; }
  std::uint32_t appliers = 1;  ///< store.appliers of the replaying engine
  /// Seconds the appliers spent in each named step (dedup, contradiction, write), whole replay.
  std::map<std::string, double> steps;
  /// CPU seconds by thread name over the timed span (engram-applier, engram-consumer, rdk:…).
  std::map<std::string, double> cpu_by_thread;
  std::uint64_t entries = 0;  ///< entries in the rebuilt store
  std::string digest;         ///< the rebuilt store's digest
  [[nodiscard]] double entries_per_s() const {
    return records > 0 ? records_per_s * double(entries) / double(records) : 0;
  }
};

/// Rebuilds a store from the whole of engram-log on `cfg`'s broker: its own consumer group,
/// replay mode, engine start included, into `cfg.storage.path` + "-replay" (removed after).
/// `appliers`: store.appliers of the replaying engine.
replay_figures replay_log(const config::engram_config& cfg, std::uint32_t appliers = 1);

/// The digest of the store at `dir` (opened read-only; the engine on it stopped).
std::string store_digest(const std::string& dir);

struct drain_figures {
  std::size_t messages = 0;
  double megabytes = 0;        ///< the events' JSON, as produced
  double first_applied_s = 0;  ///< from the first produce to the first applied event
  double seconds = 0;          ///< from the first produce to the last applied event
  double stop_s = 0;           ///< stop() while the backlog was being applied (when asked)
  std::size_t applied_at_stop = 0;
  std::string digest;  ///< the store's, once drained (with replay rounds)
  /// engram-log replayed into a new store, one replay with one store applier and one with two
  /// each round (`replay_rounds`): [0] one applier, [1] two, round by round.
  std::vector<replay_figures> replays[2];
  [[nodiscard]] double rate() const { return seconds > 0 ? double(messages) / seconds : 0; }
  [[nodiscard]] double megabytes_per_s() const { return seconds > 0 ? megabytes / seconds : 0; }
};

/// Starts an engine (default configuration: both roles, int8 encoder) on a new broker whose
/// topics have `partitions` partitions, waits until it owns inbound-messages (a warm-up event
/// applied), then produces `events` (keyed by organisation) at once and times their way
/// into the store. With `stop_midway`, stops the engine as soon as a tenth of them are
/// applied and times the stop instead (what SIGTERM does in engramd). With `replay_rounds`,
/// once drained, engram-log is replayed into a new store (replay_log) that many times with
/// one store applier and as many with two, interleaved (the order alternates by round, so a
/// drift of the machine weighs on both alike), and the live store's digest kept.
drain_figures drain(const std::vector<std::string>& events, int partitions, const std::string& model_path,
                    bool stop_midway = false, int replay_rounds = 0);

}  // namespace engram::bench
