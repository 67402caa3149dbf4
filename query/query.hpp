#pragma once
// The query service: how knowledge is read (recall, search, get, the review queue), for
// every caller (the MCP tools today; traversal, kag_query and a web view next). Scoped to
// one organisation by construction: every method takes it and every store read is under
// its key prefix; the vector search is the organisation's own index. Thread-safe (reads
// only); "now" comes from the injected clock.

#include "knowledge/read_rules.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "base/result.hpp"
#include "storage/graph_store.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace engram::query {

class kept_threads;

/// What the service reads with. Only `store` and `now` are required.
struct query_dependencies {
  std::shared_ptr<const storage::graph_store> store;
  /// The organisation's `k` entries nearest to a vector, most similar first.
  std::function<std::vector<std::pair<std::string, float>>(const std::string& organization_id,
                                                           const schemas::vector8& query, std::size_t k)>
      nearest;
  /// A text's embedding, quantised; an error when none can be made (recall then ranks by
  /// words alone).
  std::function<engram::result<schemas::vector8>(std::string_view text)> embed;
  /// The BM25 terms of a text (stemmed content words).
  std::function<std::vector<std::string>(std::string_view text)> terms;
  /// Milliseconds since the epoch.
  std::function<std::int64_t()> now;
};

/// A passage as recall and search read it from the store (what one message said, a window
/// of its sentences).
struct passage_hit {
  std::string id;
  /// The message it is part of, and that message's source, thread, time and sender.
  std::string event_id;
  std::string text;
  std::string source_type, source_id, thread_id, sent_at;
  schemas::participant from;
  /// The dates it names ("YYYY-MM-DD", or a period "a/b"), in order.
  std::vector<std::string> dates;
  /// The message carried a prompt injection.
  bool suspicious = false;
};

/// One result of recall or search, scored: an entry or a passage. Presented by the MCP
/// layer (the tools' JSON), with the entry's confidence decayed to `at_ms`.
struct hit {
  enum class kind : std::uint8_t { entry, passage };
  kind what = kind::entry;
  double score = 0;
  std::int64_t at_ms = 0;
  /// kind::entry: the entry, and when each of its sources was said (in `entry.sources`
  /// order; "" when not known).
  knowledge::stored_entry entry;
  std::vector<std::string> sources_sent_at;
  /// kind::passage: the passage. kind::entry: the passage it was read from, when recall
  /// found it (its evidence).
  std::optional<passage_hit> passage;
};

/// An entry and the record it came from.
struct entry_with_source {
  knowledge::stored_entry entry;
  /// The message or save it came from, as stored (its JSON text); "" when gone.
  std::string source;
};

/// A flagged entry of the review queue and the newer one that contradicts it, when stored.
struct review_item {
  knowledge::stored_entry entry;
  std::optional<knowledge::stored_entry> contradicted_by;
};

/// What a recall or a search returns: entries, passages (schemas::passage), or both.
struct result_kinds {
  bool entries = true;
  bool passages = true;
};

struct recall_request {
  std::string query;
  /// Organisation-wide knowledge plus this contact's (weighted up), never another's.
  std::string contact_id;
  /// Also this branch's own saves (never another branch's).
  std::string branch_id;
  /// Entries of this type only (passages have no type: a typed recall returns entries).
  std::optional<schemas::entry_type> type;
  std::size_t limit = 5;
  result_kinds kinds;
  /// Only what happened (its date, else when it was said) at or after / before these
  /// (milliseconds since the epoch).
  std::optional<std::int64_t> since_ms, until_ms;
};

struct search_request {
  std::string query;
  std::optional<schemas::entry_type> type;
  std::size_t limit = 10;
  result_kinds kinds;
};

/// Where recall's time goes: each stage's wall time on the calling thread, summed over every
/// recall since start (engram_recall_stage_seconds_total{stage}).
enum class recall_stage : std::size_t {
  people,    // the people the query names (entity lookups)
  words,     // BM25 over entries, and over passages when the calling side took them
  embed,     // the query's vector (made beside the words: what is left of it after them)
  vectors,   // the nearest entries (the passages' are searched on the lane)
  graph,     // kag_query's walk and the statements of what it reached (recall.graph_expansion)
  entries,   // the fused entries read, checked and weighed
  passages,  // what is left of the wait for the passages' lane (their search, fusion and
             // reads), and their folding into the entries
  present,   // the answer built
};
inline constexpr std::size_t recall_stage_count = static_cast<std::size_t>(recall_stage::present) + 1;
/// The stage's name in the metric.
[[nodiscard]] const char* recall_stage_name(recall_stage s) noexcept;

/// A person a query names (an exact name or alias of a known person, or a first name only
/// one person has), and the terms of that name.
struct named_person {
  std::string id;
  std::vector<std::string> terms;
};

class query_service {
public:
  query_service(query_dependencies deps, knowledge::read_policy policy);
  ~query_service();

