#include "tools/bench/cluster_bench.hpp"

#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/members.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;
constexpr int partitions = 12;

std::string token_of(const std::string& org) { return "bench-cluster-" + org + "-0123456789"; }

/// CPU seconds (user + system) a process has used (/proc/<pid>/stat).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14)
      utime = std::stoull(field);
    if (i == 15)
      stime = std::stoull(field);
  }
  return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

/// The partitions in `state` on the member at `port`, from its /metrics.
std::set<std::int32_t> partitions_of(std::uint16_t port, const std::string& state) {
  const auto text = net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/metrics").body;
  std::set<std::int32_t> out;
  for (int p = 0; p < partitions; ++p)
    if (text.find("engram_partition_state{partition=\"" + std::to_string(p) + "\",state=\"" + state + "\"} 1") !=
        std::string::npos)
      out.insert(p);
  return out;
}

int partitions_in(std::uint16_t port, const std::string& state) {
  return static_cast<int>(partitions_of(port, state).size());
}

/// Waits (polling every 5 ms) until `pred`, at most `limit`; the seconds it took.
double wait_for(const std::function<bool()>& pred, std::chrono::seconds limit, const char* what) {
  const auto t0 = clock_type::now();
  while (!pred()) {
    if (clock_type::now() - t0 > limit)
      throw std::runtime_error(std::string("cluster bench: timed out waiting for ") + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return seconds_since(t0);
}

struct member {
  std::string name;
  std::uint16_t port = 0;
  std::unique_ptr<engramd_child> process;
};

/// One recall over `c` as organisation `org`; milliseconds, or -1 when not answered with results.
double recall_ms(net::client& c, const std::string& org, std::size_t i) {
  const json req{
      {"jsonrpc", "2.0"},
      {"id", i + 1},
      {"method", "tools/call"},
      {"params",
       {{"name", "recall_knowledge"}, {"arguments", {{"query", "budget for the rollout " + std::to_string(i % 50)}}}}}};
  const auto t = clock_type::now();
  const auto r = c.request("POST", "/mcp", req.dump(),
                           {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token_of(org)}},
                           std::chrono::seconds(30));
  const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
  return r.status == 200 && r.body.find("\"isError\":false") != std::string::npos ? ms : -1;
}

}  // namespace

