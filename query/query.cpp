#include "query/query.hpp"

#include "query/kag.hpp"
#include "query/kept_threads.hpp"
#include "query/passage_record.hpp"
#include "query/words.hpp"
#include "knowledge/write_rules.hpp"

#include "schemas/knowledge_save.hpp"
#include "schemas/time.hpp"
#include "storage/vector_index.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <chrono>
#include <future>
#include <thread>
#include <optional>
#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace engram::query {

namespace {

/// Candidates each ranked list (words and meaning, of entries and of passages) contributes to
/// a recall, more than recall_knowledge's largest limit (50): 70 rather than 100 gave the same
/// recall@10 on the development conversations (0.746 / 0.899 against 0.733 / 0.894) and less
/// to search and fuse.
constexpr std::size_t recall_candidates = 70;
/// Candidates of the graph's list.
constexpr std::size_t graph_candidates = 100;
/// Candidates of each kind read per result asked: reading and parsing every candidate
/// dominated recall's time. Four gave the development conversations' recall@10 of eight,
/// and three (at least thirty) that of four (t7/t8 0.750, dev 0.905), with a quarter fewer
/// records read on each side of a recall; a type, contact or time filter may leave fewer than
/// asked, so filtered recalls read eight.
constexpr std::size_t candidates_per_result = 3, filtered_candidates_per_result = 8, least_candidates = 30;
// Hybrid recall: the graph's list weighs as much as words and meaning together.
constexpr double graph_weight = 2.0;
/// BM25 candidates search reads.
constexpr std::size_t search_candidates = 200;
/// A contact's own knowledge first.
constexpr double own_contact_weight = 2.0;
/// Reciprocal rank fusion's constant for every list recall fuses (words and meaning, of entries
/// and of passages; the graph; a branch): 15 rather than rrf_k's 60 puts more on the first ranks.
/// And the weight of the lists by meaning against those by words: with the query head, the
/// vectors find what the words miss. Both chosen on the development conversations
/// (docs/recall.md).
constexpr double recall_rrf_k = 15.0;
constexpr double vector_weight = 1.5;
/// An entry's weight is decay_floor + (1 - decay_floor) × its decayed confidence: decay
/// ranks among comparable matches, it never buries a match.
constexpr double decay_floor = 0.5;
/// An entry BM25 ranks among its first strong_rank and whose meaning is close to the query's
/// (cosine at least strong_similarity) is a specific match: shown however
/// faded (decay.hide_below hides weak matches only).
constexpr std::size_t strong_rank = 10;
constexpr float strong_similarity = 0.6f;
/// A passage (what was said) weighs as an entry of full confidence: an entry's weight
/// (decay_floor..1) is at most this.
constexpr double passage_weight = 1.0;
/// What a person the query names said, or an entry about them.
constexpr double named_person_weight = 2.0;
/// A dated match of a question that asks when.
constexpr double dated_weight = 2.0;

}  // namespace

const char* recall_stage_name(recall_stage s) noexcept {
  static constexpr std::array<const char*, recall_stage_count> names{"people", "words",   "embed",    "vectors",
                                                                     "graph",  "entries", "passages", "present"};
  return names[static_cast<std::size_t>(s)];
}

struct query_service::stage_clock {
  std::array<std::atomic<std::uint64_t>, recall_stage_count> ns{};
};

