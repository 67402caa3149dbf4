#pragma once
// The graph store: a materialised view of engram-log in RocksDB. Nothing outside storage/
// sees RocksDB; errors leave as values (errc, or result<T> for reads that return a
// value), never as exceptions.

#include "schemas/inbound_message.hpp"
#include "schemas/entity_command.hpp"
#include "schemas/kg_bundle.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/knowledge_save.hpp"
#include "schemas/knowledge.hpp"
#include "base/result.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace engram::storage {

/// no_space: the filesystem under the store is full (a write failed with ENOSPC).
enum class errc : std::uint8_t { ok = 0, not_found, corruption, io_error, invalid_argument, busy, no_space };

[[nodiscard]] std::string to_string(errc e);

/// A value read from the store, or the store's code (never errc::ok).
template <class T>
using result = engram::result<T, errc>;

/// Where a record sits on a Kafka topic, plus the cluster it was read from: an offset is
/// only meaningful on the cluster that assigned it.
struct log_position {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::string cluster_id;
  /// False for all but the last of several writes one record causes (a branch merge
  /// applies each save on its own): the offset advances only with the last, so a crash in
  /// between re-delivers the record and the writes already made are skipped by eventId.
  bool advance = true;
};

/// The next offset to read of one partition, as last stored.
struct stored_offset {
  std::int64_t next_offset = 0;
  std::string cluster_id;
};

/// Offsets [from, to) of a topic's partition that were deleted from the broker before they
/// were read, and that an operator accepted to lose (ingest.accept_gaps, replay
/// --accept-partial).
struct accepted_gap {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t from = 0;
  std::int64_t to = 0;
};

enum class apply_outcome : std::uint8_t {
  applied,    ///< new event: its mutations and the offset advance were written
  duplicate,  ///< eventId seen before: only the offset advanced
  skipped,    ///< undecodable record: only the offset advanced
};

/// Per-organisation counts, kept in the same WriteBatch as the data they count.
struct organization_stats {
  std::string organization_id;
  std::uint64_t events = 0;
  std::uint64_t contacts = 0;
  std::uint64_t entries = 0;
  std::uint64_t entities = 0;
  std::uint64_t relations = 0;
  std::uint64_t passages = 0;
};

/// A save kept in its branch until the branch is merged or discarded.
struct branch_save {
  std::uint64_t seq = 0;
  /// The knowledge-save record (schemas/knowledge_save.hpp).
  std::string save_json;
  /// Its content's embedding (empty when none was computed).
  schemas::vector8 embedding;
};

/// What a knowledge command did (apply_command).
struct command_result {
  /// Empty on success; else why nothing changed ("id: no entry 'x' in this organisation").
  std::string error;
  /// The entries the command changed, as JSON (knowledge::to_json), in a stable order.
  std::vector<std::string> entries;
  /// Entries physically removed (expire), with the vector sequence each had (0 = none).
  std::vector<std::pair<std::string, std::uint64_t>> removed;
  /// Branch saves dropped (discard_branch, expire).
  std::size_t dropped_saves = 0;
  /// forget: what was removed, by kind ("entries", "messages", "entities", "passages",
  /// "relations", "entityRelations", "restored": entries no longer superseded or flagged).
  std::map<std::string, std::uint64_t> forgotten;
  /// forget of the organisation: every index of it goes (the vector index too).
  bool organization_forgotten = false;
};

/// What a forget of messages forgets (graph_store::find_forget_targets).
struct forget_targets {
  std::vector<std::string> events;
  std::vector<std::string> people;
  std::string error;
};

/// What Engram keeps of a forgotten person's address, contact id or name (kind "address",
/// "contact", "name"): SHA-256 of (organisation, kind, value), hex; never the value itself.
[[nodiscard]] std::string person_key(const std::string& organization_id, std::string_view kind, std::string_view value);

/// What an entity command did (apply_entity_command).
struct entity_result {
  /// Empty on success; else why nothing changed ("/relations/0/to: no entity 'Rust' in this
  /// organisation").
  std::string error;
  /// The answer, as JSON: add_entities {"entities": [{id, name, created}]}, relate
  /// {"relations": [{from, to, relationType, created}]}, add_observations {"results":
  /// [{entityName, addedObservations}]}, delete_* {"deleted": n}, merge_entities
  /// {merged_into, removed, attributes_gained, relationships_gained}.
  std::string json;
};