int cluster(const cluster_options& o) {
  const char* commit = std::getenv("ENGRAM_COMMIT");
  std::printf("cluster: %zu dense messages of %zu organisations on %d engram-log partitions, %u cores, commit %s\n",
              o.messages, o.organizations, partitions, std::thread::hardware_concurrency(),
              commit ? commit : "unknown");
  std::vector<std::string> orgs;
  for (std::size_t i = 0; i < o.organizations; ++i)
    orgs.push_back("org-" + std::to_string(i));
  std::string tokens = "auth.tokens=[";
  for (std::size_t i = 0; i < orgs.size(); ++i)
    tokens += (i ? ", " : "") + std::string("{token: ") + token_of(orgs[i]) + ", organization_id: " + orgs[i] +
              ", scopes: [read, write, admin]}";
  tokens += "]";
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-cluster-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto broker = test_broker(partitions);
  const auto& brokers = broker->bootstrap();
  const std::vector<std::string> common{tokens,
                                        "kafka.rdkafka.session.timeout.ms=" + std::to_string(o.session_timeout_ms),
                                        "kafka.rdkafka.heartbeat.interval.ms=500", "timers.interval_ms=86400000"};

  // engram-log filled by an extract member (the records carry extraction and vectors).
  {
    auto producer = ingest::kafka_producer::create(brokers, {});
    if (!producer)
      throw std::runtime_error(producer.error());
    for (const auto& e : evaluation::synthetic::dense_events(o.messages, orgs))
      if (!(*producer)->produce("inbound-messages", evaluation::synthetic::organization_of(e), e))
        throw std::runtime_error((*producer)->last_error());
    if (!(*producer)->flush(std::chrono::seconds(60)))
      throw std::runtime_error((*producer)->last_error());
    auto sets = common;
    sets.push_back("roles=[extract]");
    engramd_child extract(brokers, (dir / "extract").string(), o.model_path, sets);
    const auto t = wait_for(
        [&] {
          auto ranges = ingest::partition_ranges(brokers, {"engram-log"});
          std::int64_t n = 0;
          if (ranges)
            for (const auto& r : *ranges)
              n += r.end;
          return n >= std::int64_t(o.messages);
        },
        std::chrono::seconds(1800), "the extract member");
    std::printf("  engram-log: %zu records written by one extract member in %.1f s\n", o.messages, t);
  }
  auto ranges = ingest::partition_ranges(brokers, {"engram-log"});
  std::map<std::int32_t, std::int64_t> ends;
  for (const auto& r : *ranges)
    ends[r.partition] = r.end;

  std::map<std::string, member> members;
  auto start = [&](const std::string& name, int standby = 0) -> member& {
    auto& m = members[name];
    m.name = name;
    auto sets = common;
    sets.push_back("store.standby_replicas=" + std::to_string(standby));
    for (const auto& s : {std::string("roles=[store]"), std::string("store.cluster=true"),
                          std::string("store.advertised_url=http://127.0.0.1:0"),  // the port it binds
                          "store.member_name=" + name, std::string("store.heartbeat_ms=500")})
      sets.push_back(s);
    m.process = std::make_unique<engramd_child>(brokers, (dir / name).string(), o.model_path, sets);
    m.port = m.process->port();
    return m;
  };
  auto owned_records = [&](const member& m) {
    std::int64_t n = 0;
    for (auto p : partitions_of(m.port, "ready"))
      n += ends[p];
    return n;
  };

  // kill -9 of `victim`: seconds until `survivor` has every partition assigned, and until
  // every one is ready.
  auto take_over = [&](member& victim, const member& survivor) {
    victim.process->kill9();
    const auto killed = clock_type::now();
    const double assigned = wait_for(
        [&] { return partitions_in(survivor.port, "restoring") + partitions_in(survivor.port, "ready") == partitions; },
        std::chrono::seconds(120), "the survivor's assignment");
    wait_for([&] { return partitions_in(survivor.port, "ready") == partitions; }, std::chrono::seconds(1800),
             "the survivor's restore");
    return std::pair{assigned, seconds_since(killed)};
  };

  // (1) One member restores all 12 partitions from scratch.
  auto& a = start("a");
  double cpu0 = cpu_seconds(a.process->pid());
  wait_for([&] { return partitions_in(a.port, "restoring") + partitions_in(a.port, "ready") == partitions; },
           std::chrono::seconds(120), "a's assignment");
  double s =
      wait_for([&] { return partitions_in(a.port, "ready") == partitions; }, std::chrono::seconds(1800), "a's restore");
  std::int64_t total = 0;
  for (const auto& [_, e] : ends)
    total += e;
  std::printf(
      "  restore from scratch, one member, 12 partitions: %lld records in %.1f s = %.0f records/s (%.1f CPU s)\n",
      static_cast<long long>(total), s, double(total) / s, cpu_seconds(a.process->pid()) - cpu0);

  // (2) A second member joins with an empty store: it restores its half from scratch, while
  // the first keeps the state of what it gave up.
  auto& b = start("b");
  cpu0 = cpu_seconds(b.process->pid());
  const auto joined = clock_type::now();
  wait_for([&] { return partitions_in(b.port, "ready") + partitions_in(b.port, "restoring") > 0; },
           std::chrono::seconds(120), "b's assignment");
  wait_for([&] { return partitions_in(a.port, "ready") + partitions_in(b.port, "ready") == partitions; },
           std::chrono::seconds(1800), "b's restore");
  s = seconds_since(joined);
  const auto b_records = owned_records(b);
  std::printf(
      "  a second member joins (empty store): %d partitions, %lld records restored; %.1f s from its start in the "
      "group to all ready (%.1f CPU s)\n",
      partitions_in(b.port, "ready"), static_cast<long long>(b_records), s, cpu_seconds(b.process->pid()) - cpu0);

  // (3) Forwarding: recalls of an organisation owned by a, through a and through b.
  std::string org_a;
  const auto on_a = partitions_of(a.port, "ready");
  for (const auto& org : orgs)
    if (on_a.count(ingest::partition_of(org, partitions))) {
      org_a = org;
      break;
    }
  for (auto* via : {&a, &b}) {
    net::client c("127.0.0.1", std::to_string(via->port));
    std::vector<double> ms;
    std::size_t failed = 0;
    for (std::size_t i = 0; i < o.queries; ++i) {
      const double t = recall_ms(c, org_a, i);
      if (t < 0)
        ++failed;
      else
        ms.push_back(t);
    }
    std::printf("  recall of %s through %s (%s): p50 %.2f ms, p99 %.2f ms over %zu calls, %zu failed\n", org_a.c_str(),
                via->name.c_str(), via == &a ? "its owner" : "forwarded to the owner", percentile(ms, 0.5),
                percentile(ms, 0.99), ms.size(), failed);
  }

  // (4) kill -9 of b: a takes its partitions back, and kept their state (a short catch-up).
  const auto [noticed, ready_b] = take_over(b, a);
  std::printf(
      "  kill -9 of b, a kept b's partitions: assigned to a %.1f s after the kill (session timeout %zu ms), all "
      "ready %.1f s after it\n",
      noticed, o.session_timeout_ms, ready_b);
  members.erase("b");

  // (5) A third member joins empty and takes half; then a is killed: c takes over partitions
  // it never held, a restore from scratch.
  auto& c = start("c");
  wait_for([&] { return partitions_in(a.port, "ready") + partitions_in(c.port, "ready") == partitions; },
           std::chrono::seconds(1800), "c's restore");
  const auto c_before = partitions_of(c.port, "ready");
  cpu0 = cpu_seconds(c.process->pid());
  const auto [noticed_a, all_ready] = take_over(a, c);
  std::int64_t moved = 0;
  for (const auto& [p, e] : ends)
    if (!c_before.count(p))
      moved += e;
  std::printf(
      "  kill -9 of a, c never held its %zu partitions (%lld records): assigned to c %.1f s after the kill, all "
      "ready %.1f s after it = %.0f records/s restored once assigned (%.1f CPU s)\n",
      partitions - c_before.size(), static_cast<long long>(moved), noticed_a, all_ready,
      double(moved) / std::max(all_ready - noticed_a, 1e-9), cpu_seconds(c.process->pid()) - cpu0);
  members.erase("a");

  // (6) A member with a warm standby (store.standby_replicas 1) joins: it takes half and
  // follows the other half; then c is killed and d takes c's partitions over from where
  // its standby stood.
  auto& d = start("d", 1);
  const auto standby_caught_up = [&] {
    const auto text = net::fetch("GET", "http://127.0.0.1:" + std::to_string(d.port) + "/metrics").body;
    for (auto p : partitions_of(c.port, "ready")) {
      const auto series = "engram_standby_lag{partition=\"" + std::to_string(p) + "\"} 0\n";
      if (text.find(series) == std::string::npos)
        return false;
    }
    return partitions_in(c.port, "ready") + partitions_in(d.port, "ready") == partitions;
  };
  wait_for(standby_caught_up, std::chrono::seconds(1800), "d's restore and standby");
  const auto c_partitions = partitions_of(c.port, "ready");
  const auto [noticed_c, ready_c] = take_over(c, d);
  std::int64_t caught_up = 0, records_c = 0;
  auto stats = json::parse(net::fetch("GET", "http://127.0.0.1:" + std::to_string(d.port) + "/v1/stats", {},
                                      {{"Authorization", "Bearer " + token_of(orgs[0])}})
                               .body,
                           nullptr, false);
  if (stats.is_object())
    for (const auto& row : stats.value("partitions", json::array()))
      if (c_partitions.count(row["partition"].get<std::int32_t>()) && row.contains("readSinceAssignment"))
        caught_up += row["readSinceAssignment"].get<std::int64_t>();
  for (auto p : c_partitions)
    records_c += ends[p];
  std::printf(
      "  kill -9 of c, d a warm standby of its %zu partitions (%lld records): assigned to d %.1f s after the kill, all "
      "ready %.1f s after it; %lld records read to catch up\n",
      c_partitions.size(), static_cast<long long>(records_c), noticed_c, ready_c, static_cast<long long>(caught_up));
  members.erase("c");
  members.clear();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace engram::bench
