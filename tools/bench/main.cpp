// engram_bench: Engram's benchmarks. They print figures; nothing here asserts a speed.
//   engram_bench [ingest|store] [--events N] [--runs R]   (no subcommand: all of them)
#include "actors/engine/engine.hpp"
#include "actors/extractor/extract.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/sequencer.hpp"
#include "tools/bench/evaluation.hpp"
#include "tools/bench/synthetic.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace {

using namespace engram;
using clock_type = std::chrono::steady_clock;

/// Organisation ids chosen so that keys spread over all 4 partitions.
const std::vector<std::string> orgs{"acme", "globex", "initech", "umbrella", "hooli", "vandelay", "stark", "wayne"};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

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
  double log_to_store = 0;   // events/s, engram-log -> RocksDB
  double end_to_end = 0;     // events/s, inbound-messages -> sequencer -> engram-log -> RocksDB
};

run_result run_once(std::size_t n, int run) {
  run_result r;
  std::string error;
  auto broker = ingest::embedded_broker::start({"inbound-messages", "engram-log", "engram-reminders", "engram-dlq"}, 4,
                                               &error);
  if (!broker)
    throw std::runtime_error(error);
  auto dir = std::filesystem::temp_directory_path() / ("engram-bench-" + std::to_string(::getpid()) + "-" +
                                                       std::to_string(run));
  std::filesystem::remove_all(dir);
  config::engram_config cfg;
  cfg.kafka.brokers = broker->bootstrap();
  cfg.storage.path = dir.string();
  cfg.samples.load = false;
  cfg.http.listen = "127.0.0.1:0";
  auto producer = ingest::kafka_producer::create(broker->bootstrap(), {}, &error);
  if (!producer)
    throw std::runtime_error(error);

  // Phase 1: records already on engram-log; the engine starts and drains them.
  auto log_events = synthetic::events(n, 200, orgs);
  for (auto& ev : log_events)
    ev.replace(ev.find("\"evt-"), 5, "\"log-");
  for (const auto& ev : log_events)
    if (!producer->produce("engram-log", synthetic::organization_of(ev), ev, {{ingest::kind_header, ingest::kind_inbound_message}}))
      throw std::runtime_error(producer->last_error());
  if (!producer->flush(std::chrono::seconds(60)))
    throw std::runtime_error(producer->last_error());
  auto e = engine::engine::start(cfg, {}, &error);
  if (!e)
    throw std::runtime_error(error);
  if (!wait_applied(*e, 1, std::chrono::seconds(60)))
    throw std::runtime_error("nothing applied");
  auto t0 = clock_type::now();
  auto first = e->metrics().applied();
  if (!wait_applied(*e, n, std::chrono::seconds(300)))
    throw std::runtime_error("log phase did not finish");
  r.log_to_store = static_cast<double>(n - first) / std::chrono::duration<double>(clock_type::now() - t0).count();

  // Phase 2: wait until the sequencer owns inbound (one warm-up event), then the whole path.
  auto in_events = synthetic::events(n + 1, 200, orgs);
  if (!producer->produce("inbound-messages", synthetic::organization_of(in_events[0]), in_events[0]) ||
      !producer->flush(std::chrono::seconds(10)) || !wait_applied(*e, n + 1, std::chrono::seconds(60)))
    throw std::runtime_error("warm-up event not applied");
  auto t1 = clock_type::now();
  for (std::size_t i = 1; i <= n; ++i)
    if (!producer->produce("inbound-messages", synthetic::organization_of(in_events[i]), in_events[i]))
      throw std::runtime_error(producer->last_error());
  if (!producer->flush(std::chrono::seconds(60)) || !wait_applied(*e, 2 * n + 1, std::chrono::seconds(300)))
    throw std::runtime_error("end-to-end phase did not finish");
  r.end_to_end = static_cast<double>(n) / std::chrono::duration<double>(clock_type::now() - t1).count();
  e->stop();
  e.reset();
  std::filesystem::remove_all(dir);
  return r;
}

