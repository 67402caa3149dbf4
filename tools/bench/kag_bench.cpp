#include "tools/bench/kag_bench.hpp"

#include "reading/extract.hpp"
#include "reading/parse.hpp"
#include "reading/sentences.hpp"
#include "reading/signature.hpp"
#include "query/query.hpp"
#include "query/kag.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/extraction.hpp"
#include "tools/engramctl/docs.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using schemas::entity_kind;

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

/// The generated organisation: people work at companies and report to people of the same
/// company; companies use technologies, sit in places, and are customers, partners or
/// competitors of others. Each message states two relations in two entries.
struct world {
  std::size_t people, companies, technologies, places;
  std::string person(std::size_t i) const { return "Person" + std::to_string(i) + " Lastname"; }
  std::string company(std::size_t i) const { return "Company" + std::to_string(i) + " Labs"; }
  std::string technology(std::size_t i) const { return "Tech" + std::to_string(i); }
  std::string place(std::size_t i) const { return "City" + std::to_string(i); }
};

schemas::extraction message_knowledge(const world& w, std::size_t k, std::mt19937_64& rng) {
  schemas::extraction x;
  auto mention = [&](entity_kind kind, const std::string& name) {
    x.mentions.push_back({kind, name, name, {}, {}, {}, {}, {}});
    return x.mentions.size() - 1;
  };
  auto statement = [&](std::size_t a, std::size_t b, const std::string& predicate) {
    schemas::entry e;
    e.type = schemas::entry_type::relationship;
    e.content = x.mentions[a].value + " " + predicate + " " + x.mentions[b].value + " (" + std::to_string(k) + ").";
    e.title = e.content;
    e.confidence = 0.8;
    e.mentions = {a, b};
    e.sig.key = "s" + std::to_string(k) + "-" + std::to_string(x.entries.size());
    e.sig.words = reading::content_words(e.content);  // what recall's BM25 reads
    x.entries.push_back(std::move(e));
    x.relations.push_back({a, b, predicate, 0.8, x.entries.size() - 1, false, ""});
  };
  // Every person, company, technology and place appears (once the messages outnumber them).
  const auto p = (k * 7919) % w.people, c = p % w.companies;
  const auto person = mention(entity_kind::person, w.person(p));
  const auto company = mention(entity_kind::organization, w.company(c));
  statement(person, company, "works_at");
  switch (k % 4) {
    case 0: {
      const auto boss = mention(entity_kind::person, w.person((p + w.companies) % w.people));  // same company
      statement(person, boss, "reports_to");
      break;
    }
    case 1: statement(company, mention(entity_kind::technology, w.technology(k / 4 % w.technologies)), "uses"); break;
    case 2: statement(company, mention(entity_kind::location, w.place(k / 4 % w.places)), "located_in"); break;
    default: {
      static const char* between[] = {"customer_of", "partner_of", "competes_with"};
      statement(company, mention(entity_kind::organization, w.company(rng() % w.companies)), between[rng() % 3]);
    }
  }
  return x;
}

/// Fills the store with messages' knowledge of `w` until it holds `want` entries; returns the
/// entries and messages written.
std::pair<std::size_t, std::size_t> fill(storage::graph_store& store, const world& w, std::size_t want) {
  std::mt19937_64 rng(19);
  std::size_t entries = 0, k = 0;
  while (entries < want) {
    schemas::inbound_message m;
    m.event_id = "kag-" + std::to_string(k);
    m.organization_id = "bench";
    m.source = schemas::source_type::chat;
    m.sent_at = "2026-05-01T10:00:00Z";
    m.sent_at_ms = *schemas::parse_rfc3339(m.sent_at);
    m.from = {"", "bench", ""};
    m.body = "-";
    auto x = message_knowledge(w, k, rng);
    entries += x.entries.size();
    storage::apply_outcome how{};
    if (store.apply({"fill", 0, static_cast<std::int64_t>(k), "bench"}, &m, &x, nullptr, &how) != storage::errc::ok)
      throw std::runtime_error("fill failed");
    ++k;
  }
  return {entries, k};
}