/// What a bundle record did (apply_kg_command).
struct kg_result {
  /// Why the bundle was refused ("tool_name_collision_in_tenant: ..."): nothing became
  /// visible, the chunks kept so far were dropped. Empty otherwise.
  std::string error;
  /// The apply's status as JSON: {bundle, applyId, state: staged | applied | rejected |
  /// deleted, chunksReceived, chunks, entities, version, error}.
  std::string json;
  /// True when the organisation's visible bundles changed (a version applied, one deleted).
  bool changed = false;
};

/// A bundle's visible version.
struct kg_bundle_info {
  std::string organization_id, name, version, description, apply_id, applied_at;
  std::vector<schemas::kg_type_spec> types;
  /// Entities per type.
  std::map<std::string, std::uint64_t> counts;
};

/// A page of one type's entities (kg_list).
struct kg_page {
  /// Entities that pass every filter.
  std::uint64_t total = 0;
  /// The page's ids, in id order.
  std::vector<std::string> ids;
  /// Their JSON, when asked for.
  std::vector<std::string> items;
};

/// One edge of the entity graph.
struct entity_edge {
  std::string from_id, to_id;
  /// schemas::relation_label of what was given.
  std::string label;
  double weight = 1.0;
  std::map<std::string, std::string> attributes;
  std::string created_at;
};

/// An edge seen from one end, as walks read it (from memory).
struct entity_neighbour {
  std::string other_id, label;
  double weight = 1.0;
  /// True when the entity walked from is the edge's source.
  bool outgoing = true;
};

/// What the memory-server tools show of an entity, from memory: its name, shown type and
/// observations, and its edges with the other end's name.
struct entity_card {
  struct edge {
    std::string other_id, other_name, label;
    /// True when this entity is the edge's source.
    bool outgoing = true;
  };
  std::string id, name, type;
  std::vector<std::string> observations;
  /// Outgoing then incoming, each by label then the other end's id.
  std::vector<edge> edges;
};

/// An entity as searches see it (views valid during the scan's callback only).
struct entity_summary {
  std::string_view id, name, type;
  /// Lower-case: the name, the type, the observations joined by '\n'.
  std::string_view name_lc, type_lc, observations_lc;
  /// knowledge::normalise_name of the name, then of each alias.
  const std::vector<std::string>& normalised;
};

/// A document ingested in chunks (engramctl ingest-docs; sourceType file): what its chunks
/// applied so far gave. A chunk not yet applied (still on the log, or dead-lettered with its
/// reason on the dead-letter topic) is pending.
struct document_status {
  std::string organization_id, id, title;
  /// Chunks the document has, those applied and those the sequencer refused (a
  /// chunk_failed command; the first one's reason in `error`).
  std::uint32_t chunks = 0, done = 0, failed = 0;
  std::string error;
  /// Chunks neither applied nor refused yet.
  [[nodiscard]] std::uint32_t pending() const { return chunks - std::min(chunks, done + failed); }
  /// What extraction read from the applied chunks.
  std::uint64_t entries = 0, entities = 0, relations = 0;
};

/// An action item whose reminder has not been recorded as sent.
struct due_item {
  std::string organization_id;
  std::string entry_id;
  /// dueAt as milliseconds (the start of the due day, UTC).
  std::int64_t due_ms = 0;
};

struct open_options {
  std::string path;
  /// Open without the write lock and refuse writes (engramctl digest beside a running engramd).
  bool read_only = false;
  /// fsync the WAL on every write. Default: false (a kill -9 loses nothing; a power cut may).
  bool sync_writes = false;
  /// Tool names a knowledge bundle may not expose: the server's own (engramd passes
  /// schemas::server_tool_names()). A bundle that would is refused.
  std::set<std::string> reserved_tool_names;
  /// RocksDB's memory in MiB: its block cache (data, index and filter blocks), which the
  /// memtables of every column family are charged to (storage.memory_mb). Default: 32.
  std::size_t memory_mb = 32;
  /// RocksDB's automatic compactions wait for graph_store::start_compactions instead of
  /// starting at the end of the open. engramd starts them once it has loaded what it derives
  /// from the store: at a million entries, the compactions the writes before a crash left
  /// pending took a third of the CPU of those loads. Memtables are flushed either way.
  bool defer_compactions = false;
};

/// What the batches written since the indexes' snapshot was saved did to one organisation,
/// for the snapshots of other derived state written with it (graph_store::since_snapshot).
struct changes_since_snapshot {
  /// The organisation was dropped (forgotten, or rebuilt by a forget of messages): a snapshot
  /// of its state from before is not its state.
  bool dropped = false;
  /// The sequences of its entry vectors removed since (since the drop, when dropped).
  std::vector<std::uint64_t> removed_vectors;
};