namespace {

/// One recall's laps: the time since the last lap goes to the stage named.
class stage_laps {
public:
  explicit stage_laps(std::array<std::atomic<std::uint64_t>, recall_stage_count>& ns) : ns_(ns) {}
  void lap(recall_stage s) {
    const auto now = std::chrono::steady_clock::now();
    ns_[static_cast<std::size_t>(s)].fetch_add(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count()),
        std::memory_order_relaxed);
    last_ = now;
  }

private:
  std::array<std::atomic<std::uint64_t>, recall_stage_count>& ns_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

query_service::query_service(query_dependencies deps, knowledge::read_policy policy)
    : deps_(std::move(deps)),
      policy_(std::move(policy)),
      clock_(std::make_unique<stage_clock>()),
      threads_(std::make_unique<kept_threads>(std::thread::hardware_concurrency())) {}

query_service::~query_service() = default;

std::array<double, recall_stage_count> query_service::recall_stage_seconds() const {
  std::array<double, recall_stage_count> out{};
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = 1e-9 * static_cast<double>(clock_->ns[i].load(std::memory_order_relaxed));
  return out;
}

std::optional<knowledge::stored_entry> query_service::load(const std::string& org, const std::string& id) const {
  auto raw = deps_.store->get_entry(org, id);
  knowledge::stored_entry e;
  if (!raw || knowledge::decode(*raw, e))
    return std::nullopt;
  return e;
}

bool query_service::branch_alive(const std::string& org, const std::string& branch) const {
  std::int64_t last = 0;
  return !deps_.store->branch_saves(org, branch, &last).empty() && knowledge::branch_alive(last, now(), policy_);
}

void query_service::add_graph(const std::string& org, const std::string& query,
                              std::map<std::string, double>& fused) const {
  // One more ranked list for the fusion, from kag_query's walk (two hops, its ten best
  // entities): the statements behind the relations among them, in the answer's order; then
  // what the named entities' statements say; then the statements of the other entities it
  // ranked, a few each, best entity first.
  constexpr std::size_t per_named = 20, per_reached = 5;
  const auto& store = *deps_.store;
  kag_request q;
  q.query = query.substr(0, std::min(query.size(), kag_limits::query_bytes));
  q.max_hops = 2;
  q.limit = 10;
  const auto answer = kag_query(entity_reader(deps_.store, {}), org, q);
  std::vector<std::string> ranked;
  std::set<std::string> seen;
  auto add = [&](std::string id) {
    if (ranked.size() < graph_candidates && !id.empty() && seen.insert(id).second)
      ranked.push_back(std::move(id));
  };
  for (const auto& rel : answer.relations)
    add(rel.entry_id);
  // The named entities, also those the answer's limit left out.
  for (const auto& named : answer.named)
    for (auto& id : store.entity_entries(org, named, per_named))
      add(std::move(id));
  for (const auto& e : answer.entities)
    if (e.distance > 0)
      for (auto& id : store.entity_entries(org, e.id, per_reached))
        add(std::move(id));
  for (std::size_t i = 0; i < ranked.size(); ++i)
    fused[ranked[i]] += graph_weight / (recall_rrf_k + double(i + 1));
}

namespace {

/// A question that asks when: its dated matches rank first.
bool asks_when(std::string_view query) {
  std::string q;
  for (char c : query)
    q.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  while (!q.empty() && (q.front() == ' ' || q.front() == '"'))
    q.erase(0, 1);
  if (q.starts_with("when ") || q.starts_with("when's") || q.starts_with("since when"))
    return true;
  for (const char* cue : {"what date", "what day", "which day", "what year", "which year", "what month", "which month",
                          "how long ago", "what time of year", "which weekend", "what weekend"})
    if (q.find(cue) != std::string::npos)
      return true;
  return false;
}

/// Milliseconds of "YYYY-MM-DD" (or the start of a period "a/b"), of an RFC 3339 time.
std::optional<std::int64_t> time_of(std::string_view s) {
  if (s.empty())
    return std::nullopt;
  if (auto slash = s.find('/'); slash != std::string_view::npos)
    s = s.substr(0, slash);
  if (s.size() == 10)
    return schemas::parse_rfc3339(std::string(s) + "T00:00:00Z");
  return schemas::parse_rfc3339(s);
}

/// Ranks of a list: its i-th id (from 1) adds weight / (recall_rrf_k + i).
void fuse(const std::vector<std::string>& ids, double weight, std::map<std::string, double>& fused) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    fused[ids[i]] += weight / (recall_rrf_k + double(i + 1));
}

template <class Score>
std::vector<std::string> ids_of(const std::vector<std::pair<std::string, Score>>& hits) {
  std::vector<std::string> out;
  out.reserve(hits.size());
  for (const auto& h : hits)
    out.push_back(h.first);
  return out;
}

/// The best `n` of a fused map, best first (ties by id).
std::vector<std::pair<std::string, double>> best(const std::map<std::string, double>& fused, std::size_t n) {
  std::vector<std::pair<std::string, double>> order(fused.begin(), fused.end());
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  if (order.size() > n)
    order.resize(n);
  return order;
}

hit passage_result(passage_hit p, double score, std::int64_t at) {
  hit h;
  h.what = hit::kind::passage;
  h.score = score;
  h.at_ms = at;
  h.passage = std::move(p);
  return h;
}

}  // namespace