/// The kag_query rows: two and three hops.
void kag_rows(const query::entity_reader& reader, const world& w, std::size_t queries) {
  for (std::size_t hops : {2u, 3u}) {
    std::vector<double> times;
    double entities = 0, relations = 0, reachable = 0;
    std::mt19937_64 q(hops);
    for (std::size_t i = 0; i < queries; ++i) {
      query::kag_request r;
      r.query = "Who does " + w.person(q() % w.people) + " report to, and what does their company use?";
      r.max_hops = hops;
      auto t = clock_type::now();
      auto a = query::kag_query(reader, "bench", r);
      times.push_back(ms_since(t));
      entities += double(a.entities.size());
      relations += double(a.relations.size());
      reachable += double(a.total_entities);
    }
    const double n = double(queries);
    std::printf(
        "| kag_query, max_hops %zu, limit 20 | %.2f | %.2f | ms | %.0f entities reachable, %.1f returned, "
        "%.1f relations an answer |\n",
        hops, percentile(times, 0.5), percentile(times, 0.99), reachable / n, entities / n, relations / n);
  }
}

/// What hybrid recall costs: recall_knowledge's path by words alone (this store has no
/// vectors), the same questions with and without recall.graph_expansion.
void recall_rows(const std::shared_ptr<storage::graph_store>& store, const world& w, std::size_t count) {
  for (bool expansion : {false, true}) {
    query::query_dependencies deps;
    deps.store = store;
    deps.terms = reading::index_terms;
    deps.now = [] { return *schemas::parse_rfc3339("2026-06-01T00:00:00Z"); };
    knowledge::read_policy policy;
    policy.graph_expansion = expansion;
    const query::query_service queries(std::move(deps), policy);
    std::vector<double> times;
    double results = 0;
    std::mt19937_64 q(7);
    for (std::size_t i = 0; i < count; ++i) {
      query::recall_request r;
      r.query = "Who does " + w.person(q() % w.people) + " report to, and what does their company use?";
      r.limit = 10;
      auto t = clock_type::now();
      results += double(queries.recall("bench", r).size());
      times.push_back(ms_since(t));
    }
    std::printf(
        "| recall_knowledge by words, limit 10, recall.graph_expansion %s | %.2f | %.2f | ms | %.1f results "
        "a question; %s |\n",
        expansion ? "on" : "off", percentile(times, 0.5), percentile(times, 0.99), results / double(count),
        expansion ? "adds a kag_query walk (two hops, ten entities) and its statements to the fusion"
                  : "BM25 over 100,000 entries");
  }
}

/// Relation extraction: the rules extractor (no type model) over relation sentences.
void relation_extraction_row() {
  // clang-format off
  const char* sentences[] = {
      "Mei Chen joined Contoso as CTO last month.", "Hugo Martin reports to Claire Dubois.",
      "Globex runs on Snowflake.", "Initech is headquartered in Lisbon.", "Umbrella Labs is a customer of Globex.",
      "Initech, a subsidiary of Globex, signed the renewal.", "Contoso's CFO Dana Smith approved the budget.",
      "We will send the revised proposal by Friday."};
  // clang-format on
  std::vector<schemas::inbound_message> ms;
  for (std::size_t i = 0; i < 2000; ++i) {
    schemas::inbound_message m;
    m.event_id = "x" + std::to_string(i);
    m.organization_id = "bench";
    m.sent_at = "2026-05-01T10:00:00Z";
    m.sent_at_ms = *schemas::parse_rfc3339(m.sent_at);
    m.from = {"Sarah Lee", "sarah@acme.example", ""};
    m.body = std::string(sentences[i % 8]) + " " + sentences[(i + 3) % 8] + " " + sentences[(i + 5) % 8];
    ms.push_back(std::move(m));
  }
  std::size_t rels = 0;
  auto t = clock_type::now();
  for (const auto& m : ms)
    rels += reading::extract_validated(m, {}).relations.size();
  const double s = ms_since(t) / 1000;
  std::printf(
      "| relation extraction (rules, 3 sentences a message, no type model) | %.0f | | messages/s | %.2f "
      "relations a message, one core |\n",
      double(ms.size()) / s, double(rels) / double(ms.size()));
}

