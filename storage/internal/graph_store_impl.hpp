#pragma once
// The graph store's class (internal to storage/), over an ordered key-value backend
// (internal/kv.hpp: RocksDB, or memory for tests). Its members are implemented one data
// group per file: store.cpp (open, counters, commit, offsets, stats, digest), entities.cpp (messages, contacts, people and organisations), entries.cpp (the
// apply path of messages and saves, entries and their indexes, merges), indexes.cpp (BM25
// text and vectors), branches.cpp (branch saves), commands.cpp (knowledge commands, the
// review queue, expiry and reminders). Key layout: internal/keys.hpp.
// The store is the materialised view of engram-log: every event's writes go in one kv_batch
// (write_txn) with the offset advance.

#include "knowledge/markers.hpp"
#include "knowledge/resolve.hpp"
#include "knowledge/write_rules.hpp"  // the store applies knowledge's write rules in its batch
#include "storage/graph_store.hpp"
#include "storage/internal/keys.hpp"
#include "storage/internal/kv.hpp"
#include "storage/internal/entity_index.hpp"
#include "storage/internal/group_counts.hpp"
#include "storage/internal/text_index.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <unordered_map>

namespace engram::storage::detail {

using json = nlohmann::json;

using knowledge::new_entity;
using knowledge::person_id;
using knowledge::stored_entity;
using knowledge::stored_entry;

struct write_txn;

/// One event's writes: the WriteBatch and what it has changed so far, so that the event's
/// later steps read its own writes (entities, names, entries, counters). Made fresh for
/// each apply and committed once; nothing of it outlives the apply.
/// The meta row counting duplicates (meta_tag::duplicates) or skipped records
/// (meta_tag::skipped) delivered at `pos`'s partition: one row a partition, so the applier of a
/// partition is its only writer.
inline std::string redelivery_key(const char* tag, const log_position& pos) {
  return key(tag, pos.topic, encode_u32(static_cast<std::uint32_t>(pos.partition)));
}

struct write_txn {
  /// The organisation of the event being applied (every write is under it).
  std::string org;
  kv_batch batch;
  /// Entities and names written by this event.
  std::map<std::string, stored_entity> entities;
  std::map<std::string, std::string> names;
  /// Entries created or changed by this event, written once at its end.
  std::map<std::string, stored_entry> entries;
  /// Whether each of `entries` has its candidate rows (titles, by_slot) in the store as this
  /// batch found it: false for an entry the batch creates. put_entries writes the difference.
  std::map<std::string, bool> listed;
  /// Rows of the titles and by_slot groups this batch puts or deletes (group_counts).
  std::vector<group_delta> group_deltas;
  /// Counter values of this event (meta key -> value).
  std::map<std::string, std::uint64_t> counters;
  /// Entries removed by this command (never written back).
  std::set<std::string> removed;
  /// Entities deleted by this event (entity commands): names resolving to them are gone.
  std::set<std::string> deleted_entities;
  /// Edges written (true) or deleted, in order, for the in-memory entity index.
  struct edge_change {
    bool add;
    std::string from, label, to;
    double weight;
  };
  std::vector<edge_change> edges;
  /// Postings added (true) or removed, for the in-memory text index once the batch is written.
  struct text_change {
    bool add;
    std::string org, id;
    text_doc doc;
  };
  std::vector<text_change> text;
  /// Passage postings and vectors added, for the in-memory indexes once the batch is written.
  std::vector<text_change> passage_text;
  struct vector_change {
    std::string org, id;
    std::uint64_t seq;
    schemas::vector8 v;
  };
  std::vector<vector_change> passage_vectors;
  std::size_t new_passages = 0;
  /// Passage vectors removed (organisation, seq) and passages removed, by a retention forget.
  std::vector<std::pair<std::string, std::uint64_t>> removed_passage_vectors;
  std::size_t removed_passages = 0;
  /// The sequences of entry vectors removed (dedup hides them; graph_store::since_snapshot).
  std::vector<std::uint64_t> removed_vectors;
  /// A forget of the organisation: its in-memory indexes go once the batch is written (and
  /// its passages leave the store's count).
  bool dropped_org = false;
  /// The engram-reminders partition and the next offset a sent reminder records: written by
  /// commit() as the highest of it and the stored mark (the row is shared by every
  /// organisation whose reminders went to that partition).
  std::optional<std::pair<std::uint32_t, std::uint64_t>> reminder_mark;
};

/// A key's parts (split at '\0').
std::vector<std::string> split_key(std::string_view k);

/// An edge of the entity graph as stored (cf_entity_edges' value: weight, createdAt, the
/// eventId that wrote it, attributes), and back.
std::string edge_value(const entity_edge& e, const std::string& event_id);
entity_edge parse_edge(std::string from, std::string label, std::string to, std::string_view value);

/// An entry's indexed words (its title key and content words) as BM25 counts them.
text_doc index_words(std::string_view words);

/// Groups whose row counts are held (group_counts): about 100 bytes each.
inline constexpr std::size_t group_counts_held = 1u << 16;

class kv_graph_store final : public graph_store {
public:
  kv_graph_store(std::unique_ptr<kv> backend, std::set<std::string> reserved_tool_names);
  ~kv_graph_store() override;
  errc apply(const log_position& pos, const schemas::inbound_message* m, const schemas::extraction* knowledge,
             const std::vector<schemas::resolution>* resolutions, apply_outcome* outcome) override;
  std::map<std::int32_t, stored_offset> offsets(const std::string& topic) const override;
  errc record_gap(const accepted_gap& g, bool advance, const std::string& cluster_id) override;
  errc drop_position(const std::string& topic, std::int32_t partition) override;
  errc drop_held(const std::string& organization) override;
  errc compact_dropped(std::vector<std::string> organizations, const std::atomic<bool>* cancel) override;
  std::vector<std::string> held_organizations() const override;
  std::vector<accepted_gap> gaps() const override;
  std::vector<organization_stats> stats() const override;
  std::pair<std::uint64_t, std::uint64_t> redelivery_counts() const override;
  result<std::string> get_message(const std::string& org, const std::string& event_id) const override;
  result<bool> seen(const std::string& org, const std::string& event_id) const override;
  result<std::string> get_contact(const std::string& org, const std::string& address) const override;
  std::vector<std::string> thread_messages(const std::string& org, const std::string& thread) const override;
  result<std::string> get_entry(const std::string& org, const std::string& id) const override;
  std::shared_ptr<const void> watch_entries(entries_watcher fn) const override;
  std::vector<std::optional<std::string>> get_entries(const std::string& org,
                                                      std::span<const std::string> ids) const override;
  result<std::vector<std::string>> moved_sources(const std::string& org, const std::string& id, std::uint64_t first,
                                                 std::size_t limit) const override;
  std::vector<std::string> entries_of_type(const std::string& org, schemas::entry_type type) const override;
  std::vector<std::string> entries_with_title(const std::string& org, schemas::entry_type type,
                                              const std::string& title, std::uint64_t values,
                                              std::size_t limit) const override;
  std::vector<std::string> entries_with_slot(const std::string& org, const std::string& subject,
                                             const std::string& slot, std::size_t limit) const override;
  std::vector<std::pair<std::string, double>> search_text(const std::string& org, const std::vector<std::string>& terms,
                                                          std::size_t limit) const override;
  std::string identity() const override;
  std::map<std::string, std::uint64_t> vector_sequences() const override;
  errc scan_vectors(
      const std::string& org, std::uint64_t after,
      const std::function<bool(std::uint64_t, std::string_view, const schemas::vector8&)>& fn) const override;
  result<std::string> find_entity(const std::string& org, const std::string& name) const override;
  std::map<std::string, std::uint64_t> engine_stats() const override;
  std::map<std::string, std::uint64_t> memory_stats() const override;
  std::optional<std::string> write_failure() const override { return kv_->write_failure(); }
  errc resume_writes() override { return kv_->resume_writes(); }
  errc start_compactions() override { return kv_->start_compactions(); }
  std::string digest(std::string_view organization) const override;
  std::vector<std::string> entity_entries(const std::string& organization_id, const std::string& entity_id,
                                          std::size_t limit) const override;
  std::vector<std::pair<std::string, std::string>> names_with_prefix(const std::string& organization_id,
                                                                     const std::string& prefix,
                                                                     std::size_t limit) const override;
  std::vector<document_status> documents(const std::string& organization_id) const override;
  void visit_logical(const std::function<void(std::string_view)>& family,
                     const std::function<void(std::string_view, std::string_view)>& pair,
                     std::string_view organization) const override;
  std::vector<std::pair<std::string, double>> search_passages(const std::string& org,
                                                              const std::vector<std::string>& terms,
                                                              std::size_t limit) const override;
  std::vector<std::pair<std::string, float>> nearest_passages(const std::string& org, const schemas::vector8& query,
                                                              std::size_t k) const override;
  result<std::string> get_passage(const std::string& org, const std::string& passage_id) const override;
  std::vector<std::optional<std::string>> get_passages(const std::string& org,
                                                       std::span<const std::string> ids) const override;
  std::pair<std::size_t, std::size_t> passage_counts() const override;
  engram::result<bool> save_indexes() override;
  engram::result<bool> checkpoint_indexes(std::uint64_t every,
                                          const std::function<engram::result<void>()>& first) override;
  indexes_opened indexes_origin() const override { return indexes_opened_; }
  bool indexes_current() const override { return indexes_marked_.load(std::memory_order_acquire); }
  changes_since_snapshot since_snapshot(const std::string& org) const override;
  /// At open: the in-memory indexes from the snapshot in `dir` when meta marks it current,
  /// with its journal applied, else rebuilt from their column families (load_text_index,
  /// load_passage_indexes); a writable store then deletes the mark and the journal.
  errc open_indexes(std::string dir, bool writable);
  /// Reads the passage_text column family and the passage vectors into memory (at open).
  errc load_passage_indexes();
  /// Marks a new store with this build's layout; upgrades a store of layout 8 or 9
  /// (upgrade_from_8, then upgrade_from_9); invalid_argument for any other layout.
  errc init_layout();
  /// Layout 8 kept the candidate rows (titles, by_slot) of superseded entries: deleted, then
  /// the layout marked 9. Run again after a crash part-way, it deletes what is left.
  errc upgrade_from_8();
  /// Layout 9 kept every source in the entry's record: the ones past knowledge::kept_sources
  /// move to entry_sources rows, then the layout is marked 10. Run again after a crash
  /// part-way, it moves what is left (an entry is rewritten with its rows, in one batch).
  errc upgrade_from_9();
  /// Calls `step` on every entry (its batch, its key, the entry decoded), writing the batch as
  /// it grows; then marks the layout `to_layout`.
  errc upgrade_entries(const char* to_layout,
                       const std::function<errc(kv_batch&, std::string_view, stored_entry&)>& step);
  /// Reads the text column family into the in-memory postings (at open).
  errc load_text_index();
  /// Reads a family of BM25 rows (org \0 term \0 id -> tf + length) into `into`, sealed.
  errc load_postings(std::size_t family, text_index& into);
  errc apply_branch_save(const log_position& pos, const schemas::knowledge_save& s, const schemas::vector8& embedding,
                         apply_outcome* outcome) override;
  std::vector<branch_save> branch_saves(const std::string& org, const std::string& branch,
                                        std::int64_t* last_save_ms) const override;
  errc apply_command(const log_position& pos, const schemas::knowledge_command& c, command_result* result,
                     apply_outcome* outcome) override;
  std::vector<std::pair<std::string, std::string>> review_queue(const std::string& org,
                                                                std::size_t limit) const override;
  std::vector<due_item> due_reminders(std::int64_t until_ms, std::size_t limit) const override;
  bool has_expired(const std::string& org, std::int64_t now_ms, std::int64_t ttl_ms) const override;
  bool has_retention_due(const std::string& org, std::int64_t before_ms) const override;
  std::map<std::int32_t, std::int64_t> reminder_marks() const override;
  errc apply_entity_command(const log_position& pos, const schemas::entity_command& c, entity_result* result,
                            apply_outcome* outcome) override;
  std::string entity_id(const std::string& org, const std::string& name) const override;
  result<std::string> get_entity(const std::string& org, const std::string& id) const override;
  std::vector<entity_edge> entity_edges(const std::string& org, const std::string& id, bool outgoing) const override;
  std::vector<std::pair<std::string, std::string>> list_entities(const std::string& org, const std::string& after,
                                                                 std::size_t limit) const override;
  void scan_entities(const std::string& org, const std::function<void(const entity_summary&)>& fn) const override;
  std::vector<entity_card> entity_cards(const std::string& org, const std::vector<std::string>& ids,
                                        bool incoming) const override;
  void scan_entities_containing(const std::string& org, std::string_view needle,
                                const std::function<void(const entity_summary&)>& fn) const override;
  bool entity_name(const std::string& org, const std::string& id, std::string* name, std::string* type) const override;
  std::vector<entity_neighbour> entity_neighbours(const std::string& org, const std::string& id, bool outgoing,
                                                  bool incoming) const override;
  /// Reads the entities column family into the in-memory entity index (at open).
  errc load_entity_index();
  errc apply_kg_command(const log_position& pos, const schemas::kg_command& c, kg_result* result,
                        apply_outcome* outcome) override;
  std::vector<kg_bundle_info> kg_bundles(const std::string& org) const override;
  std::vector<std::string> forget_audit(const std::string& org) const override;
  errc begin_rebuild(const log_position& pos, const schemas::knowledge_command& c, command_result* result,
                     apply_outcome* outcome, bool* rebuild) override;
  forget_targets find_forget_targets(const std::string& org, const std::string& what,
                                     const std::string& id) const override;
  bool rebuilding(const std::string& org) const override { return rebuild_of(org) != nullptr; }
  bool rebuild_skips(const std::string& org, const std::string& event_id) const override;
  errc rebuild_passed(const schemas::knowledge_command& earlier) override;
  errc finish_rebuild(const log_position& pos, const schemas::knowledge_command& c, command_result* result) override;
  result<std::string> kg_status(const std::string& org, const std::string& bundle) const override;
  result<std::string> kg_get(const std::string& org, const std::string& bundle, const std::string& type,
                             const std::string& id) const override;
  kg_page kg_list(const std::string& org, const std::string& bundle, const std::string& type,
                  const std::vector<std::pair<std::string, std::string>>& filters, std::size_t offset,
                  std::size_t limit, bool with_items) const override;

private:
  /// bundles.cpp: an apply's last chunk (every chunk present): the new version replaces the old.
  errc kg_finalize(write_txn& tx, const schemas::kg_command& c, kg_result& r);
  /// Deletes every row of a bundle's visible version and its staged chunks.
  void kg_drop(write_txn& tx, const std::string& org, const std::string& bundle);
  class entity_writer;
  /// Adds `delta` to a u64 counter in meta. The store has one writer, so counters are
  /// cached once read; the new value reaches the cache only when its batch is written.
  errc bump(write_txn& tx, const std::string& k, std::uint64_t delta);
  /// Sets a u64 counter in meta to `value` if that is higher (a sequence's high mark).
  errc set_counter(write_txn& tx, const std::string& k, std::uint64_t value);
  /// Writes the batch; on success the counters it changed enter the cache.
  errc commit(write_txn& tx);
  errc mark_seen(write_txn& tx, const std::string& seen, const log_position& pos, bool* first);
  /// A command that changes nothing: the batch keeps only the seen eventId (the offset is
  /// added after).
  void reject(write_txn& tx, const std::string& seen);
  /// Applies a command record once per eventId, in one batch with the offset advance: `run`
  /// does the work; when it sets its second argument (why), only the seen eventId is written.
  errc apply_once(const log_position& pos, const std::string& org, const std::string& event_id, apply_outcome* outcome,
                  const std::function<errc(write_txn&, std::string&)>& run);
  /// The values of `keys` (any order, no repeats) in one batched read, in the order given.
  std::vector<std::optional<std::string>> read_keys(std::size_t family, std::vector<std::string> keys) const;
  /// The last key part of every key under `prefix` (an index's entry ids).
  std::vector<std::string> ids_under(std::size_t family, const std::string& prefix) const;
  /// The ids of the last `limit` rows under `prefix`, one group of `family` (keys.hpp:
  /// group_parts; its rows' parts go on with time_key(createdAt) \0 entryId), newest first.
  std::vector<std::string> newest_under(std::size_t family, const std::string& prefix, std::size_t limit) const;
  /// Walks the organisation's messages sent before `before_ms` (its by_thread message rows, in
  /// key order: thread, eventId) until `visit(thread, event_id)` answers false; the scan's status.
  errc messages_sent_before(const std::string& org, std::int64_t before_ms,
                            const std::function<bool(const std::string&, const std::string&)>& visit) const;
  std::uint64_t sum_prefix(const std::string& prefix) const;
  errc put_message(write_txn& tx, const schemas::inbound_message& m);
  /// The entity id an exact normalised name (or address) resolves to, preferring ids that
  /// start with `kind_prefix`; "" when none. Names written earlier in the same batch are
  /// seen through `tx.names`.
  /// Indexes a name of entity `id`: as written (normalised), folded, and an organisation's
  /// without its legal form; a technology's or place's canonical alias, a place's name
  /// before its region ("Cambridge" of "Cambridge, MA") and a product's name after its
  /// maker's ("Relay" of "Globex Relay", when Globex is a known organisation) (resolution.cpp).
  void put_name_keys(write_txn& tx, const std::string& org, std::string_view name, const std::string& id) const;
  std::string resolve_name(const write_txn* tx, const std::string& org, const std::string& norm,
                           std::string_view kind_prefix) const;
  /// Loads an entity: from this batch if written in it, else from the store; null when
  /// there is none. The pointer stays valid until the batch is written.
  errc load_entity(write_txn& tx, const std::string& org, const std::string& id, stored_entity** out);
  /// Stores entries, their indexes, and the people and organisations they mention.
  errc put_knowledge(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x,
                     const std::vector<schemas::resolution>* resolutions);
  /// put_knowledge's steps: the mentions' entities, a new entry's index rows, an entry's
  /// decisions (relations, supersedes, flags).
  errc put_mentions(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x,
                    std::vector<std::string>& entity_of, std::uint64_t* new_entities);
  /// The entity a mention of a person (kind_prefix "person:"), organisation ("org:") or
  /// other thing ("") names when its name is not known as written (resolution.cpp): ""
  /// when none. `note` receives the evidence of a join; `by_words` says a short form was
  /// joined (its words are not indexed as the entity's name).
  std::string resolve_mention(const write_txn& tx, const schemas::inbound_message& m,
                              const schemas::entity_mention& mention, std::string_view kind_prefix,
                              knowledge::resolution_note* note, bool* by_words) const;
  std::vector<knowledge::resolution_candidate> resolution_candidates(const write_txn& tx,
                                                                     const schemas::inbound_message& m,
                                                                     const std::vector<std::string>& words,
                                                                     bool people) const;
  /// An entity as this event sees it (its own writes first), read into `buffer` when it
  /// comes from the store; null when there is none.
  const stored_entity* peek_entity(const write_txn& tx, const std::string& org, const std::string& id,
                                   stored_entity& buffer) const;
  /// A place known with its region ("Cambridge, MA"), as its name or an alias.
  bool has_a_region(const write_txn& tx, const std::string& org, const std::string& id) const;
  /// Marks the candidates that took part in, or were named in, an earlier message with one
  /// of the message's participants (their first messages only: a bounded look).
  void note_acquaintances(const schemas::inbound_message& m,
                          std::vector<knowledge::resolution_candidate>& candidates) const;
  errc index_entry(write_txn& tx, const schemas::inbound_message& m, const std::string& id, const schemas::entry& en,
                   const schemas::resolution* r, std::uint64_t* vectors);
  errc apply_decisions(write_txn& tx, const schemas::inbound_message& m, const std::string& id, stored_entry& doc,
                       const schemas::resolution& r, std::uint64_t* relations);
  /// Indexes an entry's words for BM25: a row per distinct term (count, entry length).
  void put_chunk_status(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction* x);
  /// `entity_of`: the entity id of each index the relations name (the mentions, then the
  /// document structure's entities).
  errc put_relations(write_txn& tx, const schemas::inbound_message& m,
                     const std::vector<schemas::entity_relation>& relations, const std::vector<std::string>& entity_of,
                     const std::vector<std::string>& entry_ids);
  /// A document chunk's place in the graph (contains and mentions): the document
  /// (type document) contains its section (type section), which mentions every entity the
  /// chunk names (the document does when the chunk has no section). Appends the ids to
  /// `entity_of` and the edges to `relations`; counts the entities it creates.
  errc put_document_structure(write_txn& tx, const schemas::inbound_message& m, std::vector<std::string>& entity_of,
                              std::vector<schemas::entity_relation>& relations, std::uint64_t* new_entities);
  errc put_text(write_txn& tx, const std::string& org, const std::string& id, const std::string& words);
  /// passages.cpp: a message's passages, their BM25 rows and vectors.
  errc put_passages(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x);
  /// After a written batch: its passage postings and vectors enter the in-memory indexes.
  void index_passages(write_txn& tx);
  /// Deletes the passages of these messages (event -> thread) of `org`: their rows, postings,
  /// vectors and their threads' context rows when one of them is the last; how many.
  errc remove_passages(write_txn& tx, const std::string& org, const std::map<std::string, std::string>& events,
                       std::uint64_t* removed);
  /// A retention forget (timers): messages sent before the cutoff lose their text and
  /// passages; their entries stay, their sources marked "retained no longer".
  errc retain(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  /// Loads an entry for update: from this batch if written in it, else from the store.
  /// The pointer stays valid until the batch is written (std::map nodes do not move).
  /// not_found when the organisation has no such entry.
  errc load_entry(write_txn& tx, const std::string& org, const std::string& id, stored_entry** out);
  /// load_entry, with an entry that is not there as ok and *out null.
  errc load_if_present(write_txn& tx, const std::string& org, const std::string& id, stored_entry** out);
  /// Deletes an entry's due-reminder row (no-op without a due date).
  void drop_due_row(write_txn& tx, const stored_entry& e);
  /// Writes the entries this event created or changed, and their candidate rows: present
  /// while an entry is not superseded (candidate_rows).
  void put_entries(write_txn& tx, const std::string& org);
  /// Puts (`present`) or deletes the rows through which dedup and contradiction find an
  /// entry: its titles row (type, title key, values key) and its by_slot row (subject, slot).
  /// `deltas`: where the change is noted for group_counts, when the rows really change (they
  /// were absent and are put, or present and are deleted).
  static void candidate_rows(kv_batch& b, const stored_entry& d, bool present,
                             std::vector<group_delta>* deltas = nullptr);
  /// Adds to `threads` every thread whose by_thread rows list entry `id`: its first message's
  /// and those of the messages merged into it, read from the stored messages (a message that
  /// retention removed is not found; retention drops its thread's row when it next reads it).
  /// Calls `row` with the key and value of entry `id`'s entry_sources rows from the `first`-th
  /// on, oldest first, while it returns true.
  errc moved_rows(const std::string& org, const std::string& id, std::uint64_t first,
                  const std::function<bool(std::string_view, std::string_view)>& row) const;
  /// Calls `visit` with the key and the source of each of entry `id`'s entry_sources rows,
  /// oldest first (corruption when one is not a source record).
  errc visit_moved(const std::string& org, const std::string& id,
                   const std::function<void(std::string_view, const knowledge::source_ref&)>& visit) const;
  /// Marks each source of entry `id` that was one of `events` (messages retention removes:
  /// eventId -> thread) in its record and its moved rows; `*changed` when one was, `*gone` when
  /// the entry is not stored.
  errc mark_retained(write_txn& tx, const std::string& org, const std::string& id,
                     const std::map<std::string, std::string>& events, bool* changed, bool* gone);
  errc source_threads(const std::string& org, const std::string& id, const stored_entry& d,
                      std::set<std::string>& threads) const;
  /// Moves the sources past knowledge::kept_sources out of entry `id`'s record `d` into its
  /// entry_sources rows, written to `b` (a merge; the upgrade from layout 9).
  static void shed_sources(kv_batch& b, std::string_view org, std::string_view id, stored_entry& d);
  void put_offset(write_txn& tx, const log_position& pos);
  /// Subtracts `delta` from a u64 counter (never below 0).
  errc drop(write_txn& tx, const std::string& k, std::uint64_t delta);
  /// Deletes a branch's saves and its state.
  errc drop_branch(write_txn& tx, const std::string& org, const std::string& branch, std::size_t* n);
  errc validate(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  errc resolve_review(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  errc reminder_sent(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  errc chunk_failed(write_txn& tx, const schemas::knowledge_command& c);
  /// Removes up to c.limit entries whose expiresAt <= issuedAt, every index row of theirs,
  /// and the saves of branches idle since before issuedAt - ttlMs.
  errc expire(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  /// Drops an organisation's passage indexes (forgotten) and its `passages` from the count.
  void drop_passage_indexes(const std::string& org);
  /// Compacts every range of the organisation's keys (after a forget).
  errc compact_organization(const std::string& org);
  /// Flushes, then compacts the ranges of the organisations `first`..`last` (meta: under
  /// `meta_tags`); shared by a forget and the compaction after drops.
  errc compact_ranges(const std::string& first, const std::string& last, std::span<const char* const> meta_tags,
                      const std::atomic<bool>* cancel);
  /// Deletes every row of the organisation but its forget records (meta f, x, X, R); counts
  /// of what went by kind (forget.cpp).
  std::map<std::string, std::uint64_t> drop_organization(write_txn& tx, const std::string& org);
  /// Records what a forget of messages forgets (meta x, X: the command's events and people),
  /// its audit row and the pending mark (R); r.error when it names nothing.
  errc record_forget(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  /// During a rebuild, a message without the people a contact's forget removed.
  [[nodiscard]] const schemas::inbound_message* redacted(const schemas::inbound_message* m,
                                                         std::optional<schemas::inbound_message>& copy) const;
  /// During a rebuild, a mention a contact's forget removed (by name or address).
  [[nodiscard]] bool forgotten_mention(const std::string& org, const schemas::entity_mention& m) const;
  /// Forgets an entry or the whole organisation (storage/forget.cpp).
  errc forget(write_txn& tx, const schemas::knowledge_command& c, command_result& r);
  /// Deletes an entry and every row that indexes it; other entries' references to it go too.
  errc remove_entry(write_txn& tx, const std::string& org, const std::string& id, std::uint64_t* seq,
                    std::uint64_t* relation_count);
  /// An RFC 3339 time or a YYYY-MM-DD date (its start, UTC) as milliseconds.
  static std::optional<std::int64_t> due_ms(const std::string& s);
  std::unique_ptr<kv> kv_;
  /// Tool names no bundle may expose (open_options::reserved_tool_names).
  std::set<std::string> reserved_tool_names_;
  /// Counter values as of the last written batch (meta key -> value); appliers of different
  /// partitions share the map (each counter has one writer), hence the mutex.
  std::map<std::string, std::uint64_t> counters_;
  std::mutex counters_mutex_;
  /// The rows of the titles and by_slot groups read lately (newest_under stops at the last).
  mutable group_counts group_counts_{group_counts_held};
  /// watch_entries' watchers (expired ones are dropped at the next batch).
  mutable std::mutex watchers_mutex_;
  mutable std::vector<std::weak_ptr<const entries_watcher>> watchers_;
  /// Tells the watchers which entries `tx`'s batch put or deleted (all of its organisation's
  /// when the batch failed or deleted a range of them).
  void tell_watchers(const write_txn& tx, bool failed) const;
  /// Held by commit() from reading a reminder mark to writing its batch: the mark is the
  /// highest any organisation recorded, whatever order their commits come in.
  std::mutex reminder_mark_mutex_;
  /// index_snapshot.cpp: the snapshot of the in-memory indexes (save_indexes).
  /// Loads the snapshot meta marks current and applies its journal; why not, when it cannot
  /// ("" when loaded).
  std::string load_indexes();
  /// index_journal.cpp: what each batch after a save did to the in-memory indexes.
  /// Whether the batch changes them (then it is journaled while a snapshot is marked).
  static bool changes_indexes(const write_txn& tx);
  static std::string journal_row(const write_txn& tx);
  /// Reads a journal row into `tx` (its index changes only); false when it does not hold together.
  static bool read_journal_row(std::string value, write_txn& tx);
  /// Adds the batch's journal row to it while a snapshot is marked current (commit()).
  void journal(write_txn& tx);
  /// Records what since_snapshot reports of a written (or replayed) batch.
  void note_since_snapshot(const write_txn& tx);
  /// Applies every journal row to the indexes just loaded; why not ("" when applied).
  std::string replay_journal(std::uint64_t* rows);
  /// Deletes the mark and the journal: the next open rebuilds unless a save marks again.
  errc forget_snapshot();
  /// save_indexes' work, the gate held alone by the caller.
  engram::result<void> save_indexes_locked();
  /// The in-memory indexes a written batch changed (a drop, postings, passage vectors), as
  /// commit() and replay_journal() apply them.
  void update_indexes(write_txn& tx);
  /// passages.cpp: the passage vectors' part of the snapshot (the count, each organisation's
  /// ids by sequence in `out`, its HNSW in a file of its own in `dir`); load gives why not.
  engram::result<void> save_passage_vectors(snapshot_out& out, const std::string& dir) const;
  std::string load_passage_vectors(snapshot_in& in, const std::string& dir);
  void clear_passage_vectors();
  std::string indexes_dir_;
  indexes_opened indexes_opened_;
  /// Taken shared by commit(), alone by save_indexes(): no batch lands while a save runs.
  std::shared_mutex save_gate_;
  /// The mark names the files holding the in-memory indexes as they are (set by a save or a
  /// load, cleared with the mark's row).
  std::atomic<bool> indexes_marked_{false};
  /// The next journal row's number (rows sort by organisation, then number).
  std::atomic<std::uint64_t> journal_next_{0};
  /// Batches that changed the indexes since the snapshot was written (or since the open
  /// that rebuilt them): journaled while the mark stands (replayed ones counted too).
  std::atomic<std::uint64_t> unsaved_batches_{0};
  /// After a checkpoint that failed: unsaved_batches_ it waits for before the next try.
  std::atomic<std::uint64_t> checkpoint_retry_at_{0};
  /// since_snapshot's answers: what the journal holds (replayed at open, then written).
  std::map<std::string, changes_since_snapshot> since_;
  mutable std::mutex since_mutex_;
  /// BM25 postings, derived from cf_text; updated after each written batch.
  text_index text_;
  entity_index entities_;
  /// passages.cpp: BM25 postings of passages (from cf_passage_text) and one HNSW index of
  /// passage vectors per organisation (from cf_passages' "v" rows, in seq order).
  text_index passage_text_;
  struct passage_vectors;
  std::unique_ptr<passage_vectors> passage_vectors_;
  /// A rebuild under way (a forget of messages, forget.cpp): what the forgets recorded leave
  /// out, each mapped to the forget that recorded it.
  struct rebuild_filter {
    std::map<std::string, std::string> events;
    /// "address" | "contact" | "name" -> person_key -> forget.
    std::map<std::string, std::map<std::string, std::string>> people;
  };
  /// The organisation's rebuild under way, or null. Its filter is read and changed only by the
  /// applier of the organisation's partition; the map is shared, hence its mutex.
  const rebuild_filter* rebuild_of(const std::string& org) const;
  rebuild_filter* rebuild_of(const std::string& org);
  std::map<std::string, rebuild_filter> rebuilds_;
  mutable std::mutex rebuilds_mutex_;
};

}  // namespace engram::storage::detail