std::vector<named_person> query_service::named_people(const std::string& org, std::string_view query) const {
  // Runs of capitalised words ("Caroline", "Tomás Ortega", "Melanie's"), longest names first.
  std::vector<std::vector<std::string>> runs(1);
  std::string word;
  auto end_word = [&](bool breaks) {
    if (!word.empty()) {
      if (word.size() > 2 && (word.ends_with("'s") || word.ends_with("\xE2\x80\x99s")))
        word.resize(word.size() - (word.ends_with("'s") ? 2 : 4));
      const bool capital =
          std::isupper(static_cast<unsigned char>(word[0])) || static_cast<unsigned char>(word[0]) >= 0x80;
      if (capital)
        runs.back().push_back(word);
      else if (!runs.back().empty())
        runs.emplace_back();
      word.clear();
    }
    if (breaks && !runs.back().empty())
      runs.emplace_back();
  };
  for (char c : query) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80 || c == '\'' || c == '-')
      word.push_back(c);
    else
      end_word(c != ' ');
  }
  end_word(true);
  std::vector<named_person> out;
  const auto& store = *deps_.store;
  auto is_person = [&](const std::string& id) {
    std::string name, type;
    return store.entity_name(org, id, &name, &type) && type == "person";
  };
  for (const auto& run : runs)
    for (std::size_t b = 0; b < run.size();) {
      std::size_t used = 0;
      for (std::size_t n = std::min<std::size_t>(3, run.size() - b); n >= 1 && !used; --n) {
        std::string name;
        for (std::size_t i = b; i < b + n; ++i)
          name += (i > b ? " " : "") + run[i];
        auto id = store.entity_id(org, name);
        if (id.empty() || !is_person(id)) {
          // A first name (or first names) that starts exactly one person's name.
          id.clear();
          for (const auto& [_, other] : store.names_with_prefix(org, normalise_name(name) + " ", 8)) {
            if (!is_person(other) || (!id.empty() && other != id)) {
              id.clear();
              break;
            }
            id = other;
          }
        }
        if (!id.empty()) {
          used = n;
          if (std::none_of(out.begin(), out.end(), [&](const named_person& p) { return p.id == id; }))
            out.push_back({id, deps_.terms(name)});
        }
      }
      b += used ? used : 1;
    }
  return out;
}

/// A candidate of one recall: an entry (with the passage it was read from, when found) or
/// a passage.
struct recall_candidate {
  double score = 0;
  bool is_entry = true;
  std::string id;
  knowledge::stored_entry entry;
  std::optional<passage_hit> passage;  // is_entry false: the passage; else its evidence (when found)
  bool dropped = false;                // folded into another entry read from the same passage
};

struct query_service::recall_run {
  recall_run(const storage::graph_store& store, const std::string& org, const recall_request& r, std::int64_t at,
             std::vector<named_person> people, stage_laps& laps)
      : store(store), org(org), r(r), at(at), people(std::move(people)), when(asks_when(r.query)), laps(laps) {}