/// The sentence parser (reading/parse.hpp) over the sentences of the relation development
/// set's messages (business mail and chat): time a sentence, and how many it parses.
void parser_row() {
  auto parser = reading::sentence_parser::open();
  if (!parser)
    throw std::runtime_error(parser.error());
  std::ifstream in("tests/data/relations/dev.jsonl");
  std::vector<std::string> sentences;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object())
      for (auto& sentence : reading::split_sentences(j.value("body", "")))
        sentences.push_back(std::move(sentence));
  }
  if (sentences.empty())
    throw std::runtime_error("no sentences in tests/data/relations/dev.jsonl (run from the source root)");
  std::vector<double> times;
  std::size_t complete = 0, skipping = 0;
  for (const auto& sentence : sentences) {
    auto t = clock_type::now();
    const auto p = (*parser)->parse(sentence);
    times.push_back(ms_since(t));
    complete += p && p->skipped == 0;
    skipping += p && p->skipped > 0;
  }
  const double n = double(sentences.size());
  const auto& limits = (*parser)->limits();
  std::printf(
      "| sentence parser (Link Grammar, linkage limit %d, at most %zu words, words skipped up to %zu) | %.2f | %.2f "
      "| ms a sentence | %zu sentences of the relation dev set: %.0f %% parsed whole, %.0f %% with skipped words, "
      "%.0f %% not parsed; one core |\n",
      limits.linkages, limits.max_words, limits.max_words_skipping, percentile(times, 0.5), percentile(times, 0.99),
      sentences.size(), 100.0 * double(complete) / n, 100.0 * double(skipping) / n,
      100.0 * double(sentences.size() - complete - skipping) / n);
}

/// Document ingest: read, clean and chunk Markdown pages (about 3 KB each), as ingest-docs does.
void document_ingest_row(const std::filesystem::path& dir) {
  const auto docs = dir / "docs";
  std::filesystem::create_directories(docs);
  const std::size_t files = 200;
  for (std::size_t f = 0; f < files; ++f) {
    std::ofstream out(docs / ("doc" + std::to_string(f) + ".md"));
    out << "# Document " << f << "\n\n";
    for (int s = 0; s < 4; ++s) {
      out << "## Section " << s << "\n\n";
      for (int p = 0; p < 3; ++p)
        out << "Company" << (f + s) << " Labs runs on Tech" << p << ". Person" << f << " Lastname joined Company" << s
            << " Labs as CTO. The **renewal** was signed in [March](x) with "
            << "an annual value that both sides agreed on after a long review of the terms.\n\n";
    }
  }
  std::size_t chunks = 0;
  auto t = clock_type::now();
  for (std::size_t f = 0; f < files; ++f) {
    ctl::document d;
    std::string why;
    if (!ctl::read_document((docs / ("doc" + std::to_string(f) + ".md")).string(), 4000, &d, &why))
      throw std::runtime_error(why);
    chunks += d.chunks.size();
  }
  const double s = ms_since(t) / 1000;
  std::printf(
      "| document ingest (read, clean, chunk; Markdown pages of ~3 KB) | %.0f | | pages/s | %.1f chunks a "
      "page; PDF adds pdftotext's time |\n",
      double(files) / s, double(chunks) / double(files));
}

}  // namespace

int kag(const kag_bench_options& o) {
  const unsigned cores = std::thread::hardware_concurrency();
  // Relation extraction quality: the development set (the rules were written against it) and
  // the held-out set (written by a helper that never saw the rules; never tuned on).
  for (const auto* set : {"dev", "heldout"}) {
    const auto rep = evaluation::evaluate_relations(std::string("tests/data/relations/") + set + ".jsonl", {});
    if (!rep.error.empty()) {
      std::fprintf(stderr, "%s (run from the source root)\n", rep.error.c_str());
      return 1;
    }
    std::printf("Relations, %s set (rules extractor):\n\n%s\n", set, rep.table().c_str());
  }
  // Entities: 60 % people, 30 % companies, 8 % technologies, 2 % places.
  world w{o.entities * 6 / 10, o.entities * 3 / 10, std::max<std::size_t>(1, o.entities * 8 / 100),
          std::max<std::size_t>(1, o.entities * 2 / 100)};
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-kag-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto opened = storage::open_graph_store({dir.string()});
  if (!opened)
    throw std::runtime_error(opened.error());
  std::shared_ptr<storage::graph_store> store = std::move(*opened);
  auto t0 = clock_type::now();
  const auto [entries, k] = fill(*store, w, o.entries);
  const double fill_s = ms_since(t0) / 1000;
  const auto stats = store->stats();
  const auto entity_count = stats.empty() ? 0 : stats[0].entities;
  query::entity_reader reader(store, {});

  std::printf(
      "kag_query at %zu entries, %llu entities, %zu messages (filled in %.1f s); %u cores; in-process over "
      "RocksDB (no HTTP)\n\n",
      entries, static_cast<unsigned long long>(entity_count), k, fill_s, cores);
  std::printf("| figure | p50 | p99 | unit | notes |\n|---|---|---|---|---|\n");
  kag_rows(reader, w, o.queries);
  recall_rows(store, w, o.queries);
  relation_extraction_row();
  parser_row();
  document_ingest_row(dir);
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace engram::bench
