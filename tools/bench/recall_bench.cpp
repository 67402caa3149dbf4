// recall_knowledge and save_knowledge over MCP/HTTP at N entries: latency, throughput, memory (recall_bench.hpp).
#include "tools/bench/recall_bench.hpp"

#include "actors/engine/engine.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "config/config.hpp"
#include "embedding/embedder.hpp"
#include "net/http.hpp"
#include "reading/rules.hpp"
#include "reading/signature.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "schemas/vector.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/memory_bench.hpp"
#include "tools/bench/pipeline_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <malloc.h>
#include <unistd.h>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;

/// At most `n` bytes of `s`, never cutting a UTF-8 sequence.
std::string utf8_prefix(const std::string& s, std::size_t n) {
  if (s.size() <= n)
    return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;
  return s.substr(0, n);
}

/// This process's resident set, in bytes (VmRSS of /proc/self/status).
std::size_t rss_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return static_cast<std::size_t>(std::strtoull(line.c_str() + 6, nullptr, 10)) * 1024;
  return 0;
}

/// Fills a new store at `dir` with `n` entries of organisation "bench", entry i from
/// sentence i % `base` with its vector (`vectors`, of the first `base` sentences); from
/// `base` on, the sentence numbered and its vector moved by a little noise.
void fill_store(const std::string& dir, const std::vector<std::string>& sentences,
                const std::vector<std::vector<float>>& vectors, std::size_t base, std::size_t n) {
  auto store = open_store(dir);
  std::mt19937 rng(42);
  std::normal_distribution<float> noise(0, 0.02f);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& text = sentences[i % base];
    schemas::inbound_message m;
    m.event_id = "fill-" + std::to_string(i);
    m.organization_id = "bench";
    m.sent_at = "2026-03-05T10:00:00Z";
    m.sent_at_ms = 1772704800000;
    m.from.address = "fill@bench.example";
    m.body = i < base ? text : text + " (" + std::to_string(i / base) + ")";
    auto x = reading::read_statement(m, schemas::entry_type::fact, utf8_prefix(m.body, 80), 0.8);
    if (x.entries.empty())
      continue;
    auto v = vectors[i % base];
    if (i >= base) {
      double ss = 0;
      for (auto& c : v) {
        c += noise(rng);
        ss += double(c) * c;
      }
      for (auto& c : v)
        c = static_cast<float>(c / std::sqrt(ss));
    }
    x.entries[0].embedding = schemas::quantise(v);
    std::vector<schemas::resolution> res(1);
    res[0].vector_seq = i + 1;
    storage::apply_outcome out{};
    if (store->apply({"fill", 0, static_cast<std::int64_t>(i), "bench"}, &m, &x, &res, &out) != storage::errc::ok)
      throw std::runtime_error("fill failed");
  }
}

/// The parts of a recall, in process, for each of the `held_out` sentences after `base`:
/// BM25 over the text column family of the store at `dir`, and the query's embedding (one
/// sentence, as a recall embeds it). Appends their ms to `text_ms` and `embed_ms`.
void time_recall_parts(const std::string& dir, const std::vector<std::string>& sentences, std::size_t base,
                       std::size_t held_out, const embedding::use_lite_int8_embedder& model,
                       std::vector<double>& text_ms, std::vector<double>& embed_ms) {
  auto store = open_store(dir);
  for (std::size_t i = 0; i < held_out; ++i) {
    const auto q = utf8_prefix(sentences[base + i], 200);
    auto t = clock_type::now();
    (void)store->search_text("bench", reading::index_terms(q), 100);
    text_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
    std::vector<std::string_view> one{q};
    t = clock_type::now();
    (void)or_throw(model.embed(one));
    embed_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
  }
}

/// The engine of the recalls: the filled store at `dir`, on `brokers`, any free port, one
/// token (`token`) for organisation "bench".
config::engram_config recall_config(const std::string& brokers, const std::string& dir, const std::string& model_path,
                                    const std::string& token) {
  auto cfg = engine_settings(brokers, dir, model_path);
  cfg.auth.tokens = {{token, "bench", {"read", "write"}, "bench"}};
  return cfg;
}

/// Where the recalls and saves go: the engine's MCP endpoint, with the bench token.
struct mcp_endpoint {
  std::string url;
  std::map<std::string, std::string> headers;
};

