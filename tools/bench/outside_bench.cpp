#include "tools/bench/outside_bench.hpp"

#include "actors/ingest/embedded_broker.hpp"
#include "actors/store/store_writer.hpp"
#include "embedding/embedder.hpp"
#include "embedding/query_head.hpp"
#include "contradiction/contradiction.hpp"
#include "dedup/dedup.hpp"
#include "query/kag.hpp"
#include "query/query.hpp"
#include "net/http.hpp"
#include "reading/read.hpp"
#include "reading/signature.hpp"
#include "schemas/inbound_message.hpp"
#include "services/metrics.hpp"
#include "storage/graph_store.hpp"
#include "storage/vector_index.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/pipeline_bench.hpp"
#include "evaluation/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

/// Dense mail has about 8 statements a message, and about 4 entries a message once dedup
/// has merged what repeats in one organisation; messages enough for 3 a message are made
/// (the store stops growing at the target), and the queries come from others.
constexpr std::size_t entries_per_message = 3;
/// Entries written after the last stop before the crash a restart is measured after.
constexpr std::size_t crash_entries = 10'000;

/// A question an agent might ask about a message: up to 12 words of one of its sentences.
std::string question_from(const std::string& body, std::size_t pick) {
  std::vector<std::string> sentences;
  std::string cur;
  for (char c : body) {
    cur += c;
    if (c == '.' || c == '\n' || c == '?' || c == '!') {
      if (cur.find_first_not_of(" .\n?!") != std::string::npos)
        sentences.push_back(cur);
      cur.clear();
    }
  }
  if (cur.find_first_not_of(" .\n?!") != std::string::npos)
    sentences.push_back(cur);
  if (sentences.empty())
    return body.substr(0, 80);
  std::istringstream words(sentences[pick % sentences.size()]);
  std::string out, w;
  for (int n = 0; n < 12 && words >> w; ++n)
    out += (out.empty() ? "" : " ") + w;
  return out;
}

/// BM25 alone, in process: the store at `dir` opened read-only (its indexes from their
/// snapshot), each query's words searched over entries and over passages as a recall does
/// (the names of the people it names left out; the best 70 of each), and the time of the pair printed with the postings the query's
/// terms hold; then kag_query in process on the same questions (p50 and p99 over 3 passes).
void words_only(const std::filesystem::path& dir, const std::vector<std::string>& events, std::size_t first,
                std::size_t queries) {
  storage::open_options so;
  so.path = dir.string();
  so.read_only = true;
  std::shared_ptr<storage::graph_store> store = or_throw(storage::open_graph_store(so));
  const auto opened = store->indexes_origin();
  std::printf("  in-memory indexes %s in %.2f s\n",
              opened.from_snapshot ? "read from their snapshot" : "rebuilt from rows", opened.seconds);
  // The words a recall searches: the query's terms less the names of the people it names.
  query::query_dependencies deps;
  deps.store = store;
  deps.terms = reading::index_terms;
  deps.now = [] { return std::int64_t{0}; };
  const query::query_service words(deps, knowledge::read_policy{});
  // Three passes over the queries; each query's median of the three, so that a pass this
  // VM slowed does not decide a figure.
  constexpr int passes = 3;
  std::vector<std::vector<double>> each(queries);
  std::vector<std::vector<std::string>> terms_of(queries);
  double terms = 0;
  for (std::size_t i = 0; i < queries; ++i) {
    const auto q = question_from(json::parse(events[first + i]).value("body", std::string()), i);
    terms_of[i] = words.searched_terms(q, words.named_people("acme", q));
    terms += double(terms_of[i].size());
  }
  std::size_t found = 0;
  std::uint64_t digest = 14695981039346656037ULL;  // of every id and score's bits, in order
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = 0; i < queries; ++i) {
      const auto t = clock_type::now();
      const auto entries = store->search_text("acme", terms_of[i], 70);
      const auto passages = store->search_passages("acme", terms_of[i], 70);
      each[i].push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
      if (pass == 0)
        for (const auto* hits : {&entries, &passages})
          for (const auto& [id, score] : *hits) {
            ++found;
            std::uint64_t bits = 0;
            std::memcpy(&bits, &score, sizeof bits);
            digest = (digest ^ std::hash<std::string>{}(id)) * 1099511628211ULL;
            digest = (digest ^ bits) * 1099511628211ULL;
          }
    }
  std::vector<double> ms;
  for (const auto& e : each)
    ms.push_back(median(e));
  double sum = 0;
  for (const double m : ms)
    sum += m;
  std::printf(
      "  BM25 in process over entries and passages (the best 70 of each, %zu queries, %.1f terms a query; each "
      "query's median of 3 passes): p50 %.2f ms, p99 %.2f ms, mean %.2f ms; %zu hits, digest %016llx\n",
      queries, terms / double(std::max<std::size_t>(queries, 1)), percentile(ms, 0.5), percentile(ms, 0.99),
      sum / double(std::max<std::size_t>(ms.size(), 1)), found, static_cast<unsigned long long>(digest));

  // kag_query in process on the same store and questions, as the MCP tool asks it.
  const query::entity_reader reader(store, {});
  std::vector<double> kag_ms;
  std::size_t entities = 0;
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t i = 0; i < queries; ++i) {
      query::kag_request r;
      r.query = question_from(json::parse(events[first + i]).value("body", std::string()), i);
      r.terms = reading::index_terms;
      const auto t = clock_type::now();
      const auto answer = query::kag_query(reader, "acme", r);
      kag_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
      entities += pass == 0 ? answer.entities.size() : 0;
    }
  std::printf("  kag_query in process (%zu queries, 3 passes): p50 %.2f ms, p99 %.2f ms; %zu entities answered\n",
              queries, percentile(kag_ms, 0.5), percentile(kag_ms, 0.99), entities);
  const auto memory = store->memory_stats();
  std::printf("  postings in memory: entries %.1f MiB, passages %.1f MiB\n", double(memory.at("postings")) / (1 << 20),
              double(memory.at("passage_postings")) / (1 << 20));
}