  const storage::graph_store& store;
  const std::string& org;
  const recall_request& r;
  const std::int64_t at;
  /// A person the query names weighs their knowledge up (named_person).
  const std::vector<named_person> people;
  /// A when-question weighs dated knowledge up.
  const bool when;
  stage_laps& laps;
  std::vector<std::string> terms;
  schemas::vector8 query_vector;
  std::map<std::string, double> fused_entries;   // fused ranks
  std::map<std::string, std::size_t> text_rank;  // entries' BM25 ranks (from 1)
  std::map<std::string, float> similarity;       // entries' cosines with the query
  /// The best cosine of anything the lists by meaning found (the entries', then the
  /// passages' merged in once the lane is done); nullopt without a query vector or when they
  /// found nothing.
  std::optional<float> closest;
  std::map<std::string, knowledge::stored_entry> branch_docs;  // the branch's own saves, seen only here
  std::vector<recall_candidate> results;

  bool want_entries() const { return r.kinds.entries; }
  bool want_passages() const { return r.kinds.passages && !r.type; }  // passages have no type

  /// Within since/until (by its date, else when it was said).
  bool in_window(std::optional<std::int64_t> t) const {
    if (!r.since_ms && !r.until_ms)
      return true;
    return t && (!r.since_ms || *t >= *r.since_ms) && (!r.until_ms || *t < *r.until_ms);
  }
  /// The contact scope: a contact's own knowledge weighs more; another contact's is out.
  std::optional<double> contact_weight(const std::vector<std::string>& contacts) const {
    if (r.contact_id.empty())
      return 1.0;
    if (std::find(contacts.begin(), contacts.end(), r.contact_id) != contacts.end())
      return own_contact_weight;
    if (!contacts.empty())
      return std::nullopt;
    return 1.0;
  }
  bool names_person(const std::string& id) const {
    return std::any_of(people.begin(), people.end(), [&](const named_person& p) { return p.id == id; });
  }
  /// Whether the sender at `address` is a person the query names (their entity looked up
  /// once a recall, and only when the query names someone).
  bool sent_by_named(const std::string& address) {
    if (people.empty() || address.empty())
      return false;
    auto [it, added] = person_of_address.try_emplace(address);
    if (added)
      it->second = store.entity_id(org, address);
    return names_person(it->second);
  }
  /// How many candidates of each kind are weighed.
  std::size_t per_kind() const {
    const bool filtered = r.type || !r.contact_id.empty() || r.since_ms || r.until_ms;
    return std::max(r.limit * (filtered ? filtered_candidates_per_result : candidates_per_result), least_candidates);
  }

private:
  std::map<std::string, std::string> person_of_address;  // sender address -> entity id
};

/// A recall's passages, found and read on a kept thread (passages_lane) while the entries
/// are on the caller's: the fused candidates, best first, each with its record read
/// (nullopt when gone or unreadable) and the contacts it belongs to.
struct query_service::passage_lane {
  std::vector<std::pair<std::string, double>> candidates;
  std::vector<std::optional<passage_hit>> read;
  std::vector<std::vector<std::string>> contacts;
  /// The best cosine of the passages by meaning (nullopt: no vector, or none found).
  std::optional<float> closest;
};

/// What the two sides of a recall hand each other. The passages' lane (on a kept thread)
/// makes the query's vector and hands it over at once. The passages' words are searched by
/// whichever side is free first: the entries' side after its own words, the lane after the
/// vector and the passages by meaning (a small store waits on the encoder, a large one on
/// the words); the entries' side hands them over when it took them.
struct query_service::recall_lanes {
  using vector_result = std::optional<engram::result<schemas::vector8>>;  // nullopt: no encoder
  recall_lanes() = default;
  recall_lanes(const recall_lanes&) = delete;
  recall_lanes& operator=(const recall_lanes&) = delete;
  /// A recall that fails before it handed the words over takes them (so the lane does not
  /// search them) and breaks that promise, so that the lane stops; it then waits for the
  /// lane, which uses the recall's state and `vector_out`.
  ~recall_lanes() {
    (void)take_passage_words();
    passage_words.reset();
    if (posted && lane.valid())
      lane.wait();
  }