/// How an open got the store's in-memory indexes (the BM25 postings of entries and passages,
/// the passage vectors): loaded from the snapshot the last stop wrote (graph_store::
/// save_indexes), or rebuilt from every row of their column families.
struct indexes_opened {
  bool from_snapshot = false;
  /// Why they were rebuilt ("" when loaded): no snapshot marked current (a first open, or a
  /// crash during a save, or the last open could not load it), or what was wrong with it.
  std::string why_rebuilt;
  /// Loaded: the journal rows applied after the snapshot (batches written since the save).
  std::uint64_t journal_rows = 0;
  double seconds = 0;
};

/// Persistent knowledge graph. Reads are thread-safe; writes (apply) must come from one
/// thread at a time: the store actor owns them.
class graph_store {
public:
  virtual ~graph_store() = default;

  /// Applies one engram-log record in ONE WriteBatch: the message, its contacts, what
  /// extraction read (entries, entities, their links and indexes, embeddings), what dedup
  /// and contradiction decided for each entry (merges, relations in both directions,
  /// superseded and flagged entries), the counters, the seen eventId and the offset
  /// advance. `message` null means the record could not be decoded: only the offset
  /// advances. `knowledge` may be null (nothing extracted); `resolutions` null means every
  /// entry is created as is. Returns io_error (nothing written) when RocksDB fails.
  [[nodiscard]] virtual errc apply(const log_position& pos, const schemas::inbound_message* message,
                                   const schemas::extraction* knowledge,
                                   const std::vector<schemas::resolution>* resolutions, apply_outcome* outcome) = 0;

  /// Applies an agent's save into its branch (s.branch_id non-empty): kept apart from the
  /// graph, visible only to recalls of that branch, until merged or discarded. A save to a
  /// branch idle for longer than s.branch_ttl_ms first drops the branch's older saves.
  [[nodiscard]] virtual errc apply_branch_save(const log_position& pos, const schemas::knowledge_save& s,
                                               const schemas::vector8& embedding, apply_outcome* outcome) = 0;

  /// Applies a knowledge command (validate, resolve_review, discard_branch, expire,
  /// reminder_sent, and the last step of merge_branch: dropping the merged saves) in one
  /// WriteBatch with the offset advance. A command that cannot apply (unknown id, entry not
  /// flagged) changes nothing but the offset and says why in result->error.
  [[nodiscard]] virtual errc apply_command(const log_position& pos, const schemas::knowledge_command& c,
                                           command_result* result, apply_outcome* outcome) = 0;

  /// A branch's saves in save order, and when the last was made (0: no saves).
  [[nodiscard]] virtual std::vector<branch_save> branch_saves(const std::string& organization_id,
                                                              const std::string& branch_id,
                                                              std::int64_t* last_save_ms) const = 0;

  /// Flagged entries awaiting review, in id order: (flagged id, contradicting id).
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> review_queue(
      const std::string& organization_id, std::size_t limit) const = 0;

  /// Action items due at or before `until_ms` whose reminder is not recorded, any
  /// organisation, at most `limit`.
  [[nodiscard]] virtual std::vector<due_item> due_reminders(std::int64_t until_ms, std::size_t limit) const = 0;

  /// True when the organisation has an entry with expiresAt <= now_ms, or a branch idle
  /// since before now_ms - ttl_ms (work for an expire command).
  [[nodiscard]] virtual bool has_expired(const std::string& organization_id, std::int64_t now_ms,
                                         std::int64_t ttl_ms) const = 0;

  /// True when the organisation still holds a message sent before `before_ms` (work for a
  /// retention forget, docs/forgetting.md).
  [[nodiscard]] virtual bool has_retention_due(const std::string& organization_id, std::int64_t before_ms) const = 0;

  /// The next offset of each partition of the reminders topic that reminder_sent commands
  /// have recorded (a reminder found past it was sent but not recorded).
  [[nodiscard]] virtual std::map<std::int32_t, std::int64_t> reminder_marks() const = 0;

  /// apply() without extracted knowledge.
  [[nodiscard]] errc apply(const log_position& pos, const schemas::inbound_message* message, apply_outcome* outcome) {
    return apply(pos, message, nullptr, nullptr, outcome);
  }

  /// Ids of an organisation's entries of one type whose title key (schemas::signature::key)
  /// is `title` and whose dedup values key (knowledge::values_key) is `values`: newest first (by
  /// createdAt as an instant, then id descending), at most `limit`.
  [[nodiscard]] virtual std::vector<std::string> entries_with_title(const std::string& organization_id,
                                                                    schemas::entry_type type, const std::string& title,
                                                                    std::uint64_t values, std::size_t limit) const = 0;

