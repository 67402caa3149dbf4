#include "tools/bench/entity_bench.hpp"

#include "actors/engine/engine.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "net/http.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/pipeline_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace engram::bench {

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

/// Runs a shell command; its standard output.
std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p)
    throw std::runtime_error("cannot run: " + cmd);
  char buf[4096];
  while (auto n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  if (::pclose(p) != 0)
    throw std::runtime_error("failed: " + cmd + "\n" + out.substr(0, 2000));
  return out;
}

/// The last line of `out` that is a JSON object.
json last_json(const std::string& out) {
  auto at = out.rfind("\n{");
  auto j = json::parse(at == std::string::npos ? out : out.substr(at + 1), nullptr, false);
  if (j.is_discarded())
    throw std::runtime_error("no figures in: " + out.substr(0, 2000));
  return j;
}

void side_by_side(const entity_bench_options& o) {
  const auto modules = std::filesystem::absolute(".cache/node/node_modules").string();
  const auto script = std::filesystem::absolute("tools/bench/memory_compare.py").string();
  const auto n = std::to_string(o.memory_entities);
  const auto env = "MEMORY_BENCH_QUERIES=" + std::to_string(o.queries / 4) + " ";
  std::fprintf(stderr, "engram_bench entities: the reference memory server, %s entities\n", n.c_str());
  const auto ref = last_json(capture(env + "python3 " + script + " reference " + n + " " + modules));

  auto broker = test_broker(4);
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-entities-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string token = "bench-token-0123456789abcdef";
  json eng;
  {
    engramd_child engramd(
        broker->bootstrap(), dir.string(), o.model_path,
        {"auth.tokens=[{token: " + token + ", organization_id: bench, scopes: [read, write], name: bench}]"});
    std::fprintf(stderr, "engram_bench entities: Engram (engramd pid %d), %s entities\n", int(engramd.pid()),
                 n.c_str());
    eng = last_json(capture(env + "python3 " + script + " engram " + n + " http://127.0.0.1:" +
                            std::to_string(engramd.port()) + "/mcp " + token + " " + std::to_string(engramd.pid())));
  }
  std::filesystem::remove_all(dir);

  auto row = [](const std::string& what, double r, double e, const char* unit, const json& server = nullptr) {
    char own[32] = "—";
    if (server.is_number())
      std::snprintf(own, sizeof own, "%.3f", server.get<double>());
    std::printf("| %s | %.2f | %.2f | %s | %s | %.0f× |\n", what.c_str(), r, e, own, unit, e > 0 ? r / e : 0.0);
  };
  std::printf(
      "\nThe reference MCP memory server (npm @modelcontextprotocol/server-memory 2026.8.31, stdio) and Engram "
      "(engramd, MCP over one kept-alive HTTP connection), the same workload and client "
      "(tools/bench/memory_compare.py, Python's standard library): %s entities with 3 observations each, %s "
      "relations, %zu calls per figure, %u cores. Engram's own time is its Server-Timing header:\n\n",
      n.c_str(), n.c_str(), o.queries / 4, std::thread::hardware_concurrency());
  std::printf(
      "| figure | reference | Engram | Engram's own time | unit | reference / Engram |\n|---|---|---|---|---|---|\n");
  row("create (entities and relations, batches of 100)", ref["create_s"], eng["create_s"], "s");
  for (const char* cls : {"one", "four_percent", "forty_two_percent", "none"}) {
    const auto& r = ref["search"][cls];
    const auto& e = eng["search"][cls];
    const std::string label = std::string("search_nodes p50, ") + cls + " (" +
                              std::to_string(r["matched"].get<long>()) + " matches; answers " +
                              std::to_string(r["bytes"].get<long>()) + " / " + std::to_string(e["bytes"].get<long>()) +
                              " bytes)";
    row(label, r["p50"], e["p50"], "ms", e.value("server_p50", json()));
    row(std::string("search_nodes p99, ") + cls, r["p99"], e["p99"], "ms", e.value("server_p99", json()));
  }
  row("open_nodes p50 (2 names)", ref["open"]["p50"], eng["open"]["p50"], "ms",
      eng["open"].value("server_p50", json()));
  row("open_nodes p99", ref["open"]["p99"], eng["open"]["p99"], "ms", eng["open"].value("server_p99", json()));
  row("read_graph (reference: everything; Engram: the first page of 100)", ref["read_graph"]["ms"],
      eng["read_graph"]["ms"], "ms");
  row("read_graph answer", ref["read_graph"]["bytes"].get<double>() / 1048576.0,
      eng["read_graph"]["bytes"].get<double>() / 1048576.0, "MiB");
  row("peak RSS of the server process (Engram's includes the sentence encoder)",
      ref["peak_rss"].get<double>() / 1048576.0, eng["peak_rss"].get<double>() / 1048576.0, "MiB");
  std::printf("\nHTTP connections the client opened to engramd: %ld\n", eng["connections"].get<long>());
}