/// Sends the tools/call `req`; its round trip in ms. Throws "`what` failed: <answer>" unless
/// the tool answered without error.
double timed_call(const mcp_endpoint& to, const nlohmann::json& req, const char* what) {
  auto t = clock_type::now();
  auto r = net::fetch("POST", to.url, req.dump(), to.headers, std::chrono::seconds(30));
  if (r.status != 200 || r.body.find("\"isError\":false") == std::string::npos)
    throw std::runtime_error(std::string(what) + " failed: " + r.body.substr(0, 200));
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

/// recall_knowledge of `q` (limit 5); its round trip in ms.
double timed_recall(const mcp_endpoint& to, const std::string& q) {
  nlohmann::json req{{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "tools/call"},
                     {"params", {{"name", "recall_knowledge"}, {"arguments", {{"query", q}, {"limit", 5}}}}}};
  return timed_call(to, req, "recall");
}

/// save_knowledge of the `i`th bench statement; its round trip in ms.
double timed_save(const mcp_endpoint& to, std::size_t i) {
  nlohmann::json req{{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "tools/call"},
                     {"params",
                      {{"name", "save_knowledge"},
                       {"arguments",
                        {{"type", "fact"},
                         {"title", "bench save " + std::to_string(i)},
                         {"content", "Bench account " + std::to_string(i) + " renews its contract on June 30, 2027."},
                         {"confidence", 0.7}}}}}};
  return timed_call(to, req, "save");
}

/// Recalls/s of two clients at once over the `held_out` sentences after `base`, numbered
/// so that they are other queries than those timed before (the cache misses).
double two_clients_rate(const mcp_endpoint& to, const std::vector<std::string>& sentences, std::size_t base,
                        std::size_t held_out) {
  std::atomic<std::size_t> done{0};
  auto t1 = clock_type::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < 2; ++c)
    clients.emplace_back([&, c] {
      for (std::size_t i = c; i < held_out; i += 2) {
        timed_recall(to, "#" + std::to_string(i) + " " + utf8_prefix(sentences[base + i], 200));
        ++done;
      }
    });
  for (auto& t : clients)
    t.join();
  return double(done) / std::chrono::duration<double>(clock_type::now() - t1).count();
}

/// What the recall phase measured, as measured.
struct recall_samples {
  std::vector<double> recall_ms, short_ms, text_ms, embed_ms, save_ms;
  std::vector<double> unmapped_ms, mapped_ms;  // the same recalls without and with the query head
  double rate = 0;                             // recalls/s, 2 clients
  double open_s = 0;                           // the engine's start
  std::size_t rss_before = 0, rss_after = 0;
};

/// Prints the figures of `s` (an organisation of `n` entries) and returns them.
recall_figures report_figures(const recall_samples& s, std::size_t n) {
  std::printf(
      "MCP over HTTP on loopback, one organisation of %zu entries (engramd start with the index rebuilt: %.1f s), "
      "%u cores:\n",
      n, s.open_s, std::thread::hardware_concurrency());
  std::printf(
      "  recall_knowledge (query embedding included, %zu distinct queries, 1 client): p50 %.2f ms, p99 %.2f ms\n",
      s.recall_ms.size(), percentile(s.recall_ms, 0.5), percentile(s.recall_ms, 0.99));
  std::printf(
      "  the same recalls on engines started alternately without and with the query head (2 x %zu each): p50 "
      "%.2f / %.2f ms, p99 %.2f / %.2f ms\n",
      s.recall_ms.size(), percentile(s.unmapped_ms, 0.5), percentile(s.mapped_ms, 0.5), percentile(s.unmapped_ms, 0.99),
      percentile(s.mapped_ms, 0.99));
  std::printf("  recall_knowledge with query-sized texts (7 words): p50 %.2f ms, p99 %.2f ms\n",
              percentile(s.short_ms, 0.5), percentile(s.short_ms, 0.99));
  std::printf("  recall_knowledge, 2 clients: %.0f recalls/s\n", s.rate);
  std::printf(
      "  of which, in process: BM25 search p50 %.2f ms, p99 %.2f ms; query embedding p50 %.2f ms, p99 %.2f ms\n",
      percentile(s.text_ms, 0.5), percentile(s.text_ms, 0.99), percentile(s.embed_ms, 0.5),
      percentile(s.embed_ms, 0.99));
  std::printf("  save_knowledge round trip (engram-log, pipeline, applied): p50 %.1f ms, p99 %.1f ms\n",
              percentile(s.save_ms, 0.5), percentile(s.save_ms, 0.99));
  recall_figures f;
  f.entries = n;
  f.recall_p50 = percentile(s.recall_ms, 0.5);
  f.recall_p99 = percentile(s.recall_ms, 0.99);
  f.short_p50 = percentile(s.short_ms, 0.5);
  f.short_p99 = percentile(s.short_ms, 0.99);
  f.recalls_per_s = s.rate;
  f.text_p50 = percentile(s.text_ms, 0.5);
  f.embed_p50 = percentile(s.embed_ms, 0.5);
  f.save_p50 = percentile(s.save_ms, 0.5);
  f.save_p99 = percentile(s.save_ms, 0.99);
  f.open_s = s.open_s;
  f.engine_rss = s.rss_after > s.rss_before ? s.rss_after - s.rss_before : 0;
  std::printf("  resident memory the engine added (start + %zu recalls): %.1f MiB, %.0f bytes per entry\n",
              s.recall_ms.size(), double(f.engine_rss) / 1048576.0,
              double(f.engine_rss) / double(std::max<std::size_t>(n, 1)));
  return f;
}

}  // namespace