  /// Ids of an organisation's entries about `subject` (normalised) and attribute `slot`,
  /// newest first (by createdAt as an instant, then id descending), at most `limit`.
  [[nodiscard]] virtual std::vector<std::string> entries_with_slot(const std::string& organization_id,
                                                                   const std::string& subject, const std::string& slot,
                                                                   std::size_t limit) const = 0;

  /// Full-text search (BM25, k1 1.2, b 0.75) over an organisation's entries: `terms` are
  /// stemmed content words (reading::content_words). Best first, at most `limit`.
  [[nodiscard]] virtual std::vector<std::pair<std::string, double>> search_text(const std::string& organization_id,
                                                                                const std::vector<std::string>& terms,
                                                                                std::size_t limit) const = 0;

  /// BM25 over an organisation's passages (schemas::passage: the windows of person messages
  /// kept beside the entries), as search_text over entries. Best first, at most `limit`.
  [[nodiscard]] virtual std::vector<std::pair<std::string, double>> search_passages(
      const std::string& organization_id, const std::vector<std::string>& terms, std::size_t limit) const = 0;
  /// The `k` passages of an organisation nearest to `query`, most similar first (the
  /// store's own HNSW index of passage vectors, derived from the passages column family in
  /// the order they were applied).
  [[nodiscard]] virtual std::vector<std::pair<std::string, float>> nearest_passages(const std::string& organization_id,
                                                                                    const schemas::vector8& query,
                                                                                    std::size_t k) const = 0;
  /// A passage as JSON: {id, eventId, index, text, sourceType, sourceId, threadId, sentAt,
  /// from: {name, address, contactId}, contactIds, dates (when any), suspicious (when
  /// set)}; or not_found.
  [[nodiscard]] virtual result<std::string> get_passage(const std::string& organization_id,
                                                        const std::string& passage_id) const = 0;
  /// Several passages in one batched read, as get_entries.
  [[nodiscard]] virtual std::vector<std::optional<std::string>> get_passages(
      const std::string& organization_id, std::span<const std::string> passage_ids) const = 0;
  /// Passages stored and passage vectors indexed, over all organisations (memory figures).
  [[nodiscard]] virtual std::pair<std::size_t, std::size_t> passage_counts() const = 0;

  /// RocksDB's identity of this database (stable for its life; a new store gets a new one):
  /// what derived files such as index snapshots are checked against.
  [[nodiscard]] virtual std::string identity() const = 0;

  /// Organisations that have stored vectors, with their highest vector sequence number.
  [[nodiscard]] virtual std::map<std::string, std::uint64_t> vector_sequences() const = 0;

  /// Calls `fn(seq, entryId, vector)` for an organisation's vectors with sequence number
  /// > `after`, in sequence order (the order they were applied) until it returns false.
  [[nodiscard]] virtual errc scan_vectors(
      const std::string& organization_id, std::uint64_t after,
      const std::function<bool(std::uint64_t, std::string_view, const schemas::vector8&)>& fn) const = 0;

  /// The entries one written batch put or deleted, for what keeps values read from entries
  /// (watch_entries): `ids` of `organization_id`, or `all` of them when the store cannot say
  /// which (a batch that failed, a range of rows deleted).
  struct entries_written {
    const std::string& organization_id;
    std::span<const std::string> ids;
    bool all = false;
  };
  using entries_watcher = std::function<void(const entries_written&)>;
  /// Calls `fn` once each batch that may have changed entries is written (or has failed), on
  /// the thread that wrote it, while the returned handle lives. A call in progress holds its
  /// own reference to `fn`: drop the handle while no batch is being written when `fn` refers
  /// to something that goes with it.
  [[nodiscard]] virtual std::shared_ptr<const void> watch_entries(entries_watcher fn) const = 0;

  /// A stored entry (knowledge/entry.hpp's encoding), or not_found.
  [[nodiscard]] virtual result<std::string> get_entry(const std::string& organization_id,
                                                      const std::string& entry_id) const = 0;
  /// The sources an entry's record moved out (its entry_sources rows: knowledge::encode of a
  /// source_ref each), oldest first, from the `first`-th (0-based) on and at most `limit`; fewer
  /// when the entry moved fewer. The record keeps the first source and the latest
  /// (knowledge::kept_sources); these are the ones between.
  [[nodiscard]] virtual result<std::vector<std::string>> moved_sources(const std::string& organization_id,
                                                                       const std::string& entry_id, std::uint64_t first,
                                                                       std::size_t limit) const = 0;
  /// Several stored entries in one batched read (RocksDB MultiGet), in the order asked;
  /// nullopt where there is none (or it could not be read).
  [[nodiscard]] virtual std::vector<std::optional<std::string>> get_entries(
      const std::string& organization_id, std::span<const std::string> entry_ids) const = 0;

