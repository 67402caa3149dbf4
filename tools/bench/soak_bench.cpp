// engram_bench soak: steady mail and agents against engramd for a long while (soak_bench.hpp).
#include "tools/bench/soak_bench.hpp"

#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/producer.hpp"
#include "net/http.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/pipeline_bench.hpp"
#include "evaluation/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

/// Agent `a`'s token; each agent has an organisation of its own ("soak-agent-a").
std::string token_of(int a) { return "soak-agent-token-" + std::to_string(a) + "-0123456789abcdef"; }

/// One minute's figures.
struct minute {
  double rss_mib = 0;
  std::size_t open_files = 0;
  double lag = 0;
  /// From /metrics, MiB: malloc's heap in use and free-but-held, RocksDB's memtables; and
  /// the vectors indexed: what RSS is made of as the store grows.
  double heap_in_use = 0, heap_free = 0, memtables = 0, vectors = 0;
  /// Texts in the embedding cache (it fills up to embedder.cache_size).
  double cached = 0;
  std::map<std::string, std::vector<double>> latencies;  // ms, by tool
  std::size_t failures = 0;
};

std::size_t open_files(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

/// engramd's /metrics into `f`: lag (summed over partitions), heap, memtables, vectors.
void scrape(std::uint16_t port, minute& f) {
  const auto text =
      net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/metrics", "", {}, std::chrono::seconds(10)).body;
  constexpr double mib = 1024.0 * 1024.0;
  f.lag = metric_sum(text, "engram_log_lag{");
  f.heap_in_use = metric_sum(text, "engram_process_heap_bytes{kind=\"in_use\"}") / mib;
  f.heap_free = metric_sum(text, "engram_process_heap_bytes{kind=\"free\"}") / mib;
  f.memtables = metric_sum(text, "engram_rocksdb{name=\"memtable_bytes\"}") / mib;
  f.vectors = metric_sum(text, "engram_vector_index_size ");
  f.cached = metric_sum(text, "engram_embedding_cache{kind=\"entries\"}");
}

/// One agent's call of `tool`: ok and its round trip in ms.
std::pair<bool, double> call(std::uint16_t port, const std::string& token, const std::string& tool, const json& args) {
  const json req{
      {"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}};
  const auto t = clock_type::now();
  auto r = net::fetch("POST", "http://127.0.0.1:" + std::to_string(port) + "/mcp", req.dump(),
                      {{"Content-Type", "application/json"},
                       {"Accept", "application/json, text/event-stream"},
                       {"Authorization", "Bearer " + token}},
                      std::chrono::seconds(60));
  const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
  return {r.status == 200 && r.body.find("\"isError\":false") != std::string::npos, ms};
}

/// Flat after the warm-up: the last minute within `tolerance` (a fraction) of the first
/// minute after the warm-up, or within `floor` of it in absolute terms.
std::string verdict(double first, double last, double tolerance, double floor) {
  const bool flat = std::abs(last - first) <= std::max(floor, tolerance * std::abs(first));
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s (%.1f -> %.1f)", flat ? "flat" : "NOT flat", first, last);
  return buf;
}

}  // namespace

int soak(const soak_options& o) {
  const auto minutes = static_cast<std::size_t>(std::max(1.0, std::round(o.minutes)));
  const auto warm = std::min<std::size_t>(minutes - 1, static_cast<std::size_t>(std::round(o.warm_up_minutes)));
  auto broker = test_broker(16);  // organisations spread: each partition keeps ~5 MiB
  const auto dir = std::filesystem::temp_directory_path() / ("engram-soak-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string tokens;
  for (int a = 0; a < o.agents; ++a)
    tokens += (a ? ", " : "") + std::string("{token: ") + token_of(a) + ", organization_id: soak-agent-" +
              std::to_string(a) + ", scopes: [read, write]}";
  auto child = std::make_unique<engramd_child>(broker->bootstrap(), dir.string(), o.model_path,
                                               std::vector<std::string>{"auth.tokens=[" + tokens + "]"});
  const auto& engramd = *child;
  const auto port = engramd.port();
  std::printf(
      "soak: %zu minutes (warm-up %zu), %.1f mail events/s over 8 organisations, %d agents at %.0f calls/s each, "
      "engramd pid %d, %u cores\n",
      minutes, warm, o.mail_per_second, o.agents, o.calls_per_second, static_cast<int>(engramd.pid()),
      std::thread::hardware_concurrency());

  std::vector<minute> figures(minutes + 1);
  std::mutex mutex;
  std::atomic<std::size_t> now_minute{0};
  std::atomic<bool> stop{false};

  // Mail at a steady rate.
  const auto events =
      evaluation::synthetic::events(static_cast<std::size_t>(o.minutes * 60 * o.mail_per_second) + 10, 200,
                                    {"acme", "globex", "initech", "fabrikam", "umbrella", "hooli", "stark", "wayne"});
  std::thread mail([&] {
    auto producer = or_throw(ingest::kafka_producer::create(broker->bootstrap(), {}));
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < events.size() && !stop; ++i) {
      std::this_thread::sleep_until(start + std::chrono::duration<double>(double(i) / o.mail_per_second));
      (void)producer->produce("inbound-messages", evaluation::synthetic::organization_of(events[i]), events[i]);
      if (i % 10 == 9)
        (void)producer->flush(std::chrono::seconds(30));
    }
    (void)producer->flush(std::chrono::seconds(30));
  });

  // Agents: recall, save, search_nodes, create_entities in turn.
  const std::vector<std::string> queries{
      "contract renewal", "invoice overdue", "meeting next week", "who manages Acme",    "pricing decision",
      "shipping delay",   "support plan",    "quarterly review",  "new account manager", "budget for the launch"};
  std::vector<std::thread> agents;
  for (int a = 0; a < o.agents; ++a)
    agents.emplace_back([&, a] {
      const auto begin = clock_type::now();
      for (std::size_t n = 0; !stop; ++n) {
        std::this_thread::sleep_until(begin + std::chrono::duration<double>(double(n) / o.calls_per_second));
        const std::string tag = std::to_string(a) + "-" + std::to_string(n);
        std::string tool;
        json args;
        switch (n % 4) {
          case 0:
          case 2:
            tool = "recall_knowledge";
            args = {{"query", queries[(n / 2 + a) % queries.size()]}, {"limit", 5}};
            break;
          case 1:
            tool = "save_knowledge";
            args = {{"type", "fact"},
                    {"title", "Soak fact " + tag},
                    {"content", "Soak account " + tag + " renews its contract on June 30, 2027."},
                    {"confidence", 0.7}};
            break;
          default:
            if (n % 8 == 3) {
              tool = "create_entities";
              args = {{"entities",
                       {{{"name", "Soak Project " + tag}, {"entityType", "project"}, {"observations", {tag}}}}}};
            } else {
              tool = "search_nodes";
              args = {{"query", "Soak Project"}};
            }
        }
        auto [ok, ms] = call(port, token_of(a), tool, args);
        std::lock_guard lock(mutex);
        auto& m = figures[now_minute];
        if (ok)
          m.latencies[tool].push_back(ms);
        else
          ++m.failures;
      }
    });

  std::printf("%6s %8s %7s %7s %9s %8s %7s %6s %6s %8s  %s\n", "minute", "RSS MiB", "heap", "free", "memtables",
              "vectors", "cached", "files", "lag", "failures", "p50/p99 ms: recall save search_nodes create_entities");
  const auto start = clock_type::now();
  bool died = false;
  for (std::size_t m = 1; m <= minutes && !died; ++m) {
    std::this_thread::sleep_until(start + std::chrono::minutes(m));
    const double rss = rss_mib(engramd.pid());
    died = rss < 0 || ::kill(engramd.pid(), 0) != 0;
    std::lock_guard lock(mutex);
    auto& f = figures[m - 1];
    f.rss_mib = rss;
    f.open_files = open_files(engramd.pid());
    scrape(port, f);
    now_minute = m;
    std::string tools;
    for (const char* t : {"recall_knowledge", "save_knowledge", "search_nodes", "create_entities"}) {
      const auto& v = f.latencies[t];
      char buf[48];
      std::snprintf(buf, sizeof buf, " %.0f/%.0f", v.empty() ? 0.0 : percentile(v, 0.5),
                    v.empty() ? 0.0 : percentile(v, 0.99));
      tools += buf;
    }
    std::printf("%6zu %8.1f %7.1f %7.1f %9.1f %8.0f %7.0f %6zu %6.0f %8zu %s\n", m, f.rss_mib, f.heap_in_use,
                f.heap_free, f.memtables, f.vectors, f.cached, f.open_files, f.lag, f.failures, tools.c_str());
    std::fflush(stdout);
  }
  stop = true;
  for (auto& t : agents)
    t.join();
  mail.join();
  if (died) {
    std::printf("soak: engramd died\n");
    return 1;
  }

  // Flat after the warm-up: the first minute after it against the last.
  const auto& first = figures[warm];
  const auto& last = figures[minutes - 1];
  std::printf("after the warm-up (minute %zu against minute %zu):\n", warm + 1, minutes);
  std::printf("  RSS         %s\n", verdict(first.rss_mib, last.rss_mib, 0.10, 16).c_str());
  std::printf("  heap in use %s, free %s, memtables %s, vectors %.0f -> %.0f, embedding cache %.0f -> %.0f\n",
              verdict(first.heap_in_use, last.heap_in_use, 0.10, 16).c_str(),
              verdict(first.heap_free, last.heap_free, 0.10, 16).c_str(),
              verdict(first.memtables, last.memtables, 0.10, 16).c_str(), first.vectors, last.vectors, first.cached,
              last.cached);
  std::printf("  open files  %s\n", verdict(double(first.open_files), double(last.open_files), 0.10, 4).c_str());
  std::printf("  lag         %s\n", verdict(first.lag, last.lag, 0.50, 20).c_str());
  for (const char* t : {"recall_knowledge", "save_knowledge", "search_nodes", "create_entities"}) {
    auto a = first.latencies.count(t) ? first.latencies.at(t) : std::vector<double>{};
    auto b = last.latencies.count(t) ? last.latencies.at(t) : std::vector<double>{};
    std::printf("  %-16s p50 %s, p99 %s, calls %zu -> %zu\n", t,
                verdict(a.empty() ? 0 : percentile(a, 0.5), b.empty() ? 0 : percentile(b, 0.5), 0.5, 5).c_str(),
                verdict(a.empty() ? 0 : percentile(a, 0.99), b.empty() ? 0 : percentile(b, 0.99), 0.5, 10).c_str(),
                a.size(), b.size());
  }
  child.reset();  // stopped before its store goes
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace engram::bench