recall_figures bench_recall(const std::string& model_path, const std::string& data_dir, std::size_t n,
                            std::size_t queries, std::size_t saves) {
  // Queries: sentences kept out of the store, so neither the store nor the cache has them.
  const std::size_t held_out = std::min<std::size_t>(queries, 1000);
  const auto sentences = ham_sentences(data_dir, std::min<std::size_t>(12000, n + held_out));
  if (sentences.size() < held_out + 100)
    throw std::runtime_error("too few ham sentences");
  auto model = or_throw(embedding::use_lite_int8_embedder::load(model_path));  // as engramd's default
  const std::size_t base = sentences.size() - held_out;
  std::vector<std::vector<float>> vectors;
  {
    std::vector<std::string_view> texts(sentences.begin(), sentences.begin() + static_cast<std::ptrdiff_t>(base));
    vectors = or_throw(model->embed(texts));
  }
  auto dir = std::filesystem::temp_directory_path() / ("engram-bench-recall-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  fill_store(dir.string(), sentences, vectors, base, n);
  recall_samples s;
  time_recall_parts(dir.string(), sentences, base, held_out, *model, s.text_ms, s.embed_ms);
  auto broker = test_broker(4);
  const std::string token = "bench-token-0123456789abcdef";
  const auto cfg = recall_config(broker->bootstrap(), dir.string(), model_path, token);
  ::malloc_trim(0);  // what earlier phases freed goes back to the system: the baseline is live memory
  s.rss_before = rss_bytes();
  auto t0 = clock_type::now();
  auto e = or_throw(engine::engine::start(cfg, {}));
  s.open_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  const mcp_endpoint to{"http://127.0.0.1:" + std::to_string(e->http_port()) + "/mcp",
                        {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}}};
  std::fprintf(stderr, "engram_bench recall: %zu entries stored, engine started; recalls begin\n", n);
  for (std::size_t i = 0; i < held_out; ++i)
    s.recall_ms.push_back(timed_recall(to, utf8_prefix(sentences[base + i], 200)));
  ::malloc_trim(0);  // as for the baseline: count what the engine holds, not what malloc kept
  s.rss_after = rss_bytes();
  // Query-sized texts (the first 7 words of other held-out sentences): what agents send.
  const auto short_queries =
      first_words(std::vector<std::string>(sentences.begin() + static_cast<std::ptrdiff_t>(base), sentences.end()), 7);
  for (std::size_t i = 0; i < held_out; ++i)
    s.short_ms.push_back(timed_recall(to, "? " + short_queries[(i + held_out / 2) % held_out]));
  // Throughput: two clients at once, other queries (numbered, so the cache misses).
  s.rate = two_clients_rate(to, sentences, base, held_out);
  for (std::size_t i = 0; i < saves; ++i)
    s.save_ms.push_back(timed_save(to, i));
  e->stop();
  e.reset();
  // What the query head costs: the same recalls on engines over the same store (after the saves:
  // an engine's group membership would hold them up) without it and with it, alternately, so
  // that neither is measured on warmer caches or a quieter machine alone.
  s.mapped_ms = s.recall_ms;
  for (const char* head : {"none", "builtin", "none"}) {
    auto c = cfg;
    c.recall.query_head = head;
    auto again = or_throw(engine::engine::start(c, {}));
    const mcp_endpoint to{"http://127.0.0.1:" + std::to_string(again->http_port()) + "/mcp",
                          {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}}};
    auto& into = std::string(head) == "none" ? s.unmapped_ms : s.mapped_ms;
    for (std::size_t i = 0; i < held_out; ++i)
      into.push_back(timed_recall(to, utf8_prefix(sentences[base + i], 200)));
    again->stop();
  }
  std::filesystem::remove_all(dir);
  return report_figures(s, n);
}

}  // namespace engram::bench