/// Dedup's search as it ran during the build, replayed on the store's entry vectors: before
/// every `stride`-th vector is added (in the order applied), its 10 nearest in the index of
/// those before it (dedup's neighbours) against an exact search of the same: of the exact ten
/// above dedup's threshold (0.92), the share the search returns, by candidate list. The stored
/// vectors are those dedup did not merge, so this is the search for a new entry like them.
/// `index` (empty) ends holding them all, the graph dedup and recall search.
void dedup_curve(const std::vector<std::pair<std::uint64_t, schemas::vector8>>& all, storage::vector_index& index) {
  constexpr std::size_t neighbours = 10, stride = 200;
  const double threshold = dedup::dedup_options{}.threshold;
  const std::array<std::size_t, 3> efs{64, 128, 256};
  std::array<std::size_t, 3> found{};
  std::size_t above = 0, asked = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && i % stride == 0) {
      ++asked;
      std::vector<float> exact;
      exact.reserve(i);
      for (std::size_t j = 0; j < i; ++j)
        exact.push_back(schemas::similarity(all[i].second, all[j].second));
      const auto n = static_cast<std::ptrdiff_t>(std::min(neighbours, exact.size()));
      std::partial_sort(exact.begin(), exact.begin() + n, exact.end(), std::greater<>());
      const auto want = static_cast<std::size_t>(
          std::count_if(exact.begin(), exact.begin() + n, [&](float s) { return s > threshold; }));
      above += want;
      // A hit counts when it is above the threshold and as near as the exact want-th (ties
      // with it are as near), as ef_curve counts.
      for (std::size_t e = 0; e < efs.size() && want > 0; ++e) {
        std::size_t got = 0;
        for (const auto& h : index.search(all[i].second, neighbours, efs[e]))
          got += h.similarity > threshold && h.similarity >= exact[want - 1];
        found[e] += std::min(got, want);
      }
    }
    index.add(all[i].first, all[i].second);
  }
  std::printf("  dedup's search before %zu of the entries was added: %zu of their exact ten above %.2f;", asked, above,
              threshold);
  for (std::size_t e = 0; e < efs.size(); ++e)
    std::printf(" ef %zu found %.4f%s", efs[e], double(found[e]) / double(std::max<std::size_t>(above, 1)),
                e + 1 < efs.size() ? "," : "\n");
}