  /// Ids of an organisation's entries of one type, oldest first.
  [[nodiscard]] virtual std::vector<std::string> entries_of_type(const std::string& organization_id,
                                                                 schemas::entry_type type) const = 0;

  /// The entity (person or organisation) an exact normalised name resolves to, as JSON, or not_found.
  [[nodiscard]] virtual result<std::string> find_entity(const std::string& organization_id,
                                                        const std::string& name) const = 0;

  /// Offsets stored for `topic`, by partition.
  [[nodiscard]] virtual std::map<std::int32_t, stored_offset> offsets(const std::string& topic) const = 0;

  /// Records an accepted gap. With `advance` (a topic the store reads), the stored offset of
  /// the partition moves to `g.to` on `cluster_id` in the same batch, so a restart resumes
  /// after the gap. Physical, like the offsets: the digest leaves it out. Callable from the
  /// consumer thread while nothing of that partition is being applied.
  [[nodiscard]] virtual errc record_gap(const accepted_gap& g, bool advance, const std::string& cluster_id) = 0;
  /// A clustered member lets a partition of `topic` go (docs/scaling-out.md): its stored
  /// offset and accepted gaps are deleted in one batch, so what is left of it reads as never
  /// applied. Its organisations go next, each with drop_held(). Called by the store stage
  /// while nothing of that partition is being applied.
  [[nodiscard]] virtual errc drop_position(const std::string& topic, std::int32_t partition) = 0;
  /// Drops every row of `organization` in one batch, with its in-memory indexes, the rows a
  /// forget keeps too (audit rows, forget marks): this is no forget, engram-log holds it all
  /// and restores it. Its partition's position must be gone first (drop_position).
  [[nodiscard]] virtual errc drop_held(const std::string& organization) = 0;
  /// After drop_held() of `organizations`: writes the memtables out and compacts their key
  /// ranges, so reads of the organisations kept stop paying for the drops' range tombstones
  /// (docs/scaling-out.md has the figures). Slow (it may rewrite most of the store), and
  /// safe beside writes: a member's janitor calls it from its own thread. When `cancel`
  /// (may be null) turns true it stops early and answers busy; the store is as valid.
  [[nodiscard]] virtual errc compact_dropped(std::vector<std::string> organizations,
                                             const std::atomic<bool>* cancel) = 0;
  /// Every organisation the store holds anything of (a counter or a seen eventId), sorted.
  [[nodiscard]] virtual std::vector<std::string> held_organizations() const = 0;
  /// Every accepted gap, by topic, partition and first offset.
  [[nodiscard]] virtual std::vector<accepted_gap> gaps() const = 0;

  /// Counts per organisation, sorted by organization id.
  [[nodiscard]] virtual std::vector<organization_stats> stats() const = 0;

  /// Records skipped as duplicates and as undecodable since the store was created (physical
  /// counts: they depend on how often the log was re-delivered, so the digest leaves them out).
  [[nodiscard]] virtual std::pair<std::uint64_t, std::uint64_t> redelivery_counts() const = 0;

  /// True when (organization, eventId) was applied (or refused) before: applying it again
  /// changes nothing. A message whose text a retention forget removed is still seen.
  [[nodiscard]] virtual result<bool> seen(const std::string& organization_id, const std::string& event_id) const = 0;

  /// The stored message of (organization, eventId) as canonical JSON, or not_found.
  [[nodiscard]] virtual result<std::string> get_message(const std::string& organization_id,
                                                        const std::string& event_id) const = 0;