/// Applies entity commands straight to a store, as the store applies engram-log.
class filler {
public:
  explicit filler(storage::graph_store& s) : s_(s) {}
  void apply(schemas::entity_command c) {
    c.event_id = "fill-" + std::to_string(++n_);
    c.organization_id = "bench";
    c.issued_at = "2026-05-01T10:00:00.000Z";
    c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
    storage::entity_result r;
    storage::apply_outcome how{};
    if (s_.apply_entity_command({"fill", 0, n_, "bench"}, c, &r, &how) != storage::errc::ok || !r.error.empty())
      throw std::runtime_error("fill failed: " + r.error);
  }

private:
  storage::graph_store& s_;
  std::int64_t n_ = 0;
};

/// The graph of graph_at_scale, written through the store's apply path: graph_entities nodes
/// of four types, graph_edges random edges of four labels.
void fill_graph(const std::filesystem::path& dir, const entity_bench_options& o) {
  auto name = [](std::size_t i) { return "node-" + std::to_string(i); };
  const char* labels[] = {"uses", "works_at", "part_of", "partner_of"};
  const char* types[] = {"company", "person", "technology", "product"};
  auto store = or_throw(storage::open_graph_store({dir.string()}));
  filler fill(*store);
  for (std::size_t b = 0; b < o.graph_entities; b += 1000) {
    schemas::entity_command c;
    c.op = schemas::entity_op::add_entities;
    for (std::size_t i = b; i < std::min(o.graph_entities, b + 1000); ++i)
      c.entities.push_back({name(i), types[i % 4], {}, {}});
    fill.apply(std::move(c));
  }
  std::mt19937_64 rng(16);
  for (std::size_t b = 0; b < o.graph_edges; b += 1000) {
    schemas::entity_command c;
    c.op = schemas::entity_op::relate;
    for (std::size_t i = b; i < std::min(o.graph_edges, b + 1000); ++i) {
      const auto x = rng() % o.graph_entities, y = rng() % o.graph_entities;
      if (x != y)
        c.relations.push_back({name(x), name(y), labels[i % 4], 1.0 + double(i % 5), {}});
    }
    fill.apply(std::move(c));
  }
}

