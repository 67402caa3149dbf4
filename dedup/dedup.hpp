#pragma once
// Dedup (docs/extraction.md): a new entry is a duplicate of an older one of the same
// organisation and type only when the statements are near-identical (exact normalised
// title, or cosine above the threshold) AND their numbers, dates, amounts, named entities
// and polarity agree AND the wording differs only by additions (no word swapped for
// another, no reordering, no value moved to count another word) AND both say the same of
// time, modality, standing and whose (facts.hpp: sense_of). Outcomes:
//   merge     into the older entry (the store combines content, confidence, sources);
//   link      `supports` to older entries that the new one complements (same values, one
//             states some the other leaves out);
//   otherwise a new entry; near-identical statements that disagree in a value or in
//             polarity are handed to contradiction as candidates.
//
// The deduplicator owns one HNSW index per organisation (isolation by construction). It
// resolves one event at a time against the store with every earlier event applied, so its
// decisions are the same live, after a restart and in a replay.

#include "dedup/facts.hpp"
#include "storage/graph_store.hpp"
#include "storage/vector_index.hpp"

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <shared_mutex>
#include <span>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace engram::dedup {

namespace detail {
class facts_cache;
}

struct dedup_options {
  /// dedup.threshold: cosine above which two statements may be the same.
  double threshold = 0.92;
  /// Neighbours fetched per search.
  std::size_t neighbours = 10;
  /// Embedding dimension.
  std::size_t dim = 512;
  storage::vector_index_options index;
  /// Facts of stored entries kept for the candidates' reads (0: none kept).
  std::size_t facts_cached = 16384;
};

/// A near-identical older statement that disagrees with the new one (contradiction's
/// second source of candidates).
struct near_conflict {
  std::string id;
  float similarity = 0;
  /// Its facts as dedup read them (the store and the event's overlay do not change before
  /// contradiction reads them): contradiction does not read the entry again.
  facts read;
};

/// A stored entry's facts as a decision reads them: the event's overlay, else the facts dedup
/// keeps, else the store (nullopt when the entry is gone or unreadable). Safe from any thread.
using facts_reader =
    std::function<std::optional<facts>(const event_overlay& overlay, const std::string& org, const std::string& id)>;

struct index_stats {
  std::size_t organizations = 0;
  std::size_t vectors = 0;
  /// Organisations loaded from a snapshot / rebuilt from the vectors column family.
  std::size_t loaded = 0;
  std::size_t rebuilt = 0;
};

/// Every organisation's snapshot files in a directory, read ahead of deduplicator::open() (on
/// another thread while the store opens) and not yet checked against any store: open() takes
/// those valid for its store instead of reading the files again, and drops the rest.
class snapshot_reads {
public:
  /// Reads each snapshot in `dir` as open() would (`index`: the options it builds with).
  [[nodiscard]] static snapshot_reads read(const std::string& dir, const storage::vector_index_options& index);

  snapshot_reads();
  ~snapshot_reads();
  snapshot_reads(snapshot_reads&&) noexcept;
  snapshot_reads& operator=(snapshot_reads&&) noexcept;

  /// How long read() took (for the log of a start).
  [[nodiscard]] double seconds() const noexcept { return seconds_; }

private:
  friend class deduplicator;
  double seconds_ = 0;
  struct file;
  /// By file name (deduplicator's snapshot_name of the organisation).
  std::map<std::string, std::unique_ptr<file>> by_name_;
};

class deduplicator {
public:
  deduplicator(std::shared_ptr<const storage::graph_store> store, dedup_options opts);
  ~deduplicator();

  /// Builds the indexes: each organisation's snapshot in `snapshot_dir` when it is valid
  /// for this store (then the vectors applied after it are added), else a rebuild from the
  /// vectors column family in sequence order. `snapshot_dir` empty: always rebuild. A
  /// snapshot's ids are checked against the store's entries (those removed since are hidden)
  /// unless the store's indexes are current (graph_store::indexes_current): a stop writes
  /// these snapshots, then the store's, and a forget writes these again, so they are no older
  /// than the store's, whose journal then names the vectors removed since
  /// (graph_store::since_snapshot) and the organisations dropped, which are rebuilt.
  /// `ahead`: the snapshots of `snapshot_dir` already read (snapshot_reads::read), taken
  /// instead of reading the files.
  [[nodiscard]] engram::result<index_stats> open(const std::string& snapshot_dir, snapshot_reads ahead = {});
  /// open() on a thread of its own, so that what a start does next (the broker's group join,
  /// seconds of it) runs beside seconds of HNSW inserts after a crash. Every other call but
  /// poisoned() waits for it to end; if it failed, a decision, forget or drop throws and save
  /// fails saying why (nothing is decided or written from a half-built index). Called before any other thread uses
  /// this deduplicator.
  void open_in_background(const std::string& snapshot_dir, snapshot_reads ahead = {});
  /// Whether open_in_background has ended (true when it was never called).
  [[nodiscard]] bool opened() const;
  /// Waits for open_in_background and gives open()'s result (an error when never called).
  [[nodiscard]] engram::result<index_stats> open_result() const;