  std::promise<vector_result> vector_out;
  std::future<vector_result> vector = vector_out.get_future();
  std::optional<std::promise<std::vector<std::string>>> passage_words{std::in_place};
  std::future<std::vector<std::string>> words = passage_words->get_future();  // the lane's
  /// Whether this side, the first to ask, searches the passages' words.
  bool take_passage_words() { return !passage_words_taken.exchange(true, std::memory_order_acq_rel); }
  std::atomic<bool> passage_words_taken{false};
  std::shared_ptr<std::packaged_task<passage_lane()>> task;
  std::future<passage_lane> lane;
  /// Else no thread could be had: the entries' side runs the lane when it needs the vector.
  bool posted = false;
};

std::vector<hit> query_service::recall(const std::string& org, const recall_request& r, std::string* note) const {
  stage_laps laps(clock_->ns);
  auto people = named_people(org, r.query);
  laps.lap(recall_stage::people);
  recall_run run(*deps_.store, org, r, now(), std::move(people), laps);
  run.terms = searched_terms(r.query, run.people);
  recall_lanes lanes;
  // The kept thread holds the task until its call has returned, however soon the recall ends.
  lanes.task =
      std::make_shared<std::packaged_task<passage_lane()>>([this, &run, &lanes] { return passages_lane(run, lanes); });
  lanes.lane = lanes.task->get_future();
  lanes.posted = threads_->post([task = lanes.task] { (*task)(); });
  rank_lists(run, lanes);
  score_entries(run);
  laps.lap(recall_stage::entries);
  // The answer floor needs the passages' best cosine too: an abstaining recall has read its
  // entries by then (the two sides overlap), and answers nothing as before.
  auto passages = lanes.lane.get();
  if (passages.closest)
    run.closest = std::max(run.closest.value_or(*passages.closest), *passages.closest);
  // Nothing close enough: no answer is the answer (a branch's own saves always answer).
  if (policy_.answer_floor > 0 && run.closest && *run.closest < policy_.answer_floor && r.branch_id.empty()) {
    if (note) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "nothing stored is close to the query (best similarity %.2f, below recall.answer_floor %.2f)",
                    static_cast<double>(*run.closest), policy_.answer_floor);
      *note = buf;
    }
    laps.lap(recall_stage::present);
    return {};
  }
  fold_passages(run, passages);
  laps.lap(recall_stage::passages);
  return present(run);
}

std::vector<hit> query_service::present(recall_run& run) const {
  auto& results = run.results;
  std::erase_if(results, [](const recall_candidate& s) { return s.dropped; });
  std::sort(results.begin(), results.end(), [](const recall_candidate& x, const recall_candidate& y) {
    return x.score != y.score ? x.score > y.score : x.id < y.id;
  });
  if (results.size() > run.r.limit)
    results.resize(run.r.limit);
  std::vector<hit> out;
  out.reserve(results.size());
  for (auto& s : results) {
    if (!s.is_entry) {
      out.push_back(passage_result(std::move(*s.passage), s.score, run.at));
      continue;
    }
    out.push_back(entry_hit(run.org, std::move(s.entry), run.at, s.score));
    out.back().passage = std::move(s.passage);
  }
  run.laps.lap(recall_stage::present);
  return out;
}

std::vector<std::string> query_service::searched_terms(std::string_view query,
                                                       const std::vector<named_person>& people) const {
  // The query's words less stop words, less the names; the names when nothing else is left
  // ("Bob for" is searched by "bob", not by "for"); every word when only stop words are.
  auto terms = without_stop_words(deps_.terms(query));
  std::set<std::string> names;
  for (const auto& p : people)
    names.insert(p.terms.begin(), p.terms.end());
  std::vector<std::string> rest;
  for (const auto& t : terms)
    if (!names.count(t))
      rest.push_back(t);
  return rest.empty() ? terms : rest;
}

std::vector<std::string> query_service::passage_words(const recall_run& run) const {
  if (!run.want_passages())
    return {};
  return ids_of(run.store.search_passages(run.org, run.terms, recall_candidates));
}

