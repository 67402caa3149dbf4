#include "evaluation/conversations.hpp"

#include "actors/engine/engine.hpp"
#include "reading/signature.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/producer.hpp"
#include "net/http.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <unistd.h>

namespace engram::evaluation {

namespace {

using json = nlohmann::json;

/// The value of `r`; the measurement cannot go on without it.
template <class T>
T or_throw(engram::result<T> r) {
  if (!r)
    throw std::runtime_error(r.error());
  return std::move(*r);
}

constexpr std::int64_t day_ms = 86400000, week_ms = 7 * day_ms;
constexpr std::size_t k = 10;

struct message {
  std::string id, from, text;
  std::int64_t sent_ms = 0;
};

struct question {
  std::string id, kind, text;
  std::set<std::string> answers;
};

struct conversation {
  std::string id;
  std::vector<std::string> speakers;
  std::vector<message> messages;
  std::vector<question> questions;
};

conversation read_conversation(const std::filesystem::path& file) {
  std::ifstream in(file);
  auto j = json::parse(in);
  conversation c;
  c.id = j.at("id").get<std::string>();
  c.speakers = j.at("speakers").get<std::vector<std::string>>();
  for (const auto& m : j.at("messages")) {
    auto ms = schemas::parse_rfc3339(m.at("sentAt").get<std::string>());
    if (!ms)
      throw std::runtime_error(file.string() + ": bad sentAt in " + m.at("id").get<std::string>());
    c.messages.push_back({m.at("id"), m.at("from"), m.at("text"), *ms});
  }
  for (const auto& q : j.at("questions")) {
    question x{q.at("id"), q.at("kind"), q.at("question"), {}};
    for (const auto& a : q.at("answers"))
      x.answers.insert(a.get<std::string>());
    c.questions.push_back(std::move(x));
  }
  return c;
}

std::vector<std::string> terms_of(const std::string& text) { return reading::index_terms(text); }

/// BM25 (k1 1.2, b 0.75) over a conversation's raw message texts: the baseline with no
/// knowledge at all. The `n` best message ids (ties by id).
class raw_bm25 {
public:
  explicit raw_bm25(const std::vector<message>& messages) {
    for (const auto& m : messages) {
      auto t = terms_of(m.text);
      std::map<std::string, std::uint32_t> tf;
      for (const auto& w : t)
        ++tf[w];
      for (const auto& [w, _] : tf)
        ++df_[w];
      docs_.push_back({m.id, std::move(tf), t.size()});
      total_ += t.size();
    }
  }
  [[nodiscard]] std::vector<std::string> top(const std::string& query, std::size_t n) const {
    const double avg = docs_.empty() ? 1 : double(total_) / double(docs_.size());
    std::set<std::string> q;
    for (auto& t : terms_of(query))
      q.insert(t);
    std::vector<std::pair<double, std::string>> scored;
    for (const auto& d : docs_) {
      double s = 0;
      for (const auto& t : q) {
        auto it = d.tf.find(t);
        if (it == d.tf.end())
          continue;
        const double df = df_.at(t), N = double(docs_.size());
        const double idf = std::log(1 + (N - df + 0.5) / (df + 0.5));
        const double f = it->second;
        s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * double(d.length) / avg));
      }
      if (s > 0)
        scored.emplace_back(-s, d.id);
    }
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < n; ++i)
      out.push_back(scored[i].second);
    return out;
  }

private:
  struct doc {
    std::string id;
    std::map<std::string, std::uint32_t> tf;
    std::size_t length;
  };
  std::vector<doc> docs_;
  std::map<std::string, std::uint32_t> df_;
  std::size_t total_ = 0;
};

std::string address_of(const std::string& speaker) {
  std::string a;
  for (char c : speaker)
    if (std::isalnum(static_cast<unsigned char>(c)))
      a.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    else if (c == ' ')
      a.push_back('.');
  return a + "@chat.example";
}

/// The conversation's events, moved by whole weeks so that it ends in the week before `now`.
std::vector<std::string> events_of(const conversation& c, const std::string& org, std::int64_t now) {
  const auto last = c.messages.back().sent_ms;
  const auto yesterday_end = (now / day_ms) * day_ms;  // today 00:00: the run's day starts
  const std::int64_t shift = ((yesterday_end - last) / week_ms) * week_ms;
  std::vector<std::string> out;
  for (const auto& m : c.messages) {
    json to = json::array();
    for (const auto& s : c.speakers)
      if (s != m.from)
        to.push_back({{"name", s}, {"address", address_of(s)}});
    out.push_back(json{
        {"eventId", m.id},
        {"organizationId", org},
        {"sourceType", "chat"},
        {"sourceId", "chat:" + m.id},
        {"threadId", c.id},
        {"sentAt", schemas::format_rfc3339(m.sent_ms + shift)},
        {"from", {{"name", m.from}, {"address", address_of(m.from)}}},
        {"to", to},
        {"cc", json::array()},
        {"subject", ""},
        {"body",
         m.text}}.dump());
  }
  return out;
}