/// The store's entry vectors (in the order they were applied, as dedup's index adds them, so
/// the same graph) searched by HNSW with candidate lists of several sizes (ef), against an
/// exact search of the same vectors, for the recall queries' vectors (the encoder and the
/// built-in query head, as engramd makes them): the share of the exact 10 and 70 nearest
/// found (recall asks for 70 of each list), and the time of a search.
void ef_curve(const std::filesystem::path& dir, const std::vector<std::string>& events, std::size_t first,
              const outside_options& o) {
  storage::open_options so;
  so.path = dir.string();
  so.read_only = true;
  const auto store = or_throw(storage::open_graph_store(so));
  const auto embedder = or_throw(embedding::use_lite_int8_embedder::load(o.model_path));
  const auto head = embedding::query_head::builtin();
  std::vector<std::pair<std::uint64_t, schemas::vector8>> all;
  const auto scanned =
      store->scan_vectors("acme", 0, [&](std::uint64_t seq, std::string_view, const schemas::vector8& v) {
        all.emplace_back(seq, v);
        return true;
      });
  if (scanned != storage::errc::ok)
    throw std::runtime_error("--ef-curve: the store's vectors could not be read to the end: " +
                             storage::to_string(scanned));
  std::printf("  %zu entry vectors; %zu queries\n", all.size(), o.queries);
  storage::vector_index index(embedder->dim());
  dedup_curve(all, index);  // grows the index the curve below searches
  constexpr std::size_t asked = 70;
  std::vector<schemas::vector8> queries;
  // Each query's exact similarities, most similar first: dense mail's templates give many
  // entries one similarity, so a hit counts when it is at least the exact r-th one (a tie
  // with the exact list is as near, whichever of the tied the exact search happened to list).
  std::vector<std::vector<float>> exact;
  for (std::size_t i = 0; i < o.queries; ++i) {
    const auto q = question_from(json::parse(events[first + i]).value("body", std::string()), i);
    const std::vector<std::string_view> one{q};
    queries.push_back(schemas::quantise(head->apply(or_throw(embedder->embed(one))[0])));
    std::vector<float> scored;
    scored.reserve(all.size());
    for (const auto& [seq, v] : all)
      scored.push_back(schemas::similarity(queries.back(), v));
    const auto n = static_cast<std::ptrdiff_t>(std::min(asked, scored.size()));
    std::partial_sort(scored.begin(), scored.begin() + n, scored.end(), std::greater<>());
    exact.emplace_back(scored.begin(), scored.begin() + n);
  }
  for (const std::size_t ef : {70, 96, 128, 192, 256, 384}) {
    std::size_t found10 = 0, found70 = 0, of10 = 0, of70 = 0;
    std::vector<double> us;
    for (int pass = 0; pass < 3; ++pass)
      for (std::size_t i = 0; i < queries.size(); ++i) {
        const auto t = clock_type::now();
        const auto hits = index.search(queries[i], asked, ef);
        us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t).count());
        if (pass > 0 || exact[i].empty())
          continue;
        // The first r hits found as near as the exact first r: those at least the exact r-th.
        auto as_near = [&](std::size_t r) {
          const float floor = exact[i][std::min(r, exact[i].size()) - 1];
          std::size_t n = 0;
          for (std::size_t h = 0; h < std::min(r, hits.size()); ++h)
            n += hits[h].similarity >= floor;
          return n;
        };
        found10 += as_near(10);
        of10 += std::min<std::size_t>(10, exact[i].size());
        found70 += as_near(asked);
        of70 += exact[i].size();
      }
    std::printf("  ef %3zu: recall@10 %.4f, recall@70 %.4f of exact search; a search p50 %.0f us, p99 %.0f us\n", ef,
                double(found10) / double(std::max<std::size_t>(of10, 1)),
                double(found70) / double(std::max<std::size_t>(of70, 1)), percentile(us, 0.5), percentile(us, 0.99));
  }
}