void graph_at_scale(const entity_bench_options& o) {
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-graph-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto name = [](std::size_t i) { return "node-" + std::to_string(i); };
  auto t0 = clock_type::now();
  fill_graph(dir, o);
  const double fill_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  auto broker = test_broker(4);
  auto cfg = engine_config(broker->bootstrap(), "", o.model_path);
  cfg.storage.path = dir.string();  // the filled store (engine_config would start an empty one)
  const std::string token = "bench-token-0123456789abcdef";
  cfg.auth.tokens = {{token, "bench", {"read", "write"}, "bench"}};
  auto e = or_throw(engine::engine::start(cfg, {}));
  const std::string url = "http://127.0.0.1:" + std::to_string(e->http_port()) + "/mcp";
  const std::map<std::string, std::string> headers{{"Authorization", "Bearer " + token},
                                                   {"Content-Type", "application/json"}};
  std::size_t nodes_seen = 0, found = 0, hops = 0;
  auto call = [&](const std::string& tool, const json& args) {
    json req{
        {"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}};
    auto t = clock_type::now();
    auto r = net::fetch("POST", url, req.dump(), headers, std::chrono::seconds(30));
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
    auto j = json::parse(r.body, nullptr, false);
    if (r.status != 200 || j.is_discarded() || !j.contains("result"))
      throw std::runtime_error(tool + " failed: " + r.body.substr(0, 300));
    const auto& res = j["result"];
    if (!res.value("isError", false)) {
      if (res["structuredContent"].contains("nodes") && tool == "graph_traverse")
        nodes_seen += res["structuredContent"]["nodes"].size();
      if (tool == "graph_path") {
        ++found;
        hops += res["structuredContent"]["hops"].get<std::size_t>();
      }
    }
    return ms;
  };
  std::mt19937_64 rng(99);
  std::vector<double> traverse_ms, traverse_all_ms, path_ms, weight_ms;
  for (std::size_t i = 0; i < o.queries; ++i)
    traverse_ms.push_back(call("graph_traverse", {{"start", name(rng() % o.graph_entities)}, {"max_depth", 3}}));
  const double nodes_default = double(nodes_seen) / double(o.queries);
  nodes_seen = 0;
  for (std::size_t i = 0; i < o.queries; ++i)
    traverse_all_ms.push_back(
        call("graph_traverse", {{"start", name(rng() % o.graph_entities)}, {"max_depth", 3}, {"limit", 1000}}));
  const double nodes_all = double(nodes_seen) / double(o.queries);
  for (std::size_t i = 0; i < o.queries; ++i)
    path_ms.push_back(
        call("graph_path", {{"from", name(rng() % o.graph_entities)}, {"to", name(rng() % o.graph_entities)}}));
  const std::size_t paths_found = found;
  const std::size_t path_hops = hops;
  for (std::size_t i = 0; i < o.queries; ++i)
    weight_ms.push_back(call("graph_path", {{"from", name(rng() % o.graph_entities)},
                                            {"to", name(rng() % o.graph_entities)},
                                            {"by", "weight"},
                                            {"max_depth", 3}}));
  e->stop();
  e.reset();
  std::filesystem::remove_all(dir);
  std::printf(
      "\nEntity graph over MCP/HTTP on loopback: %zu entities, %zu edges (random ends, 4 labels; filled in %.1f s "
      "through the store's apply path), %zu calls each, random ends, %u cores:\n",
      o.graph_entities, o.graph_edges, fill_s, o.queries, std::thread::hardware_concurrency());
  std::printf("| figure | p50 | p99 | unit | notes |\n|---|---|---|---|---|\n");
  std::printf("| graph_traverse, max_depth 3 (default limit 100) | %.2f | %.2f | ms | %.0f entities an answer |\n",
              percentile(traverse_ms, 0.5), percentile(traverse_ms, 0.99), nodes_default);
  std::printf("| graph_traverse, max_depth 3, limit 1000 | %.2f | %.2f | ms | %.0f entities an answer |\n",
              percentile(traverse_all_ms, 0.5), percentile(traverse_all_ms, 0.99), nodes_all);
  std::printf(
      "| graph_path by hops (max_depth 4) | %.2f | %.2f | ms | %zu of %zu pairs connected, %.1f hops on average |\n",
      percentile(path_ms, 0.5), percentile(path_ms, 0.99), paths_found, o.queries,
      paths_found ? double(path_hops) / double(paths_found) : 0.0);
  std::printf("| graph_path by weight (max_depth 3) | %.2f | %.2f | ms | Dijkstra within the hop limit |\n",
              percentile(weight_ms, 0.5), percentile(weight_ms, 0.99));
}

}  // namespace

int entities(const entity_bench_options& o) {
  graph_at_scale(o);
  if (o.side_by_side)
    side_by_side(o);
  return 0;
}

}  // namespace engram::bench