  /// Entries and passages, each ranked by meaning (vectors) and words (BM25), fused by
  /// reciprocal rank (with recall.graph_expansion, also the statements about the entities
  /// the query names and their neighbours). An entry and the passage it was read from count
  /// once: the entry, with the passage as its evidence. Weighted by decayed confidence
  /// (entries), contact, the people the query names and, for a question that asks when,
  /// dates. Best first. None, and `*note` set (when given) saying why, when the query's
  /// vector is further than the policy's answer_floor from everything the lists by meaning
  /// found (never when they found nothing: a store without vectors answers by words).
  [[nodiscard]] std::vector<hit> recall(const std::string& organization_id, const recall_request& r,
                                        std::string* note = nullptr) const;

  /// BM25 alone over entries and passages (their lists interleaved by rank); hits as recall's.
  [[nodiscard]] std::vector<hit> search(const std::string& organization_id, const search_request& r) const;

  /// The entry and the message or save it came from; nullopt when the organisation has no
  /// such entry.
  [[nodiscard]] std::optional<entry_with_source> get(const std::string& organization_id, const std::string& id) const;

  /// Flagged entries, in id order.
  [[nodiscard]] std::vector<review_item> review_queue(const std::string& organization_id, std::size_t limit) const;

  /// The stored entry, or nullopt (none, or unreadable).
  [[nodiscard]] std::optional<knowledge::stored_entry> load(const std::string& organization_id,
                                                            const std::string& id) const;

  /// True when the branch has saves and has not expired.
  [[nodiscard]] bool branch_alive(const std::string& organization_id, const std::string& branch_id) const;

  [[nodiscard]] std::int64_t now() const { return deps_.now(); }
  /// The BM25 terms of a text (the dependencies' stemmed content words).
  [[nodiscard]] std::vector<std::string> terms(std::string_view text) const { return deps_.terms(text); }
  [[nodiscard]] const knowledge::read_policy& policy() const { return policy_; }

  /// The people `query` names (named_person), in the order named.
  [[nodiscard]] std::vector<named_person> named_people(const std::string& organization_id,
                                                       std::string_view query) const;

  /// The words a recall searches for `query`: its terms, less those of the `people` it names
  /// (a person named weighs their knowledge up instead of matching every message that names
  /// them) and less stop words (words.hpp), each unless nothing else is left.
  [[nodiscard]] std::vector<std::string> searched_terms(std::string_view query,
                                                        const std::vector<named_person>& people) const;

  /// Seconds spent in each recall stage since start (recall_stage order).
  [[nodiscard]] std::array<double, recall_stage_count> recall_stage_seconds() const;

private:
  /// One recall: its scope, its ranked lists and its candidates (query.cpp).
  struct recall_run;
  /// A recall's passages, found and read beside its entries, and what the two sides hand
  /// each other (query.cpp).
  struct passage_lane;
  struct recall_lanes;
  /// The entries' ranked lists (by words and by meaning) fused by rank, with the graph's and
  /// the branch's; the passages' words too when the lane has not taken them yet.
  void rank_lists(recall_run& run, recall_lanes& lanes) const;
  /// The passages' best by BM25 (none when the recall wants no passages).
  [[nodiscard]] std::vector<std::string> passage_words(const recall_run& run) const;
  /// On a kept thread (on the caller's when none can be had): the query's vector (handed
  /// over at once), the passages by meaning, fused by rank with their words (searched here
  /// when the caller has not taken them yet), and the candidates read.
  [[nodiscard]] passage_lane passages_lane(const recall_run& run, recall_lanes& lanes) const;
  /// Entries of the fused list that are visible, in scope and in the window, weighed.
  void score_entries(recall_run& run) const;
  /// Passages likewise; an entry read from a passage folds the passage in as its evidence.
  void fold_passages(recall_run& run, passage_lane& lane) const;
  /// The best `limit` results, as recall returns them.
  [[nodiscard]] std::vector<hit> present(recall_run& run) const;

  /// An entry as recall and search return it: with when each source was said.
  [[nodiscard]] hit entry_hit(const std::string& organization_id, knowledge::stored_entry doc, std::int64_t at,
                              double score) const;
  void add_branch(const std::string& organization_id, const std::string& branch_id, std::int64_t at,
                  const std::vector<std::string>& query_terms, const schemas::vector8* query_vector,
                  std::map<std::string, double>& fused, std::map<std::string, knowledge::stored_entry>& docs) const;
  /// Hybrid recall's ranked list (recall.graph_expansion), from kag_query's walk: the
  /// statements behind the relations of its answer, then the named entities' statements,
  /// then those of the entities it reached.
  void add_graph(const std::string& organization_id, const std::string& query,
                 std::map<std::string, double>& fused) const;

  query_dependencies deps_;
  knowledge::read_policy policy_;
  struct stage_clock;
  std::unique_ptr<stage_clock> clock_;
  /// Where recalls run their passages' lanes.
  std::unique_ptr<kept_threads> threads_;
};

}  // namespace engram::query