/// The conversations of `dir` (*.json), in name order.
std::vector<conversation> read_conversations(const std::string& dir) {
  std::vector<conversation> convs;
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".json")
      files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    convs.push_back(read_conversation(f));
  if (convs.empty())
    throw std::runtime_error("no conversations in " + dir);
  return convs;
}

/// What the store holds, logically (keys and values as the digest reads them): entries with
/// their indexes, and passages with theirs.
struct stored_size {
  std::uint64_t entries = 0, passages = 0, entry_bytes = 0, passage_bytes = 0, message_bytes = 0;
};

stored_size stored_size_of(const storage::graph_store& store) {
  std::map<std::string, std::uint64_t> bytes;
  std::string family;
  store.visit_logical([&](std::string_view name) { family = std::string(name); },
                      [&](std::string_view k, std::string_view v) { bytes[family] += k.size() + v.size(); });
  stored_size st;
  for (const auto& o : store.stats()) {
    st.entries += o.entries;
    st.passages += o.passages;
  }
  for (const char* f : {"entries", "by_type", "titles", "by_slot", "text", "vectors", "relations", "relations_in"})
    st.entry_bytes += bytes[f];
  st.passage_bytes = bytes["passages"] + bytes["passage_text"];
  st.message_bytes = bytes["messages"];
  return st;
}

/// ENGRAM_BENCH_MISSES: what was missed, and (=2) what the answer said and what came first.
void show_miss(const question& q, const conversation& c, const json& req, json body, const std::string& url,
               const std::map<std::string, std::string>& headers) {
  std::fprintf(stderr, "MISS %s [%s] %s\n", q.id.c_str(), q.kind.c_str(), q.text.c_str());
  if (std::string(std::getenv("ENGRAM_BENCH_MISSES")) == "2") {
    for (const auto& m : c.messages)
      if (q.answers.count(m.id))
        std::fprintf(stderr, "   answer %s: %s\n", m.id.c_str(), m.text.c_str());
    int shown = 0;
    json preq = req;
    preq["params"]["arguments"]["kinds"] = {"passage"};
    auto pr = json::parse(net::fetch("POST", url, preq.dump(), headers, std::chrono::seconds(30)).body, nullptr, false);
    for (const auto& res : pr["result"]["structuredContent"]["results"])
      if (shown++ < 3)
        std::fprintf(stderr, "   passage %.4f %s: %s\n", res.value("score", 0.0), res.value("eventId", "").c_str(),
                     res.value("text", "").substr(0, 100).c_str());
    shown = 0;
    for (const auto& res : body["result"]["structuredContent"]["results"])
      if (shown++ < 4)
        std::fprintf(stderr, "   got %s %.4f %s: %s\n", res.value("kind", "").c_str(), res.value("score", 0.0),
                     res.value("eventId", "").c_str(),
                     res.value(res.value("kind", "") == "entry" ? "content" : "text", "").substr(0, 140).c_str());
  }
}

void print_figures(const conversation_figures& f, const std::string& label, double ingest_s, const stored_size& st,
                   const std::string& query_head) {
  std::printf(
      "recall-conversations, %s set (%zu conversations, %zu messages, applied in %.1f s; recall_knowledge "
      "limit %zu over MCP vs BM25 over the raw messages; query head %s):\n",
      label.c_str(), f.conversations, f.messages, ingest_s, k, query_head.c_str());
  std::printf(
      "  stored: %llu entries, %.0f bytes each with their indexes; %llu passages, %.0f bytes each with "
      "theirs (%.0f bytes of passages a stored entry); messages %.0f bytes each\n",
      static_cast<unsigned long long>(st.entries), st.entries ? double(st.entry_bytes) / double(st.entries) : 0.0,
      static_cast<unsigned long long>(st.passages), st.passages ? double(st.passage_bytes) / double(st.passages) : 0.0,
      st.entries ? double(st.passage_bytes) / double(st.entries) : 0.0, double(st.message_bytes) / double(f.messages));
  std::printf("  %-10s %9s %12s %12s %8s   %s\n", "kind", "questions", "Engram", "raw BM25", "delta",
              "recall@1 / @5, Engram and raw BM25");
  for (const char* kind : {"single", "multi", "temporal", "inference", "all"}) {
    auto it = f.by_kind.find(kind);
    if (it == f.by_kind.end())
      continue;
    const auto& r = it->second;
    const double a = double(r.engram) / double(r.questions), b = double(r.bm25) / double(r.questions);
    auto at = [&](std::size_t hits) { return double(hits) / double(r.questions); };
    std::printf("  %-10s %9zu %5zu (%.3f) %5zu (%.3f) %+8.3f   %.3f / %.3f, %.3f / %.3f\n", kind, r.questions, r.engram,
                a, r.bm25, b, a - b, at(r.engram_at[0]), at(r.engram_at[1]), at(r.bm25_at[0]), at(r.bm25_at[1]));
  }
  if (auto it = f.by_kind.find("none"); it != f.by_kind.end())
    std::printf(
        "  no answer %9zu questions the conversation does not answer; nothing returned: Engram %zu, raw BM25 %zu\n",
        it->second.questions, it->second.engram, it->second.bm25);
}

}  // namespace

