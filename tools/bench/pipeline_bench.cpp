#include "tools/bench/pipeline_bench.hpp"

#include "actors/engine/engine.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/producer.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/synthetic.hpp"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <sys/resource.h>
#include <unistd.h>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;

/// use_type_model.
bool type_model_on = true;
}  // namespace

void use_type_model(bool on) { type_model_on = on; }

bool type_model_used() { return type_model_on; }

bool passages_on = true;
void use_passages(bool on) { passages_on = on; }
bool passages_used() { return passages_on; }

bool relation_model_on = false;
void use_relation_model(bool on) { relation_model_on = on; }

bool name_model_on = true;
void use_name_model(bool on) { name_model_on = on; }

config::engram_config engine_config(const std::string& brokers, const std::string& dir, const std::string& model_path) {
  std::filesystem::remove_all(dir);
  return engine_settings(brokers, dir, model_path);
}

config::engram_config engine_settings(const std::string& brokers, const std::string& dir,
                                      const std::string& model_path) {
  config::engram_config cfg;
  cfg.kafka.brokers = brokers;
  cfg.storage.path = dir;
  cfg.samples.load = false;
  cfg.embedder.model_path = model_path;
  cfg.http.listen = "127.0.0.1:0";
  // The pipeline's cost on mail as it comes: the ham and real-mail corpora are mostly list
  // traffic and spam, which the default (skip) would not read at all; the figures stay
  // comparable with the issue-15 table (engram_bench bulk measures what skip does).
  cfg.extraction.bulk = "keep";
  cfg.extraction.type_model = type_model_on;
  cfg.extraction.passages = passages_on;
  cfg.extraction.relation_model = relation_model_on;
  cfg.extraction.name_model = name_model_on;
  // The trained readers come together: off, the reading before them.
  cfg.extraction.relation_classifier = name_model_on;
  return cfg;
}

namespace {

/// The store at `dir`, read-only (the engine on it stopped).
std::unique_ptr<storage::graph_store> open_read_only(const std::string& dir) {
  storage::open_options o;
  o.path = dir;
  o.read_only = true;
  return or_throw(storage::open_graph_store(o));
}

}  // namespace

std::string store_digest(const std::string& dir) { return open_read_only(dir)->digest(); }

namespace {

/// CPU seconds this process has used, every thread's.
double process_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// CPU seconds of this process's threads now, summed by thread name (/proc/self/task).
std::map<std::string, double> cpu_by_thread() {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm"), stat(task.path() / "stat");
    std::string name, line;
    if (!std::getline(comm, name) || !std::getline(stat, line))
      continue;  // it ended meanwhile
    // Fields after the name in parentheses: state is the 3rd, utime the 14th, stime the 15th.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14)
        utime = std::stod(field);
      if (i == 15)
        stime = std::stod(field);
    }
    // Numbered threads of one kind (librdkafka's "rdk:broker1", RocksDB's) count together.
    while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back())))
      name.pop_back();
    out[name] += (utime + stime) / tick;
  }
  return out;
}

}  // namespace