query_service::passage_lane query_service::passages_lane(const recall_run& run, recall_lanes& lanes) const {
  recall_lanes::vector_result v;
  try {
    if (deps_.embed)
      v = deps_.embed(run.r.query);
    lanes.vector_out.set_value(v);  // a copy: it may fail too, and the caller must hear of it
  } catch (...) {
    lanes.vector_out.set_exception(std::current_exception());
    throw;
  }
  passage_lane out;
  if (!run.want_passages())
    return out;
  std::vector<std::pair<std::string, float>> near;
  if (v && *v)
    near = run.store.nearest_passages(run.org, **v, recall_candidates);
  std::map<std::string, double> fused;
  fuse(lanes.take_passage_words() ? passage_words(run) : lanes.words.get(), 1.0, fused);
  fuse(ids_of(near), vector_weight, fused);
  for (const auto& [id, cosine] : near)
    out.closest = std::max(out.closest.value_or(cosine), cosine);
  out.candidates = best(fused, run.per_kind());
  const auto raws = run.store.get_passages(run.org, ids_of(out.candidates));
  out.read.resize(raws.size());
  out.contacts.resize(raws.size());
  for (std::size_t c = 0; c < raws.size(); ++c)
    if (raws[c])
      out.read[c] = read_passage(*raws[c], &out.contacts[c]);
  return out;
}

void query_service::rank_lists(recall_run& run, recall_lanes& lanes) const {
  const auto& org = run.org;
  if (run.want_entries()) {
    const auto text = ids_of(run.store.search_text(org, run.terms, recall_candidates));
    fuse(text, 1.0, run.fused_entries);
    for (std::size_t i = 0; i < text.size(); ++i)
      run.text_rank[text[i]] = i + 1;
  }
  if (lanes.take_passage_words())
    lanes.passage_words->set_value(passage_words(run));
  run.laps.lap(recall_stage::words);
  if (!lanes.posted)
    (*lanes.task)();
  // Without a vector recall ranks by words alone; why is logged where embedding failed.
  if (auto v = lanes.vector.get()) {
    run.laps.lap(recall_stage::embed);
    if (*v) {
      run.query_vector = std::move(**v);
      // The best cosine of what the lists by meaning found; none when they found nothing (a
      // store without vectors answers by words). The passages' are the lane's.
      if (run.want_entries() && deps_.nearest) {
        const auto hits = deps_.nearest(org, run.query_vector, recall_candidates);
        fuse(ids_of(hits), vector_weight, run.fused_entries);
        for (const auto& [id, cosine] : hits) {
          run.similarity[id] = cosine;
          run.closest = std::max(run.closest.value_or(cosine), cosine);
        }
      }
    }
    run.laps.lap(recall_stage::vectors);
  }
  if (run.want_entries()) {
    if (policy_.graph_expansion)
      add_graph(org, run.r.query, run.fused_entries);
    if (!run.r.branch_id.empty())
      add_branch(org, run.r.branch_id, run.at, run.terms, run.query_vector.empty() ? nullptr : &run.query_vector,
                 run.fused_entries, run.branch_docs);
  }
  run.laps.lap(recall_stage::graph);
}