conversation_figures recall_conversations(const std::string& dir, const std::string& label, config::engram_config cfg) {
  const auto convs = read_conversations(dir);

  auto broker = or_throw(ingest::embedded_broker::start(
      {"inbound-messages", "engram-log", "engram-reminders", "engram-dlq", "engram-keys"}, 4));
  const auto store_dir =
      std::filesystem::temp_directory_path() / ("engram-conversations-" + std::to_string(::getpid()) + "-" + label);
  std::filesystem::remove_all(store_dir);
  cfg.kafka.brokers = broker->bootstrap();
  cfg.storage.path = store_dir.string();
  cfg.samples.load = false;
  cfg.http.listen = "127.0.0.1:0";
  cfg.extraction.bulk = "skip";  // the default: chat is read as person mail
  const auto query_head = cfg.recall.query_head;
  std::map<std::string, std::string> token_of;
  for (const auto& c : convs) {
    const auto org = "conv-" + c.id;
    token_of[org] = "bench-token-" + c.id + "-0123456789abcdef";
    cfg.auth.tokens.push_back({token_of[org], org, {"read", "write"}, "bench"});
  }
  auto producer = or_throw(ingest::kafka_producer::create(broker->bootstrap(), {}));
  auto e = or_throw(engine::engine::start(cfg, {}));
  const auto now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  conversation_figures f;
  f.conversations = convs.size();
  for (const auto& c : convs) {
    const auto org = "conv-" + c.id;
    for (const auto& ev : events_of(c, org, now))
      if (!producer->produce("inbound-messages", org, ev))
        throw std::runtime_error(producer->last_error());
    f.messages += c.messages.size();
  }
  if (!producer->flush(std::chrono::seconds(60)))
    throw std::runtime_error(producer->last_error());
  const auto t0 = std::chrono::steady_clock::now();
  for (auto deadline = t0 + std::chrono::minutes(30); e->metrics().applied() < f.messages;) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("conversations not applied: " + std::to_string(e->metrics().applied()) + " of " +
                               std::to_string(f.messages));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double ingest_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto stored = stored_size_of(e->store());
  const std::string url = "http://127.0.0.1:" + std::to_string(e->http_port()) + "/mcp";
  for (const auto& c : convs) {
    const auto org = "conv-" + c.id;
    const std::map<std::string, std::string> headers{{"Authorization", "Bearer " + token_of[org]},
                                                     {"Content-Type", "application/json"}};
    const raw_bm25 baseline(c.messages);
    for (const auto& q : c.questions) {
      json req{{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "tools/call"},
               {"params", {{"name", "recall_knowledge"}, {"arguments", {{"query", q.text}, {"limit", k}}}}}};
      if (const char* kinds = std::getenv("ENGRAM_BENCH_KINDS"))  // "entry" or "passage": one kind alone
        req["params"]["arguments"]["kinds"] = {kinds};
      auto r = net::fetch("POST", url, req.dump(), headers, std::chrono::seconds(30));
      auto body = json::parse(r.body, nullptr, false);
      if (r.status != 200 || body.is_discarded() || body["result"].value("isError", true))
        throw std::runtime_error("recall failed: " + r.body.substr(0, 300));
      // The rank (from 1) at which each message first comes back.
      std::map<std::string, std::size_t> found;
      std::size_t rank = 0;
      for (const auto& res : body["result"]["structuredContent"]["results"]) {
        ++rank;
        found.emplace(res.value("eventId", ""), rank);
        for (const auto& s : res.value("sources", json::array()))
          found.emplace(s.value("eventId", ""), rank);
      }
      const auto raw = baseline.top(q.text, k);
      if (q.answers.empty()) {  // the conversation does not answer it: answering nothing is right
        auto& row = f.by_kind["none"];
        ++row.questions;
        row.engram += body["result"]["structuredContent"]["results"].empty();
        row.bm25 += raw.empty();
        continue;
      }
      std::size_t engram_first = k + 1, bm25_first = k + 1;  // the first answer's rank
      for (const auto& a : q.answers)
        if (auto it = found.find(a); it != found.end())
          engram_first = std::min(engram_first, it->second);
      for (std::size_t i = 0; i < raw.size(); ++i)
        if (q.answers.count(raw[i]))
          bm25_first = std::min(bm25_first, i + 1);
      const bool engram_hit = engram_first <= k;
      for (const auto& kind : {q.kind, std::string("all")}) {
        auto& row = f.by_kind[kind];
        ++row.questions;
        row.engram += engram_hit;
        row.bm25 += bm25_first <= k;
        for (std::size_t i = 0; i < 3; ++i) {
          row.engram_at[i] += engram_first <= conversation_figures::ranks[i];
          row.bm25_at[i] += bm25_first <= conversation_figures::ranks[i];
        }
      }
      if (std::getenv("ENGRAM_BENCH_MISSES") && !engram_hit)
        show_miss(q, c, req, body, url, headers);
    }
  }
  e->stop();
  e.reset();
  std::filesystem::remove_all(store_dir);
  print_figures(f, label, ingest_s, stored, query_head);
  return f;
}

}  // namespace engram::evaluation