replay_figures replay_log(const config::engram_config& cfg, std::uint32_t appliers) {
  replay_figures f;
  f.appliers = appliers;
  auto rcfg = cfg;
  rcfg.store.appliers = appliers;
  rcfg.storage.path = cfg.storage.path + "-replay";
  static int replays = 0;  // a group of its own each time: no wait for the last one's members to leave
  rcfg.kafka.group_id += "-replay-" + std::to_string(replays++);
  std::filesystem::remove_all(rcfg.storage.path);
  engine::engine_options ropts;
  ropts.replay = true;
  const auto t0 = clock_type::now();
  auto re = or_throw(engine::engine::start(rcfg, std::move(ropts)));
  const auto deadline = t0 + std::chrono::seconds(1800);
  // Timed from the first applied record (the engine's start and its group join, about
  // 3 s on the mock broker, are reported apart), as a live drain is.
  std::uint64_t first = 0;
  auto t1 = t0;
  double cpu1 = process_cpu_s();
  auto threads1 = cpu_by_thread();
  while (!re->status().ready()) {
    if (re->failed() || clock_type::now() > deadline)
      throw std::runtime_error("replay did not finish");
    if (first == 0 && (first = re->metrics().applied()) > 0) {
      t1 = clock_type::now();
      cpu1 = process_cpu_s();
      threads1 = cpu_by_thread();
      f.start_s = std::chrono::duration<double>(t1 - t0).count();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (const auto& [p, st] : re->status().partitions())
    f.records += st.next_offset;
  const auto timed = static_cast<double>(f.records) - static_cast<double>(first);
  f.records_per_s = timed > 0 ? timed / seconds_since(t1) : static_cast<double>(f.records) / seconds_since(t0);
  f.cpu_s = process_cpu_s() - cpu1;
  for (const auto& [name, s] : cpu_by_thread())
    if (const double used = s - (threads1.count(name) ? threads1[name] : 0.0); used > 0)
      f.cpu_by_thread[name] = used;
  f.timed_records = timed > 0 ? timed : static_cast<double>(f.records);
  f.steps = re->metrics().apply_steps();
  re->stop();
  re.reset();
  {
    const auto rebuilt = open_read_only(rcfg.storage.path);
    f.digest = rebuilt->digest();
    for (const auto& s : rebuilt->stats())
      f.entries += s.entries;
  }
  std::filesystem::remove_all(rcfg.storage.path);
  return f;
}

drain_figures drain(const std::vector<std::string>& events, int partitions, const std::string& model_path,
                    bool stop_midway, int replay_rounds) {
  drain_figures f;
  f.messages = events.size();
  auto broker = test_broker(partitions);
  static int run = 0;
  auto dir = std::filesystem::temp_directory_path() /
             ("engram-bench-drain-" + std::to_string(::getpid()) + "-" + std::to_string(run++));
  const auto cfg = engine_config(broker->bootstrap(), dir.string(), model_path);
  auto producer = or_throw(ingest::kafka_producer::create(broker->bootstrap(), {}));
  auto e = or_throw(engine::engine::start(cfg, {}));
  auto applied = [&] { return e->metrics().applied(); };
  // The engine owns inbound-messages once a warm-up event has gone all the way through.
  const std::string warm_up = evaluation::synthetic::events(1, 100, {"warm-up"})[0];
  if (!producer->produce("inbound-messages", "warm-up", warm_up) || !producer->flush(std::chrono::seconds(10)))
    throw std::runtime_error(producer->last_error());
  for (auto deadline = clock_type::now() + std::chrono::seconds(120); applied() < 1;) {
    if (clock_type::now() > deadline)
      throw std::runtime_error("the warm-up event was not applied");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto base = applied();
  const auto t0 = clock_type::now();
  for (const auto& ev : events) {
    f.megabytes += double(ev.size()) / 1e6;
    if (!producer->produce("inbound-messages", evaluation::synthetic::organization_of(ev), ev))
      throw std::runtime_error(producer->last_error());
  }
  if (!producer->flush(std::chrono::seconds(120)))
    throw std::runtime_error(producer->last_error());
  const auto n = base + events.size();
  const auto stop_at = base + std::max<std::size_t>(1, events.size() / 10);
  for (auto deadline = clock_type::now() + std::chrono::seconds(3600); applied() < n;) {
    if (f.first_applied_s == 0 && applied() > base)
      f.first_applied_s = seconds_since(t0);
    if (stop_midway && applied() >= stop_at) {
      f.applied_at_stop = applied() - base;
      const auto t1 = clock_type::now();
      e->stop();
      e.reset();
      f.stop_s = seconds_since(t1);
      break;
    }
    if (clock_type::now() > deadline)
      throw std::runtime_error("the backlog was not applied within an hour: " + std::to_string(applied() - base) +
                               " of " + std::to_string(events.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (e) {
    f.seconds = seconds_since(t0);
    e->stop();
    e.reset();
    if (replay_rounds > 0)
      f.digest = store_digest(dir.string());
    for (int round = 0; round < replay_rounds; ++round)
      for (int k = 0; k < 2; ++k) {
        const int which = round % 2 == 0 ? k : 1 - k;
        f.replays[which].push_back(replay_log(cfg, static_cast<std::uint32_t>(which + 1)));
      }
  }
  std::filesystem::remove_all(dir);
  return f;
}

}  // namespace engram::bench