void query_service::score_entries(recall_run& run) const {
  const auto& r = run.r;
  const auto candidates = best(run.fused_entries, run.per_kind());
  // The stored ones in one batched read (a branch's own saves are in memory).
  std::vector<std::string> stored;
  for (const auto& [id, _] : candidates)
    if (!run.branch_docs.count(id))
      stored.push_back(id);
  auto raw = run.store.get_entries(run.org, stored);
  const auto at = schemas::format_rfc3339(run.at);
  std::size_t next = 0;
  for (const auto& [id, rrf] : candidates) {
    std::optional<knowledge::stored_entry> doc;
    if (auto overlaid = run.branch_docs.find(id); overlaid != run.branch_docs.end()) {
      doc = overlaid->second;
    } else if (auto& bytes = raw[next++]) {
      doc.emplace();
      if (knowledge::decode(*bytes, *doc))
        doc.reset();
    }
    if (!doc || !knowledge::visible(*doc, at) || (r.type && doc->type != *r.type))
      continue;
    // Decay ranks; it hides only what matches weakly: an entry both words and meaning put
    // among their first ten stays, however old.
    const double confidence = knowledge::effective_confidence(*doc, run.at, policy_);
    const bool strong = run.text_rank.count(id) && run.text_rank[id] <= strong_rank && run.similarity.count(id) &&
                        run.similarity[id] >= strong_similarity;
    if (confidence < policy_.decay.hide_below && !strong)
      continue;
    auto cw = run.contact_weight(doc->contact_ids);
    if (!cw)
      continue;
    const auto& dates = doc->sig.dates;
    if (!run.in_window(time_of(dates.empty() ? doc->created_at : dates.front())))
      continue;
    double weight = *cw * (decay_floor + (1 - decay_floor) * std::max(0.0, std::min(1.0, confidence)));
    bool about = false;
    for (const auto& m : doc->entities)
      about |= !m.entity_id.empty() && run.names_person(m.entity_id);
    for (const auto& src : doc->sources)
      about |= run.sent_by_named(src.author);
    if (about)
      weight *= named_person_weight;
    if (run.when && !dates.empty())
      weight *= dated_weight;
    run.results.push_back({rrf * weight, true, id, std::move(*doc), std::nullopt, false});
  }
}

void query_service::fold_passages(recall_run& run, passage_lane& lane) const {
  for (std::size_t c = 0; c < lane.candidates.size(); ++c) {
    const auto& [id, rrf] = lane.candidates[c];
    auto& p = lane.read[c];
    if (!p)
      continue;
    auto cw = run.contact_weight(lane.contacts[c]);
    if (!cw)
      continue;
    const auto& dates = p->dates;
    if (!run.in_window(time_of(dates.empty() ? p->sent_at : dates.front())))
      continue;
    double weight = *cw * passage_weight * (p->suspicious ? 0.5 : 1.0);
    if (run.sent_by_named(p->from.address))
      weight *= named_person_weight;
    if (run.when && !dates.empty())
      weight *= dated_weight;
    const double score = rrf * weight;
    // The passage an entry was read from is that entry's evidence: they count once.
    const auto& event = p->event_id;
    const auto& text = p->text;
    // Every entry read from it folds into one result: the best of them, with the passage as
    // its evidence and the best score of them all (one message, one place in the list).
    recall_candidate* keep = nullptr;
    double folded = score;
    for (auto& s : run.results) {
      // The message first: comparing ids is cheap, searching the text is not.
      if (!s.is_entry || s.dropped || s.passage ||
          std::none_of(s.entry.sources.begin(), s.entry.sources.end(),
                       [&](const knowledge::source_ref& src) { return src.event_id == event; }) ||
          text.find(s.entry.content) == std::string::npos)
        continue;
      folded = std::max(folded, s.score);
      if (!keep || s.score > keep->score) {
        if (keep)
          keep->dropped = true;
        keep = &s;
      } else {
        s.dropped = true;
      }
    }
    if (keep) {
      keep->score = folded;
      keep->passage = std::move(p);
    } else {
      run.results.push_back({score, false, id, {}, std::move(*p), false});
    }
  }
}

hit query_service::entry_hit(const std::string& org, knowledge::stored_entry doc, std::int64_t at, double score) const {
  hit h;
  h.score = score;
  h.at_ms = at;
  // When each source was said (kept with the source; in entries stored before it was, the
  // first one's is when the entry was made and the others' are read from their messages).
  for (std::size_t i = 0; i < doc.sources.size(); ++i) {
    const auto& src = doc.sources[i];
    std::string sent_at = !src.sent_at.empty() ? src.sent_at : i == 0 ? doc.created_at : std::string();
    if (sent_at.empty() && !src.event_id.empty())
      if (auto raw = deps_.store->get_message(org, src.event_id)) {
        auto m = nlohmann::json::parse(*raw, nullptr, false);
        if (m.is_object())
          sent_at = m.value("sentAt", "");
      }
    h.sources_sent_at.push_back(std::move(sent_at));
  }
  h.entry = std::move(doc);
  return h;
}