/// The store alone: decode + apply, one WriteBatch per event, no Kafka.
int bench_store(std::size_t n, int runs) {
  std::vector<double> rates;
  auto evs = synthetic::events(n, 200, orgs);
  for (int run = 0; run < runs; ++run) {
    auto dir = std::filesystem::temp_directory_path() / ("engram-bench-store-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::string error;
    auto store = storage::open_graph_store({dir.string()}, &error);
    if (!store)
      throw std::runtime_error(error);
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
      schemas::inbound_message m;
      if (auto bad = schemas::decode(evs[i], {}, m))
        throw std::runtime_error(bad->to_string());
      storage::apply_outcome out{};
      if (store->apply({"engram-log", 0, static_cast<std::int64_t>(i), "bench"}, &m, &out) != storage::errc::ok)
        throw std::runtime_error("apply failed");
    }
    rates.push_back(static_cast<double>(n) / std::chrono::duration<double>(clock_type::now() - t0).count());
    std::printf("  run %d: %.0f events/s\n", run + 1, rates.back());
    store.reset();
    std::filesystem::remove_all(dir);
  }
  std::printf("store (decode + apply, WAL on, no fsync, 1 thread, %zu events, median of %d runs): %.0f events/s\n", n,
              runs, median(rates));
  return 0;
}

/// Rules extraction + validation over a JSONL file of inbound events, one thread.
int bench_extract_speed(const std::string& path, int runs) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<schemas::inbound_message> msgs;
  std::string line;
  while (std::getline(in, line)) {
    schemas::inbound_message m;
    if (!schemas::decode(line, {}, m))
      msgs.push_back(std::move(m));
  }
  std::vector<double> rates;
  std::size_t entries = 0;
  for (int r = 0; r < runs; ++r) {
    entries = 0;
    auto t0 = clock_type::now();
    for (const auto& m : msgs)
      entries += extractor::extract_validated(m, {}).entries.size();
    rates.push_back(static_cast<double>(msgs.size()) / std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::printf("rules extraction on %s: %zu messages, %.2f entries/message, %.0f messages/s on 1 core (median of %d)\n",
              path.c_str(), msgs.size(), msgs.empty() ? 0.0 : double(entries) / double(msgs.size()), median(rates), runs);
  return 0;
}

int bench_extraction() {
  auto r = evaluation::evaluate("tests/data/extraction/labelled.jsonl", {});
  if (!r.error.empty())
    throw std::runtime_error(r.error);
  std::printf("extraction quality on tests/data/extraction/labelled.jsonl (rules + validator):\n%s", r.table().c_str());
  return 0;
}

int bench_ingest(std::size_t n, int runs) {
  std::vector<double> log_rates, e2e_rates;
  for (int i = 0; i < runs; ++i) {
    auto r = run_once(n, i);
    log_rates.push_back(r.log_to_store);
    e2e_rates.push_back(r.end_to_end);
    std::printf("  run %d: engram-log -> RocksDB %.0f events/s; inbound -> sequencer -> engram-log -> RocksDB %.0f events/s\n",
                i + 1, r.log_to_store, r.end_to_end);
  }
  std::printf("ingest (pass-through pipeline, %zu events of ~%zu bytes, %u cores, median of %d runs):\n", n,
              synthetic::events(1, 200, orgs)[0].size(), std::thread::hardware_concurrency(), runs);
  std::printf("  engram-log -> RocksDB:                          %.0f events/s\n", median(log_rates));
  std::printf("  inbound -> sequencer -> engram-log -> RocksDB:  %.0f events/s\n", median(e2e_rates));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{"engram_bench: Engram's benchmarks (figures, not pass/fail)"};
  app.require_subcommand(0, 1);
  auto* ingest = app.add_subcommand("ingest", "Events/s from Kafka to RocksDB through the pipeline");
  auto* store = app.add_subcommand("store", "Events/s applied to RocksDB by the store alone");
  auto* quality = app.add_subcommand("extraction", "Extraction quality on the labelled set (run from the source root)");
  auto* speed = app.add_subcommand("extract-speed", "Rules extraction messages/s over a JSONL file of inbound events");
  std::string speed_file;
  speed->add_option("file", speed_file, "JSONL of inbound events")->required();
  std::size_t events = 5000;
  int runs = 5;
  for (auto* sc : {ingest, store, speed}) {
    sc->add_option("--events", events, "Events per run (the mock broker keeps ~5 MiB per partition)")
        ->capture_default_str();
    sc->add_option("--runs", runs, "Runs; the median is reported")->capture_default_str();
  }
  CLI11_PARSE(app, argc, argv);
  try {
    if (*store)
      return bench_store(events, runs);
    if (*quality)
      return bench_extraction();
    if (*speed)
      return bench_extract_speed(speed_file, runs);
    if (*ingest)
      return bench_ingest(events, runs);
    bench_extraction();
    bench_store(events, runs);
    return bench_ingest(events, runs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engram_bench: %s\n", e.what());
    return 1;
  }
}