/// kag_query (the recall questions, the first `n`) and graph_traverse (from each person of
/// dense mail, to depth 1 and 2 in turn, `n` calls) over the kept-alive connection `c`: p50
/// and p99 as the client saw them, and the calls that failed.
void time_graph_tools(net::client& c, const std::map<std::string, std::string>& headers,
                      const std::vector<std::string>& events, std::size_t first, std::size_t n) {
  std::size_t id = 1'000'000;
  auto time = [&](const char* tool, auto args_of) {
    std::vector<double> ms;
    std::size_t failed = 0, bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const json req{{"jsonrpc", "2.0"},
                     {"id", ++id},
                     {"method", "tools/call"},
                     {"params", {{"name", tool}, {"arguments", args_of(i)}}}};
      const auto t = clock_type::now();
      const auto r = c.request("POST", "/mcp", req.dump(), headers, std::chrono::seconds(30));
      ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
      failed += r.status != 200 || r.body.find("\"isError\":false") == std::string::npos;
      bytes += r.body.size();
    }
    std::printf("  %s over HTTP (%zu calls): p50 %.2f ms, p99 %.2f ms; %zu failed, %.0f bytes an answer (mean)\n", tool,
                n, percentile(ms, 0.5), percentile(ms, 0.99), failed,
                double(bytes) / double(std::max<std::size_t>(n, 1)));
  };
  time("kag_query", [&](std::size_t i) {
    return json{{"query", question_from(json::parse(events[first + i]).value("body", std::string()), i)}};
  });
  const auto& people = evaluation::synthetic::dense_people();
  time("graph_traverse", [&](std::size_t i) {
    return json{{"start", people[i % people.size()]}, {"max_depth", 1 + (i / people.size()) % 2}};
  });
}

struct built {
  std::size_t messages = 0, entries = 0;
  double seconds = 0;
  /// Of which reading (rules, passages, the encoder; both cores) and the store stage (dedup,
  /// contradiction, apply; one thread, as in engramd).
  double read_seconds = 0, store_seconds = 0;
  /// The commit that built it (a kept store's, from its file; the last one that grew it).
  std::string commit;
  /// The entries the build was for, and false while it has not reached them (stopped, or
  /// growing).
  std::size_t target = 0;
  bool complete = false;
};

/// What a kept store is for: the memory budget and the model (`<store>/outside-bench.json`
/// holds them with the target, the build's figures so far and the commit that built it).
/// Later commits measure the same store again: opening it checks its layout.
json store_key(const outside_options& o) { return {{"memory_mb", o.memory_mb}, {"model", o.model_path}}; }

/// Writes `<dir>/outside-bench.json`: how far the build of `target` entries got.
void write_progress(const std::filesystem::path& dir, const outside_options& o, const built& b) {
  const char* commit = std::getenv("ENGRAM_COMMIT");  // set by tools/dev.sh bench
  std::ofstream out(dir / "outside-bench.json.tmp");
  out << json{{"key", store_key(o)},
              {"target", b.target},
              {"complete", b.complete},
              {"commit", commit ? commit : "unknown (ENGRAM_COMMIT unset)"},
              {"messages", b.messages},
              {"entries", b.entries},
              {"seconds", b.seconds},
              {"read_seconds", b.read_seconds},
              {"store_seconds", b.store_seconds}}
             .dump()
      << "\n";
  out.close();
  std::filesystem::rename(dir / "outside-bench.json.tmp", dir / "outside-bench.json");
}

/// A store kept at `dir` for the same key, with its build's figures; nothing when none is kept
/// there. Throws, naming both keys, when one is kept for another key.
std::optional<built> kept_store(const std::filesystem::path& dir, const outside_options& o) {
  std::ifstream in(dir / "outside-bench.json");
  auto j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("key"))
    return std::nullopt;
  // A store kept for another memory budget or model is not rebuilt over: it took hours.
  if (j["key"] != store_key(o))
    throw std::runtime_error("--store " + dir.string() + ": kept for " + j["key"].dump() + ", not for " +
                             store_key(o).dump() + "; left as it is");
  built b;
  b.messages = j.value("messages", std::size_t{0});
  b.entries = j.value("entries", std::size_t{0});
  b.seconds = j.value("seconds", 0.0);
  b.read_seconds = j.value("read_seconds", 0.0);
  b.store_seconds = j.value("store_seconds", 0.0);
  b.commit = j.value("commit", std::string());
  if (b.commit.empty())  // written without ENGRAM_COMMIT by an earlier build
    b.commit = "unknown";
  b.target = j.value("target", std::size_t{0});
  b.complete = j.value("complete", false);
  return b;
}