  /// Applies an entity command (schemas/entity_command.hpp) in one batch with the offset
  /// advance; a duplicate eventId changes nothing. A command that names a missing entity
  /// where one is required changes nothing but the seen eventId and the offset, and says why
  /// in result->error.
  [[nodiscard]] virtual errc apply_entity_command(const log_position& pos, const schemas::entity_command& c,
                                                  entity_result* result, apply_outcome* outcome) = 0;
  /// The id of the entity a name (or alias, case and spacing ignored) names; "" when none.
  [[nodiscard]] virtual std::string entity_id(const std::string& organization_id, const std::string& name) const = 0;
  /// Ids of up to `limit` entries that mention an entity (their mention links), in id order.
  [[nodiscard]] virtual std::vector<std::string> entity_entries(const std::string& organization_id,
                                                                const std::string& entity_id,
                                                                std::size_t limit) const = 0;
  /// Up to `limit` (normalised name or alias, id) pairs whose name starts with `prefix`
  /// (normalised), in name order: a seek, whatever the graph's size.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> names_with_prefix(
      const std::string& organization_id, const std::string& prefix, std::size_t limit) const = 0;
  /// An entity by id, as JSON (knowledge::to_json of stored_entity), or not_found.
  [[nodiscard]] virtual result<std::string> get_entity(const std::string& organization_id,
                                                       const std::string& id) const = 0;
  /// The edges leaving (outgoing) or reaching an entity, by label then other end.
  [[nodiscard]] virtual std::vector<entity_edge> entity_edges(const std::string& organization_id, const std::string& id,
                                                              bool outgoing) const = 0;
  /// Calls `fn` for every entity of the organisation, in id order, from memory (the names,
  /// types and observations the store keeps for searches). `fn` must not call the store.
  virtual void scan_entities(const std::string& organization_id,
                             const std::function<void(const entity_summary&)>& fn) const = 0;
  /// As scan_entities, but only entities whose lower-case name, type or observations may hold
  /// `needle` (lower-case): every one that does, and few that do not (an index of each
  /// entity's 3-byte sequences narrows a needle of 3 bytes or more; a shorter one visits
  /// every entity). In no particular order.
  virtual void scan_entities_containing(const std::string& organization_id, std::string_view needle,
                                        const std::function<void(const entity_summary&)>& fn) const = 0;
  /// The cards of the entities `ids` that exist, in the order given, from memory (no RocksDB
  /// read): edges leaving each, and reaching it too when `incoming`.
  [[nodiscard]] virtual std::vector<entity_card> entity_cards(const std::string& organization_id,
                                                              const std::vector<std::string>& ids,
                                                              bool incoming) const = 0;
  /// The edges at an entity (outgoing first, then incoming), from memory: for walks.
  [[nodiscard]] virtual std::vector<entity_neighbour> entity_neighbours(const std::string& organization_id,
                                                                        const std::string& id, bool outgoing,
                                                                        bool incoming) const = 0;
  /// An entity's name and shown type, from memory; false when there is none.
  [[nodiscard]] virtual bool entity_name(const std::string& organization_id, const std::string& id, std::string* name,
                                         std::string* type) const = 0;
  /// Up to `limit` entities after id `after` ("" = from the first), in id order, as (id, JSON).
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> list_entities(
      const std::string& organization_id, const std::string& after, std::size_t limit) const = 0;

  /// Applies one record of a bundle (schemas/kg_bundle.hpp) in one batch with the offset
  /// advance. An apply's chunks are kept apart until the last has arrived; then the new
  /// version replaces the old one in the same batch (readers see one or the other, whole),
  /// unless a tool it would expose is already exposed by another bundle of the organisation
  /// or by the server (then nothing changes and result->error says which).
  [[nodiscard]] virtual errc apply_kg_command(const log_position& pos, const schemas::kg_command& c, kg_result* result,
                                              apply_outcome* outcome) = 0;
  /// The visible bundles of an organisation ("" = of every organisation), by organisation and name.
  [[nodiscard]] virtual std::vector<kg_bundle_info> kg_bundles(const std::string& organization_id) const = 0;
  /// What a forget of messages (what: message, thread, document, contact; id: the eventId, the
  /// threadId, the documentId, the contact's contactId or address) finds to forget now: the
  /// eventIds (a contact's: every message they sent or that only they received) and, for a
  /// contact, the people to remove from other messages ("kind:" + person_key). forget_knowledge
  /// reads it and writes it into the command. `error` ("id: no thread 'x' in this
  /// organisation") when there is nothing.
  [[nodiscard]] virtual forget_targets find_forget_targets(const std::string& organization_id, const std::string& what,
                                                           const std::string& id) const = 0;
  /// A forget of messages (what: message, thread, document, contact) makes the organisation
  /// what it would be had those messages never been applied by rebuilding it from engram-log
  /// (docs/forgetting.md): begin_rebuild, then the organisation's earlier records re-applied
  /// in log order (advance = false) but those rebuild_skips names, rebuild_passed for each
  /// such forget met on the way, then finish_rebuild. A crash in between leaves the forget
  /// pending: its redelivery begins again, from what the first begin recorded.
  ///
  /// begin_rebuild: a duplicate (outcome duplicate) or a forget that names nothing (result->
  /// error) only advances the offset, and `rebuild` is false. Otherwise records what the forget
  /// forgets (the messages; for a contact also their entities, names and contact ids), the
  /// audit row and the pending mark, and deletes the organisation's rows but those (`rebuild`
  /// true): its in-memory indexes go too, and the caller drops its vector index.
  [[nodiscard]] virtual errc begin_rebuild(const log_position& pos, const schemas::knowledge_command& c,
                                           command_result* result, apply_outcome* outcome, bool* rebuild) = 0;
  /// A rebuild of the organisation is under way (between begin_rebuild and finish_rebuild).
  /// Each organisation's rebuild is its own: others are applied meanwhile as ever.
  [[nodiscard]] virtual bool rebuilding(const std::string& org) const = 0;
  /// During the organisation's rebuild: the record `event_id` is one the forgets recorded so
  /// far leave out.
  [[nodiscard]] virtual bool rebuild_skips(const std::string& org, const std::string& event_id) const = 0;
  /// During a rebuild: an earlier forget of messages met in the log; what it recorded is left
  /// out of the records before it only (a message arriving after a forget is applied).
  [[nodiscard]] virtual errc rebuild_passed(const schemas::knowledge_command& earlier) = 0;
  /// Ends the rebuild: the forget's seen row, the offset, the pending mark cleared, the
  /// organisation's ranges compacted; result->forgotten counts what went.
  [[nodiscard]] virtual errc finish_rebuild(const log_position& pos, const schemas::knowledge_command& c,
                                            command_result* result) = 0;
  /// The organisation's forgets, oldest first, as JSON {eventId, issuedAt, issuedBy, what, id}:
  /// who asked, when and what kind, never what was forgotten (an entry's id, not its text).
  [[nodiscard]] virtual std::vector<std::string> forget_audit(const std::string& organization_id) const = 0;
  /// The last apply's status of a bundle (kg_result::json), or not_found.
  [[nodiscard]] virtual result<std::string> kg_status(const std::string& organization_id,
                                                      const std::string& bundle) const = 0;
  /// One entity of a bundle's type by id, as JSON, or not_found.
  [[nodiscard]] virtual result<std::string> kg_get(const std::string& organization_id, const std::string& bundle,
                                                   const std::string& type, const std::string& id) const = 0;
  /// The entities of a type that match every filter (indexed field, schemas::kg_index_value of
  /// the value), in id order from `offset`, at most `limit`; their JSON when `with_items`. A
  /// filter reads the index, so the work follows the result, not the bundle.
  [[nodiscard]] virtual kg_page kg_list(const std::string& organization_id, const std::string& bundle,
                                        const std::string& type,
                                        const std::vector<std::pair<std::string, std::string>>& filters,
                                        std::size_t offset, std::size_t limit, bool with_items) const = 0;

  /// The contact entity of an address (person), as JSON, or not_found.
  [[nodiscard]] virtual result<std::string> get_contact(const std::string& organization_id,
                                                        const std::string& address) const = 0;

  /// The documents of an organisation ("" = of every organisation), by organisation and id.
  [[nodiscard]] virtual std::vector<document_status> documents(const std::string& organization_id) const = 0;

  /// EventIds of a thread's messages, in key order.
  [[nodiscard]] virtual std::vector<std::string> thread_messages(const std::string& organization_id,
                                                                 const std::string& thread_id) const = 0;

  /// RocksDB figures worth watching (all column families): memtable bytes
  /// ("memtable_bytes"), compaction bytes pending ("pending_compaction_bytes"), compactions
  /// running ("running_compactions"), live SST bytes ("live_sst_bytes").
  [[nodiscard]] virtual std::map<std::string, std::uint64_t> engine_stats() const = 0;

  /// Writes the in-memory indexes derived from the store (indexes_opened) into `indexes/`
  /// beside it and marks them current in meta (a physical row, outside the digest); the next
  /// open loads them in place of reading every row again. While the mark stands, every batch
  /// that changes the indexes also writes what it did to them in a journal row of the same
  /// RocksDB batch, and an open applies those rows after the snapshot: after a stop, a crash
  /// or a kill -9 alike the indexes are what the process held. A save deletes the rows with
  /// the old mark. Batches wait while a save runs. A store in memory has nothing to save, nor
  /// has one whose mark stands with no batch since it was written or loaded (journal rows
  /// replayed at the open count as batches): true when it wrote them.
  [[nodiscard]] virtual engram::result<bool> save_indexes() = 0;
  /// When at least `every` (> 0) batches changed the in-memory indexes since their snapshot
  /// was written (since the open, when it rebuilt them): runs `first` (the snapshot of other
  /// derived state, dedup's) and then save_indexes, with no batch written in between, so
  /// `first`'s snapshot is as current as the store's. What an open after a crash indexes
  /// again is then at most `every` batches' worth. True when it saved; an error from `first`
  /// (the store's old mark and journal stay: `first`'s snapshot is no older than them) or
  /// from the save.
  [[nodiscard]] virtual engram::result<bool> checkpoint_indexes(std::uint64_t every,
                                                                const std::function<engram::result<void>()>& first) = 0;
  /// How the last open got its in-memory indexes.
  [[nodiscard]] virtual indexes_opened indexes_origin() const = 0;
  /// True while a save's snapshot is marked current (saved, or loaded by the open, and kept
  /// current since by the journal). Snapshots of other derived state written at that save or
  /// after (dedup's, at a stop and after a forget) are then current but for since_snapshot.
  [[nodiscard]] virtual bool indexes_current() const = 0;
  /// While indexes_current: what the batches since the save did to the organisation that
  /// other snapshots need to know (dedup's entry vectors: its snapshot holds them).
  [[nodiscard]] virtual changes_since_snapshot since_snapshot(const std::string& organization_id) const = 0;

  /// Bytes of the store's in-memory indexes by part, as they are now: "postings" (entries'
  /// BM25), "passage_postings", "passage_vectors" (HNSW).
  [[nodiscard]] virtual std::map<std::string, std::uint64_t> memory_stats() const = 0;

  /// Set once a write failed for want of disk space or by an I/O error: what RocksDB said,
  /// with the store's path ("disk full: the store at /var/lib/engram cannot write (IO error:
  /// No space left on device: …)"). From then on every write is refused with the same code
  /// (nothing after the failure is applied out of order) until resume_writes() succeeds or
  /// the store is opened again; reads go on.
  [[nodiscard]] virtual std::optional<std::string> write_failure() const = 0;

  /// After a full disk: has RocksDB write what it holds again and, when it can, clears the
  /// write failure (ok; writes are accepted again). The write that failed left nothing in the
  /// store, and the in-memory indexes change only with a written batch, so the store is as it
  /// was before that write. no_space while the disk is still full; an I/O error or corruption
  /// is never cleared (its code is answered). ok when nothing failed.
  [[nodiscard]] virtual errc resume_writes() = 0;

  /// Starts RocksDB's automatic compactions of a store opened with
  /// open_options::defer_compactions; ok when they run already.
  [[nodiscard]] virtual errc start_compactions() = 0;

  /// SHA-256 (hex) of the logical content: every column family in a fixed order, key and
  /// value, leaving out what depends on delivery (offsets, redelivery counts). Independent
  /// of RocksDB's physical layout and of wall-clock time.
  /// With `organization`: that organisation's content only (its rows of every data family
  /// and its own meta rows; not the reminder marks, which are per engram-reminders
  /// partition). Equal for a store holding only that organisation's records and for one
  /// holding others too: how the members of a cluster are compared with one replay.
  [[nodiscard]] virtual std::string digest(std::string_view organization = {}) const = 0;

  /// What the digest hashes, in its order: each column family (`family` with its name),
  /// then its logical keys and values (`pair`); engramctl digest --dump shows where two
  /// stores differ. With `organization`: what digest(organization) hashes.
  virtual void visit_logical(const std::function<void(std::string_view name)>& family,
                             const std::function<void(std::string_view key, std::string_view value)>& pair,
                             std::string_view organization = {}) const = 0;
};

/// Opens (creating if needed) the store at opts.path, or says why it cannot.
[[nodiscard]] engram::result<std::unique_ptr<graph_store>> open_graph_store(const open_options& opts);

/// The process that holds the store at `path` open for writing (RocksDB's lock on its LOCK
/// file), when it is another process than this one: asked before a start does anything that
/// another process's engramd would notice, since the open would fail anyway.
[[nodiscard]] std::optional<long> held_by_another_process(const std::string& path);

/// A new, empty store in memory, behind the same interface and rules (no RocksDB, no disk):
/// for unit tests of the knowledge rules. Gone when destroyed.
[[nodiscard]] std::unique_ptr<graph_store> make_memory_graph_store(std::set<std::string> reserved_tool_names = {});

}  // namespace engram::storage