std::vector<hit> query_service::search(const std::string& org, const search_request& r) const {
  const auto at = now();
  const auto& store = *deps_.store;
  const auto terms = deps_.terms(r.query);
  const bool want_passages = r.kinds.passages && !r.type;
  std::vector<std::pair<std::string, double>> entries, passages;
  if (r.kinds.entries)
    entries = store.search_text(org, terms, search_candidates);
  if (want_passages)
    passages = store.search_passages(org, terms, search_candidates);
  // The two lists interleaved by rank (their BM25 scores come from different collections).
  std::vector<hit> results;
  std::size_t ei = 0, pi = 0;
  while (results.size() < r.limit && (ei < entries.size() || pi < passages.size())) {
    const bool take_entry = pi >= passages.size() || (ei < entries.size() && ei <= pi);
    if (take_entry) {
      const auto& [id, score] = entries[ei++];
      auto doc = load(org, id);
      if (!doc || !knowledge::recallable(*doc, at, policy_) || (r.type && doc->type != *r.type))
        continue;
      results.push_back(entry_hit(org, std::move(*doc), at, score));
    } else {
      const auto& [id, score] = passages[pi++];
      auto raw = store.get_passage(org, id);
      if (!raw)
        continue;
      if (auto p = read_passage(*raw))
        results.push_back(passage_result(std::move(*p), score, at));
    }
  }
  return results;
}

std::optional<entry_with_source> query_service::get(const std::string& org, const std::string& id) const {
  auto doc = load(org, id);
  if (!doc)
    return std::nullopt;
  entry_with_source out{std::move(*doc), {}};
  if (auto raw = deps_.store->get_message(org, out.entry.event_id))
    out.source = std::move(*raw);
  return out;
}

std::vector<review_item> query_service::review_queue(const std::string& org, std::size_t limit) const {
  std::vector<review_item> items;
  for (const auto& [flagged, by] : deps_.store->review_queue(org, limit)) {
    auto older = load(org, flagged);
    if (!older)
      continue;
    items.push_back({std::move(*older), load(org, by)});
  }
  return items;
}

void query_service::add_branch(const std::string& org, const std::string& branch, std::int64_t at,
                               const std::vector<std::string>& q, const schemas::vector8* qv,
                               std::map<std::string, double>& fused,
                               std::map<std::string, knowledge::stored_entry>& docs) const {
  std::int64_t last = 0;
  auto saves = deps_.store->branch_saves(org, branch, &last);
  if (saves.empty() || !knowledge::branch_alive(last, at, policy_))
    return;
  const std::set<std::string> qset(q.begin(), q.end());
  std::vector<std::pair<double, std::string>> by_vector, by_words;
  for (const auto& b : saves) {
    schemas::knowledge_save s;
    if (schemas::decode(b.save_json, s))
      continue;
    auto doc = knowledge::branch_entry(s);
    const auto eid = doc.id;
    docs[eid] = std::move(doc);
    if (qv && b.embedding.size() == qv->size())
      by_vector.emplace_back(-static_cast<double>(schemas::similarity(*qv, b.embedding)), eid);
    std::size_t shared = 0;
    const auto words = deps_.terms(s.title + " " + s.content);
    for (const auto& t : std::set<std::string>(words.begin(), words.end()))
      shared += qset.count(t);
    if (shared)
      by_words.emplace_back(-static_cast<double>(shared), eid);
  }
  for (auto* ranked : {&by_vector, &by_words}) {
    std::sort(ranked->begin(), ranked->end());
    for (std::size_t i = 0; i < ranked->size(); ++i)
      fused[(*ranked)[i].second] += 1.0 / (recall_rrf_k + double(i + 1));
  }
}

}  // namespace engram::query