  /// Decides dedup for every entry of one event. Fills `out` (one per entry: outcome,
  /// merged_into, supports edges, vector_seq), `near` (conflicting near-duplicates per
  /// entry) and `overlay` (facts of the entries the event creates). Adds the created
  /// entries' vectors to the index.
  void resolve(const schemas::inbound_message& m, const schemas::extraction& x, std::vector<schemas::resolution>& out,
               std::vector<std::vector<near_conflict>>& near, event_overlay& overlay);

  /// Hides a removed entry's vector (label `seq`) from every later search.
  void forget(const std::string& organization_id, std::uint64_t seq);
  /// Drops an organisation's index (it was forgotten) and its snapshot files.
  void drop(const std::string& organization_id);

  /// The store failed to apply the last resolved event: the index may hold vectors the
  /// store does not, so no snapshot is written from it.
  void poisoned() noexcept { poisoned_ = true; }
  [[nodiscard]] bool is_poisoned() const noexcept { return poisoned_; }
  /// Builds the indexes again, as open() did with the same snapshot directory (the poisoned
  /// ones are not saved, so the snapshots are those of before the failure): once the store
  /// writes again after a failure, before anything more is resolved. Nothing may be resolved
  /// meanwhile; searches wait.
  [[nodiscard]] engram::result<index_stats> reopen();

  /// Writes every organisation's snapshot (when not poisoned), but for those whose files in
  /// the directory open() read already hold exactly their index (loaded with nothing added or
  /// hidden since, or saved since their last change). The number of organisations written.
  [[nodiscard]] engram::result<std::size_t> save(const std::string& snapshot_dir) const;

  /// Searchable vectors in one organisation's index.
  [[nodiscard]] std::size_t size(const std::string& organization_id) const;
  /// Searchable vectors in all indexes.
  [[nodiscard]] std::size_t total_size() const;
  /// Bytes of all organisations' indexes and their label maps.
  [[nodiscard]] std::size_t memory_bytes() const;
  /// Bytes of the candidates' facts kept (dedup_options::facts_cached entries at most).
  [[nodiscard]] std::size_t facts_bytes() const;

  /// Reads through the facts this deduplicator keeps (contradiction's reads of its slot
  /// candidates: the same entries dedup read for the statements before). Valid after the
  /// deduplicator is gone (it holds what it reads with).
  [[nodiscard]] facts_reader reader() const;

  /// The `k` entries of one organisation nearest to `query` (unit vector), most similar
  /// first: recall's vector side. Safe to call from any thread while events are resolved.
  [[nodiscard]] std::vector<std::pair<std::string, float>> nearest(const std::string& organization_id,
                                                                   const schemas::vector8& query, std::size_t k) const;

private:
  struct org_index;
  org_index& index_of(const std::string& org);
  /// Loads an organisation's snapshot from `dir` into `oi` when it is valid for the store
  /// (`last`: the highest vector sequence the store handed out; `current`: the store's
  /// indexes_current), hiding the vectors removed since; false when there is none to load.
  bool load_snapshot(const std::string& dir, const std::string& org, std::uint64_t last, bool current, org_index& oi,
                     snapshot_reads& ahead) const;

  std::shared_ptr<const storage::graph_store> store_;
  dedup_options opts_;
  /// Candidates' facts read lately, forgotten as the store writes their entries.
  std::shared_ptr<detail::facts_cache> facts_;
  std::shared_ptr<const void> watching_;
  std::map<std::string, std::unique_ptr<org_index>> orgs_;
  /// Where open() looked for snapshots ("" : none).
  std::string snapshot_dir_;
  std::atomic<bool> poisoned_{false};
  /// open_in_background's open, shared by the calls that wait for it.
  std::shared_future<engram::result<index_stats>> opening_;
  /// Waits for opening_ (when there is one): why it failed, if it did.
  [[nodiscard]] std::optional<std::string> wait_opened() const;
  /// wait_opened(), throwing if the open failed: before a change to the indexes.
  void must_have_opened() const;
  /// Guards the map of organisations: taken alone to add or drop one (and by open), shared to
  /// find one. Each organisation's index has a lock of its own (org_index::mutex), taken after
  /// this one: alone to add or remove a vector, shared to read. Each index has one writer
  /// (the applier of its organisation's partition), so resolve searches its own
  /// organisation's index without either; appliers of different organisations never wait on
  /// each other's index.
  mutable std::shared_mutex mutex_;
  /// Held by save(): two appliers' forgets never write the snapshot files at once.
  mutable std::mutex save_mutex_;
};

/// True when two signatures name the same numbers, dates, amounts and entities.
[[nodiscard]] bool same_values(const schemas::signature& a, const schemas::signature& b);

/// Wording check of a merge: one statement's content words (schemas::signature::words),
/// as a set, are the other's plus additions (a substituted word means another statement;
/// a reordering does not: "for 2026 the Orion budget is ..." is "the Orion budget for
/// 2026 is ..."). Order guard over the titles' words (facts::order): two words both
/// statements share, in opposite orders, mean another statement when a word stands between
/// them in either ("Hugo reports to Claire" / "Claire reports to Hugo", "tea over coffee" /
/// "coffee over tea") or both are names ("Hugo is Claire's manager"); "a Lisbon office" /
/// "an office in Lisbon" is the same.
[[nodiscard]] bool same_wording(const std::string& words_a, const std::string& words_b,
                                const std::vector<order_word>& order_a, const std::vector<order_word>& order_b);

}  // namespace engram::dedup