/// The store stage's time over one window of the build, by step.
struct window {
  std::size_t messages = 0, entries = 0;
  double store_seconds = 0, read_seconds = 0;
  std::map<std::string, double> steps;
};

/// One line a window: where the store stage's time goes as the store grows.
void print_window(const built& b, const window& w, const std::map<std::string, double>& steps,
                  const storage::graph_store& store, double since_start) {
  auto step = [&](const char* name) {
    const auto at = steps.find(name);
    const auto was = w.steps.find(name);
    return (at == steps.end() ? 0.0 : at->second) - (was == w.steps.end() ? 0.0 : was->second);
  };
  const auto engine = store.engine_stats();
  const double msgs = double(b.messages - w.messages);
  const double store_s = b.store_seconds - w.store_seconds;
  std::fprintf(stderr,
               "  built: %zu messages, %zu entries, %.0f s (reading %.0f s, store stage %.0f s); this window: %.0f "
               "messages, store stage %.1f s = %.2f ms a message (dedup %.2f, contradiction %.2f, write %.2f), "
               "reading %.1f s; SST %.0f MiB, compaction pending %.0f MiB\n",
               b.messages, b.entries, since_start, b.read_seconds, b.store_seconds, msgs, store_s,
               1000 * store_s / std::max(msgs, 1.0), 1000 * step("dedup") / std::max(msgs, 1.0),
               1000 * step("contradiction") / std::max(msgs, 1.0), 1000 * step("write") / std::max(msgs, 1.0),
               b.read_seconds - w.read_seconds, double(engine.at("live_sst_bytes")) / (1 << 20),
               double(engine.at("pending_compaction_bytes")) / (1 << 20));
}

/// The organisation's store at `dir` grown from `events` (in order, from `from.messages`:
/// a store kept from a build that stopped short of its target grows on) until it holds
/// `o.entries` entries, as engramd's store stage grows it: each message read (rules and the
/// encoder, both cores), then dedup and contradiction, then applied. Every 100,000 entries
/// and at the end, the snapshots (dedup's vector index, the store's in-memory indexes) are
/// written as engramd writes them when it stops, and the progress into outside-bench.json
/// (kept stores only), so a build stopped between two of them starts again from the last.
built build_store(const outside_options& o, const std::filesystem::path& dir, const std::vector<std::string>& events,
                  built from, bool keep, bool save_at_end = true) {
  storage::open_options so;
  so.path = dir.string();
  so.memory_mb = o.memory_mb;
  std::shared_ptr<storage::graph_store> store = or_throw(storage::open_graph_store(so));
  std::shared_ptr<const embedding::embedder> encoder = or_throw(embedding::use_lite_int8_embedder::load(o.model_path));
  services::metrics steps;
  actors::resolver r;
  r.steps = &steps;
  dedup::dedup_options dopts;
  dopts.dim = encoder->dim();
  r.dedup = std::make_unique<dedup::deduplicator>(store, dopts);
  r.contradiction = std::make_unique<contradiction::contradiction_finder>(store, r.dedup->reader());
  const auto snapshots = (dir / "vector-index").string();
  (void)or_throw(r.dedup->open(snapshots));
  reading::reader_context ctx{{}, encoder, nullptr};
  ctx.options.validator.passages = passages_used();
  built b = std::move(from);
  b.target = o.entries;
  const double seconds_before = b.seconds;
  const auto t0 = clock_type::now();
  auto checkpoint = [&] {
    b.seconds = seconds_before + seconds_since(t0);
    if (auto saved = r.dedup->save(snapshots); !saved)
      throw std::runtime_error(saved.error());
    if (auto saved = store->save_indexes(); !saved)
      throw std::runtime_error(saved.error());
    if (keep)
      write_progress(dir, o, b);
  };
  auto offset = static_cast<std::int64_t>(b.messages);
  constexpr std::size_t batch = 256, window_entries = 10000, checkpoint_entries = 100000;
  window w{b.messages, b.entries, b.store_seconds, b.read_seconds, steps.apply_steps()};
  std::size_t checkpointed = b.entries;
  for (std::size_t at = b.messages; at < events.size() && b.entries < o.entries; at += batch) {
    auto msgs = decode_events(events, at, at + batch);
    const auto read_from = clock_type::now();
    auto read = reading::read_messages(msgs, ctx, std::max(1u, std::thread::hardware_concurrency()));
    const auto store_from = clock_type::now();
    b.read_seconds += std::chrono::duration<double>(store_from - read_from).count();
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      actors::log_record rec;
      rec.position = {"engram-log", 0, offset++, "bench"};
      rec.payload = schemas::extracted_message{std::move(msgs[i]), std::move(read[i]), encoder->name()};
      storage::apply_outcome out{};
      if (actors::resolve_and_apply(*store, &r, rec, &out) != storage::errc::ok)
        throw std::runtime_error("apply failed at offset " + std::to_string(offset - 1));
      ++b.messages;
    }
    b.store_seconds += seconds_since(store_from);
    b.entries = entries_held(*store);
    if (b.entries >= checkpointed + checkpoint_entries) {
      checkpointed = b.entries;
      checkpoint();
    }
    if (b.entries >= w.entries + window_entries) {
      const auto now = steps.apply_steps();
      print_window(b, w, now, *store, seconds_before + seconds_since(t0));
      w = window{b.messages, b.entries, b.store_seconds, b.read_seconds, now};
    }
  }
  b.complete = b.entries >= o.entries;
  if (save_at_end)
    checkpoint();
  return b;
}
}  // namespace

