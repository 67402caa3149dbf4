// Ingest through one engine: engram-log -> store, inbound -> ... -> store, replay (ingest_bench.hpp).
#include "tools/bench/ingest_bench.hpp"

#include "actors/engine/engine.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/producer.hpp"
#include "config/config.hpp"
#include "embedding/embedder.hpp"
#include "net/http.hpp"
#include "reading/read.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/log_record.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/pipeline_bench.hpp"
#include "evaluation/synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;

bool wait_applied(engine::engine& e, std::uint64_t n, std::chrono::seconds timeout) {
  auto deadline = clock_type::now() + timeout;
  while (e.metrics().applied() < n) {
    if (clock_type::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return true;
}

struct run_result {
  double log_to_store = 0;    // events/s, engram-log -> RocksDB
  double end_to_end = 0;      // events/s, inbound-messages -> sequencer -> engram-log -> RocksDB
  double replay = 0;          // records/s, a replay of the whole engram-log into a new store
  std::int64_t replayed = 0;  // records the replay read
  double replay_start_s = 0;  // from the replay engine's start to its first applied record
  /// Texts the encoder computed in the end-to-end phase (embedding-cache misses; the type
  /// model's and the passages' included), per message.
  double encoded_per_message = 0;
};

/// The embedding cache's misses so far, from the engine's /metrics.
double encoder_misses(engine::engine& e) {
  auto m = net::fetch("GET", "http://127.0.0.1:" + std::to_string(e.http_port()) + "/metrics");
  if (m.status != 200)
    throw std::runtime_error("GET /metrics: " + std::to_string(m.status) + " " + m.error);
  return metric_sum(m.body, "engram_embedding_cache{kind=\"misses\"}");
}

/// `events` as today's extract stage appends them to engram-log (rules extraction, int8
/// vectors, format 2): the store applies them and never reads a message again. The encoder
/// is loaded once, from the first call's `model_path`.
std::vector<schemas::encoded_record> extracted_records(const std::vector<std::string>& events,
                                                       const std::string& model_path) {
  static std::shared_ptr<const embedding::embedder> encoder =
      or_throw(embedding::use_lite_int8_embedder::load(model_path));
  std::vector<schemas::inbound_message> msgs;
  for (const auto& ev : events) {
    schemas::inbound_message m;
    if (auto bad = schemas::decode(ev, {}, m))
      throw std::runtime_error(bad->to_string());
    msgs.push_back(std::move(m));
  }
  reading::reader_context ctx{{}, encoder, nullptr};
  ctx.options.validator.passages = passages_used();
  auto read = reading::read_messages(msgs, ctx, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<schemas::encoded_record> out;
  for (std::size_t i = 0; i < msgs.size(); ++i)
    out.push_back(schemas::encode(
        schemas::log_payload{schemas::extracted_message{std::move(msgs[i]), std::move(read[i]), encoder->name()}}));
  return out;
}

/// Phase 1 drains `log_events` already on engram-log (as the extract stage writes them); phase 2 sends `in_events` (the first
/// is a warm-up) through inbound-messages, the sequencer and engram-log. With `replay`,
/// phase 3 stops the engine and rebuilds a new store from the whole of engram-log as
/// `engramctl replay` does (own consumer group, replay mode), engine start included.
run_result run_once(const std::vector<std::string>& log_events, const std::vector<std::string>& in_events, int run,
                    const std::string& model_path, bool replay = false) {
  run_result r;
  const std::size_t n = log_events.size();
  if (in_events.size() != n + 1)
    throw std::runtime_error("run_once: in_events must hold one warm-up event more than log_events");
  auto broker = test_broker(4);
  auto dir = std::filesystem::temp_directory_path() /
             ("engram-bench-" + std::to_string(::getpid()) + "-" + std::to_string(run));
  auto cfg = engine_config(broker->bootstrap(), dir.string(), model_path);
  auto producer = or_throw(ingest::kafka_producer::create(broker->bootstrap(), {}));

  // Phase 1: records already on engram-log; the engine starts and drains them.
  for (const auto& rec : extracted_records(log_events, model_path))
    if (!producer->produce("engram-log", rec.key, rec.value, {{schemas::kind_header, rec.kind}}))
      throw std::runtime_error(producer->last_error());
  if (!producer->flush(std::chrono::seconds(60)))
    throw std::runtime_error(producer->last_error());
  const auto t_start = clock_type::now();
  auto e = or_throw(engine::engine::start(cfg, {}));
  if (!wait_applied(*e, 1, std::chrono::seconds(60)))
    throw std::runtime_error("nothing applied");
  auto t0 = clock_type::now();
  auto first = e->metrics().applied();
  if (!wait_applied(*e, n, std::chrono::seconds(1800)))
    throw std::runtime_error("log phase did not finish: " + std::to_string(e->metrics().applied()) + " of " +
                             std::to_string(n) + " applied");
  // Timed from the first applied batch, which is left out (the engine's start is not timed);
  // when that batch was everything (small runs), from the engine's start instead.
  r.log_to_store = first < n
                       ? static_cast<double>(n - first) / std::chrono::duration<double>(clock_type::now() - t0).count()
                       : static_cast<double>(n) / std::chrono::duration<double>(clock_type::now() - t_start).count();

  // Phase 2: wait until the sequencer owns inbound (one warm-up event), then the whole path.
  if (!producer->produce("inbound-messages", evaluation::synthetic::organization_of(in_events[0]), in_events[0]) ||
      !producer->flush(std::chrono::seconds(10)) || !wait_applied(*e, n + 1, std::chrono::seconds(60)))
    throw std::runtime_error("warm-up event not applied");
  const double misses_before = encoder_misses(*e);
  auto t1 = clock_type::now();
  for (std::size_t i = 1; i <= n; ++i)
    if (!producer->produce("inbound-messages", evaluation::synthetic::organization_of(in_events[i]), in_events[i]))
      throw std::runtime_error(producer->last_error());
  if (!producer->flush(std::chrono::seconds(60)) || !wait_applied(*e, 2 * n + 1, std::chrono::seconds(1800)))
    throw std::runtime_error("end-to-end phase did not finish");
  r.end_to_end = static_cast<double>(n) / std::chrono::duration<double>(clock_type::now() - t1).count();
  r.encoded_per_message = (encoder_misses(*e) - misses_before) / static_cast<double>(n);
  e->stop();
  e.reset();
  std::filesystem::remove_all(dir);
  if (replay) {  // on the same broker: it holds the engram-log to replay
    const auto rf = replay_log(cfg);
    r.replay = rf.records_per_s;
    r.replayed = rf.records;
    r.replay_start_s = rf.start_s;
  }
  return r;
}

}  // namespace

int bench_ingest(const std::string& model_path, std::size_t n, int runs) {
  std::vector<double> log_rates, e2e_rates;
  auto log_events = evaluation::synthetic::events(n, 200, synthetic_organisations);
  for (auto& ev : log_events)
    ev.replace(ev.find("\"evt-"), 5, "\"log-");
  auto in_events = evaluation::synthetic::events(n + 1, 200, synthetic_organisations);
  for (int i = 0; i < runs; ++i) {
    auto r = run_once(log_events, in_events, i, model_path);
    log_rates.push_back(r.log_to_store);
    e2e_rates.push_back(r.end_to_end);
    std::printf(
        "  run %d: engram-log -> RocksDB %.0f events/s; inbound -> sequencer -> engram-log -> RocksDB %.0f events/s\n",
        i + 1, r.log_to_store, r.end_to_end);
  }
  std::printf(
      "ingest (pipeline with rules extraction, USE Lite embeddings, dedup and contradiction, %zu events of ~%zu bytes, "
      "%u cores, median of %d runs):\n",
      n, evaluation::synthetic::events(1, 200, synthetic_organisations)[0].size(), std::thread::hardware_concurrency(),
      runs);
  std::printf("  engram-log -> RocksDB:                          %.0f events/s\n", median(log_rates));
  std::printf("  inbound -> sequencer -> engram-log -> RocksDB:  %.0f events/s\n", median(e2e_rates));
  return 0;
}

/// The int8 encoder's CPU time per ham sentence, on this thread alone, embedding 800 of
/// them in runs of 8 (about a message's worth; the pipeline embeds a message's texts
/// together), after a warm-up run.
double encoder_seconds_per_sentence(const std::string& model_path, const std::string& data_dir) {
  auto encoder = or_throw(embedding::use_lite_int8_embedder::load(model_path));
  encoder->set_two_threads(false);
  const auto sentences = ham_sentences(data_dir, 808);
  if (sentences.size() < 16)
    throw std::runtime_error("too few ham sentences in " + data_dir);
  std::vector<std::string_view> views(sentences.begin(), sentences.end());
  auto run = [&](std::size_t from) {
    return or_throw(encoder->embed(std::span<const std::string_view>(views).subspan(from, 8)));
  };
  run(0);
  const double c0 = thread_cpu_seconds();
  std::size_t embedded = 0;
  for (std::size_t from = 8; from + 8 <= views.size(); from += 8, embedded += 8)
    run(from);
  return (thread_cpu_seconds() - c0) / static_cast<double>(embedded);
}

ham_ingest_figures bench_ingest_ham(const std::string& model_path, const std::string& data_dir, int runs,
                                    std::size_t limit) {
  // Different messages in the two phases: the embedding cache must not make phase 2 a replay.
  auto msgs = ham_messages(data_dir, "ham");
  // Four organisations whose keys land on the four partitions (librdkafka's crc32 % 4:
  // initech 0, fabrikam 1, globex 2, cyberdyne 3): the mock broker keeps about 5 MiB a
  // partition, and an extracted-message record (entries, passages, vectors) is ~10 KB.
  static const char* spread[] = {"initech", "fabrikam", "globex", "cyberdyne"};
  for (std::size_t i = 0; i < msgs.size(); ++i)
    msgs[i].organization_id = spread[i % 4];
  limit = std::min(limit, (msgs.size() - 1) / 2);
  std::vector<std::string> log_events, in_events;
  for (std::size_t i = 0; i < limit; ++i)
    log_events.push_back(schemas::to_json(msgs[i]));
  for (std::size_t i = limit; i < 2 * limit + 1; ++i)  // the first is the warm-up
    in_events.push_back(schemas::to_json(msgs[i]));
  std::vector<double> log_rates, e2e_rates, replay_rates, encoded;
  ham_ingest_figures f;
  for (int i = 0; i < runs; ++i) {
    auto r = run_once(log_events, in_events, 100 + i, model_path, /*replay=*/true);
    log_rates.push_back(r.log_to_store);
    e2e_rates.push_back(r.end_to_end);
    replay_rates.push_back(r.replay);
    encoded.push_back(r.encoded_per_message);
    f.replayed = r.replayed;
    std::printf(
        "  run %d: engram-log -> RocksDB %.0f messages/s; inbound -> ... -> RocksDB %.0f messages/s; "
        "replay of %lld records %.0f records/s (first applied %.1f s after its start)\n",
        i + 1, r.log_to_store, r.end_to_end, static_cast<long long>(r.replayed), r.replay, r.replay_start_s);
  }
  std::printf(
      "ingest of SpamAssassin ham (%zu real messages; rules extraction, USE Lite embeddings, dedup, "
      "contradiction; %u cores, median of %d runs):\n",
      log_events.size(), std::thread::hardware_concurrency(), runs);
  std::printf("  engram-log -> RocksDB:                          %.0f messages/s\n", median(log_rates));
  std::printf("  inbound -> sequencer -> engram-log -> RocksDB:  %.0f messages/s\n", median(e2e_rates));
  std::printf("  replay of engram-log into a new store:          %.0f records/s\n", median(replay_rates));
  // The encoder's own limit for what those messages needed embedded: the texts it computed
  // per message (cache misses) times its time for a ham sentence on one core, over every core.
  const double per_sentence = encoder_seconds_per_sentence(model_path, data_dir);
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  f.encoded_per_message = median(encoded);
  if (f.encoded_per_message <= 0)
    throw std::runtime_error("the embedding cache counted no computed text: no encoder limit to give");
  f.encoder_limit = cores / (f.encoded_per_message * per_sentence);
  std::printf(
      "  the encoder's own limit: %.2f texts computed a message x %.3f ms a ham sentence (1 core, runs of 8) "
      "over %.0f cores = %.0f messages/s; end to end is %.0f %% of it\n",
      f.encoded_per_message, per_sentence * 1e3, cores, f.encoder_limit, 100.0 * median(e2e_rates) / f.encoder_limit);
  f.messages = log_events.size();
  f.log_to_store = median(log_rates);
  f.end_to_end = median(e2e_rates);
  f.replay = median(replay_rates);
  return f;
}

}  // namespace engram::bench