int outside(const outside_options& o) {
  const bool keep = !o.store_dir.empty();
  const std::filesystem::path dir =
      keep ? std::filesystem::path(o.store_dir)
           : std::filesystem::temp_directory_path() / ("engram-bench-outside-" + std::to_string(::getpid()));
  const auto kept = keep ? kept_store(dir, o) : std::nullopt;
  if (keep && !kept && std::filesystem::exists(dir) && !std::filesystem::is_empty(dir))
    throw std::runtime_error("--store " + dir.string() +
                             ": not empty and not a store this benchmark kept; left as it is");
  const bool reused = kept && kept->complete && kept->target == o.entries;
  const bool grown = kept && !reused && kept->entries < o.entries;
  if (kept && !reused && !grown)
    throw std::runtime_error("--store " + dir.string() + ": holds " + std::to_string(kept->entries) +
                             " entries, built for " + std::to_string(kept->target) + ", not for --entries " +
                             std::to_string(o.entries) + "; left as it is");
  if (!kept)
    std::filesystem::remove_all(dir);
  const std::size_t messages = o.entries / entries_per_message + 100;
  // The stored mail, then the queries' messages, then the mail the crash step writes.
  const auto events = evaluation::synthetic::dense_events(messages + o.queries + crash_entries, {"acme"});
  const std::vector<std::string> stored(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(messages));
  const char* commit = std::getenv("ENGRAM_COMMIT");  // set by tools/dev.sh bench
  std::printf(
      "outside: one organisation of dense mail grown to %zu entries, storage.memory_mb %zu, %u cores, commit %s\n",
      o.entries, o.memory_mb, std::thread::hardware_concurrency(), commit ? commit : "unknown");
  if (grown)
    std::printf("  (the store kept in %s holds %zu entries of %zu messages, built by commit %s: grown from there)\n",
                dir.c_str(), kept->entries, kept->messages, kept->commit.c_str());
  const auto b = reused ? *kept : build_store(o, dir, stored, grown ? *kept : built{}, keep);
  if (reused)
    std::printf("  (the store kept in %s, built before by commit %s: its figures are that build's)\n", dir.c_str(),
                b.commit.c_str());
  std::uintmax_t disk = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir))
    if (f.is_regular_file())
      disk += f.file_size();
  // A store another benchmark built (bench replay's live store) records no build times.
  const bool timed = b.seconds > 0 && b.read_seconds > 0 && b.store_seconds > 0;
  std::printf("  store: %zu messages, %zu entries, %.0f MiB on disk\n", b.messages, b.entries,
              double(disk) / (1 << 20));
  if (timed)
    std::printf(
        "  built in %.0f s (%.0f entries/s), of which reading (rules, passages, encoder; %u threads) %.0f s = %.0f "
        "messages/s, the store stage (dedup, contradiction, apply; one thread) %.0f s = %.0f messages/s\n",
        b.seconds, double(b.entries) / b.seconds, std::max(1u, std::thread::hardware_concurrency()), b.read_seconds,
        double(b.messages) / b.read_seconds, b.store_seconds, double(b.messages) / b.store_seconds);
  else
    std::printf("  (the build's times were not recorded for this store)\n");

  if (o.build_only)
    return b.complete ? 0 : 1;
  if (o.words_only) {
    words_only(dir, events, stored.size(), o.queries);
    return 0;
  }
  if (o.ef_curve) {
    ef_curve(dir, events, stored.size(), o);
    return 0;
  }

  std::unique_ptr<ingest::embedded_broker> broker;
  const std::string token = "bench-outside-token-0123456789";
  // Without a snapshot an open rebuilds the in-memory indexes (~10 s at 100k here), so a
  // million is given longer than the usual minute.
  std::optional<engramd_child> engramd;
  auto start = [&](const std::filesystem::path& store_dir) {
    // A broker of its own each time: a consumer group on the same broker waits for the last
    // member's session to time out before it is given its partitions again.
    engramd.reset();
    broker = test_broker(4);
    const auto t0 = clock_type::now();
    engramd.emplace(
        broker->bootstrap(), store_dir.string(), o.model_path,
        std::vector<std::string>{"auth.tokens=[{token: " + token + ", organization_id: acme, scopes: [read, write]}]",
                                 "storage.memory_mb=" + std::to_string(o.memory_mb)},
        std::chrono::seconds(std::max<std::size_t>(60, o.entries / 2000)));
    return seconds_since(t0);
  };
  const double ready_s = start(dir);
  const double rss_ready = rss_mib(engramd->pid());
  const auto port = engramd->port();
  std::printf("  engramd: ready in %.1f s, RSS %.1f MiB (%.0f bytes per entry)\n", ready_s, rss_ready,
              rss_ready * 1048576.0 / double(std::max<std::size_t>(b.entries, 1)));

  // Distinct questions, each from a message the store does not hold, over one connection.
  net::client c("127.0.0.1", std::to_string(port));
  const std::map<std::string, std::string> headers{{"Content-Type", "application/json"},
                                                   {"Accept", "application/json, text/event-stream"},
                                                   {"Authorization", "Bearer " + token}};
  std::vector<double> ms;
  std::size_t failed = 0, results = 0;
  for (std::size_t i = 0; i < o.queries; ++i) {
    const auto& ev = events[stored.size() + i];
    const auto body = json::parse(ev).value("body", std::string());
    const json req{{"jsonrpc", "2.0"},
                   {"id", i + 1},
                   {"method", "tools/call"},
                   {"params", {{"name", "recall_knowledge"}, {"arguments", {{"query", question_from(body, i)}}}}}};
    const auto t = clock_type::now();
    const auto r = c.request("POST", "/mcp", req.dump(), headers, std::chrono::seconds(30));
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
    if (r.status != 200 || r.body.find("\"isError\":false") == std::string::npos)
      ++failed;
    else
      results += r.body.find("\\\"id\\\"") != std::string::npos;
  }
  const double rss_after = rss_mib(engramd->pid());
  const auto metrics = net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/metrics").body;
  const double server_s = metric_sum(metrics, "engram_mcp_request_seconds_sum{tool=\"recall_knowledge\"} ");
  const double server_n = metric_sum(metrics, "engram_mcp_request_seconds_count{tool=\"recall_knowledge\"} ");
  std::printf(
      "  recall_knowledge over HTTP (%zu distinct queries of up to 12 words, %zu connection(s)): p50 %.2f ms, p99 "
      "%.2f ms; server time %.2f ms a call (mean); %zu failed, %zu answered with results\n",
      ms.size(), c.connections(), percentile(ms, 0.5), percentile(ms, 0.99),
      server_n > 0 ? 1000 * server_s / server_n : 0.0, failed, results);
  std::string stages;
  for (std::size_t i = 0; i < query::recall_stage_count; ++i) {
    const char* stage = query::recall_stage_name(static_cast<query::recall_stage>(i));
    const double s = metric_sum(metrics, "engram_recall_stage_seconds_total{stage=\"" + std::string(stage) + "\"} ");
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.2f", stages.empty() ? "" : ", ", stage,
                  server_n > 0 ? 1000 * s / server_n : 0.0);
    stages += part;
  }
  std::printf("  server time by stage (ms a call, mean): %s\n", stages.c_str());
  const double mib = 1048576.0;
  std::printf(
      "  after the queries: RSS %.1f MiB (%.0f bytes per entry); heap in use %.1f MiB, free %.1f; RocksDB memtables "
      "%.1f MiB, block cache %.1f, table readers %.1f; vectors %.0f; embedding cache %.0f texts\n"
      "  in-memory indexes: entry vectors %.1f MiB (%.0f bytes per entry), passage vectors %.1f, postings %.1f, "
      "passage postings %.1f\n",
      rss_after, rss_after * mib / double(std::max<std::size_t>(b.entries, 1)),
      metric_sum(metrics, "engram_process_heap_bytes{kind=\"in_use\"}") / mib,
      metric_sum(metrics, "engram_process_heap_bytes{kind=\"free\"}") / mib,
      metric_sum(metrics, "engram_rocksdb{name=\"memtable_bytes\"}") / mib,
      metric_sum(metrics, "engram_rocksdb{name=\"block_cache_bytes\"}") / mib,
      metric_sum(metrics, "engram_rocksdb{name=\"table_readers_bytes\"}") / mib,
      metric_sum(metrics, "engram_vector_index_size "), metric_sum(metrics, "engram_embedding_cache{kind=\"entries\"}"),
      metric_sum(metrics, "engram_memory_bytes{part=\"entry_vectors\"}") / mib,
      metric_sum(metrics, "engram_memory_bytes{part=\"entry_vectors\"}") / double(std::max<std::size_t>(b.entries, 1)),
      metric_sum(metrics, "engram_memory_bytes{part=\"passage_vectors\"}") / mib,
      metric_sum(metrics, "engram_memory_bytes{part=\"postings\"}") / mib,
      metric_sum(metrics, "engram_memory_bytes{part=\"passage_postings\"}") / mib);
  time_graph_tools(c, headers, events, stored.size(), std::min<std::size_t>(o.queries, 200));
  // Restarts: after a stop (its indexes from the snapshots the stop wrote); after a crash
  // that followed writes: a copy of the store given crash_entries more entries by this
  // process, which then ends without writing any snapshot, as a kill -9 leaves it (the next
  // open loads the stop's snapshots and applies the journal those batches wrote; dedup's
  // vectors from its snapshot and the vectors after it); and with indexes/ removed (the text
  // and passage indexes rebuilt from their rows).
  engramd.reset();  // it writes its snapshots into the store as it stops
  const double ready_after_stop = start(dir);
  engramd.reset();
  const std::filesystem::path crashed = dir.string() + "-crashed";
  std::filesystem::remove_all(crashed);
  std::filesystem::copy(dir, crashed, std::filesystem::copy_options::recursive);
  std::filesystem::remove(crashed / "outside-bench.json");
  {
    outside_options more = o;
    more.entries = b.entries + crash_entries;
    (void)build_store(more, crashed, events, b, /*keep=*/false, /*save_at_end=*/false);
  }
  const double ready_crashed = start(crashed);
  engramd.reset();
  std::filesystem::remove_all(crashed);
  std::filesystem::remove_all(dir / "indexes");
  const double ready_rebuilt = start(dir);
  std::printf(
      "  engramd ready after a stop: %.1f s (indexes loaded); after a crash that followed %zu entries of writes: "
      "%.1f s (the stop's snapshot and the journal); with indexes/ removed: %.1f s (text and passage indexes rebuilt "
      "from their rows)\n",
      ready_after_stop, crash_entries, ready_crashed, ready_rebuilt);
  engramd.reset();
  if (!keep)
    std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace engram::bench
