#include "dedup/dedup.hpp"
#include "dedup/internal/facts_cache.hpp"
#include "dedup/internal/label_ids.hpp"

#include "base/hex.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_set>

namespace engram::dedup {

namespace {

/// Every word of `small` is in `big`.
bool is_subset(const std::vector<std::string_view>& small, const std::vector<std::string_view>& big) {
  std::set<std::string_view> have(big.begin(), big.end());
  return std::all_of(small.begin(), small.end(), [&](auto w) { return have.count(w) > 0; });
}

/// Where each word of `seq` that occurs once stands.
std::map<std::string_view, std::size_t> single_positions(const std::vector<order_word>& seq) {
  std::map<std::string_view, std::size_t> at, seen;
  for (std::size_t i = 0; i < seq.size(); ++i)
    if (++seen[seq[i].word] == 1)
      at[seq[i].word] = i;
    else
      at.erase(seq[i].word);
  return at;
}

// Function words link the roles, they hold none: "for 2026 the budget" is "the budget for 2026".
const std::set<std::string_view>& role_links() {
  static const std::set<std::string_view> links = {
      "for", "to", "by",  "with", "from", "over", "than", "into", "onto", "and",  "or",    "as",   "per", "about",
      "via", "we", "our", "you",  "your", "i",    "they", "it",   "this", "that", "their", "just", "also"};
  return links;
}

/// A number or an amount ("48", "2.5", "$75,000"): order_of keeps each one word.
bool is_value(std::string_view w) { return std::isdigit(static_cast<unsigned char>(w[0])) || w[0] == '$'; }

/// Each value (a number or an amount) that occurs once, with the word it counts: the next word
/// that is neither a value nor a link ("48 desks", "15 mw"); none at the end.
std::map<std::string_view, std::string_view> counted_words(const std::vector<order_word>& seq) {
  std::map<std::string_view, std::string_view> out;
  for (const auto& [w, i] : single_positions(seq)) {
    if (!is_value(w))
      continue;
    for (auto j = i + 1; j < seq.size(); ++j)
      if (!is_value(seq[j].word) && !role_links().count(seq[j].word)) {
        out[w] = seq[j].word;
        break;
      }
  }
  return out;
}

/// Two values that count two words in one title count them the other way round in the other
/// ("48 desks and 52 staff" / "52 desks and 48 staff"); a value moved with its word, or
/// counting nothing, is no swap ("for 2026 the budget is $75,000").
bool values_swapped(const std::vector<order_word>& a, const std::vector<order_word>& b) {
  const auto ca = counted_words(a), cb = counted_words(b);
  for (const auto& [x, wx] : ca)
    for (const auto& [y, wy] : ca) {
      if (x == y || wx == wy)
        continue;
      auto bx = cb.find(x), by = cb.find(y);
      if (bx != cb.end() && by != cb.end() && bx->second == wy && by->second == wx)
        return true;
    }
  return false;
}

/// The words of a title, as a set.
std::set<std::string_view> words_of(const std::vector<order_word>& seq) {
  std::set<std::string_view> out;
  for (const auto& w : seq)
    out.insert(w.word);
  return out;
}

/// Two words that say another statement in the same place: not two function words ("tea to
/// coffee" / "tea over coffee"), unless one leads to and the other away ("to" / "from").
bool another_word(std::string_view x, std::string_view y) {
  static const std::set<std::string_view> toward = {"to", "into", "onto"};
  if (!role_links().count(x) || !role_links().count(y))
    return true;
  return (toward.count(x) && y == "from") || (x == "from" && toward.count(y));
}

/// A word that may stand for another of the same sense: an auxiliary ("has" / "have"), a value
/// or a calendar word, which the signature compares resolved ("$1.2M" / "$1,200,000", "Aug" /
/// "August").
bool interchangeable(std::string_view w) {
  static const std::set<std::string_view> auxiliaries = {"has", "have", "had", "having", "do", "does", "did", "being"};
  static constexpr std::string_view calendar[] = {"january",  "february", "march",    "april",     "may",
                                                  "june",     "july",     "august",   "september", "october",
                                                  "november", "december", "monday",   "tuesday",   "wednesday",
                                                  "thursday", "friday",   "saturday", "sunday"};
  if (auxiliaries.count(w) ||
      std::any_of(w.begin(), w.end(), [](char c) { return !std::isalpha(static_cast<unsigned char>(c)); }))
    return true;
  return w.size() >= 3 &&
         std::any_of(std::begin(calendar), std::end(calendar), [&](auto c) { return c.starts_with(w); });
}

/// A word of one title stands where the other has another word, between the same two words:
/// "upgrade on the eu cluster" / "upgrade on the us cluster", "ship pallets to the depot" / "ship
/// pallets from the depot".
bool word_replaced(const std::vector<order_word>& a, const std::vector<order_word>& b) {
  const auto in_a = words_of(a), in_b = words_of(b);
  for (std::size_t i = 1; i + 1 < a.size(); ++i) {
    if (in_b.count(a[i].word) || interchangeable(a[i].word))
      continue;
    for (std::size_t j = 1; j + 1 < b.size(); ++j)
      if (b[j - 1].word == a[i - 1].word && b[j + 1].word == a[i + 1].word && !in_a.count(b[j].word) &&
          !interchangeable(b[j].word) && another_word(a[i].word, b[j].word))
        return true;
  }
  return false;
}

/// `longer` has words between two words that stand together in `shorter`: the words qualify
/// what follows ("the crash rate" / "the crash-free session rate"). A name, a value, a calendar
/// word, a function word and whose ("payslips" / "his payslips") are no such words.
bool words_inserted(const std::vector<order_word>& shorter, const std::vector<order_word>& longer) {
  static const std::set<std::string_view> owners = {"our", "their", "my", "your", "his", "her", "its"};
  const auto in_shorter = words_of(shorter);
  auto qualifier = [&](const order_word& w) {
    return !in_shorter.count(w.word) && !w.name && !interchangeable(w.word) && !role_links().count(w.word) &&
           !owners.count(w.word);
  };
  for (std::size_t i = 0; i + 1 < shorter.size(); ++i)
    for (std::size_t j = 0; j + 2 < longer.size(); ++j) {
      if (longer[j].word != shorter[i].word || !qualifier(longer[j + 1]))
        continue;
      auto k = j + 1;
      while (k < longer.size() && !in_shorter.count(longer[k].word))
        ++k;
      if (k < longer.size() && longer[k].word == shorter[i + 1].word)
        return true;
    }
  return false;
}

/// Two shared words in opposite orders with a word between them (in either title), two names
/// swapped, two values swapped between the words they count, a word replaced by another, or
/// words put between two that stand together: who does what to whom, or how many of what,
/// changed.
bool roles_swapped(const std::vector<order_word>& a, const std::vector<order_word>& b) {
  if (values_swapped(a, b) || word_replaced(a, b) || words_inserted(a, b) || words_inserted(b, a))
    return true;
  const auto& links = role_links();
  auto pa = single_positions(a), pb = single_positions(b);
  std::vector<std::pair<std::size_t, std::size_t>> shared;  // (position in a, position in b)
  for (const auto& [w, i] : pa)
    if (auto it = pb.find(w); it != pb.end() && !is_value(w) && !links.count(w))
      shared.emplace_back(i, it->second);
  for (const auto& [ai, bi] : shared)
    for (const auto& [aj, bj] : shared) {
      if (!(ai < aj && bi > bj))
        continue;
      const bool names = (a[ai].name || b[bi].name) && (a[aj].name || b[bj].name);
      if (names || aj - ai > 1 || bi - bj > 1)
        return true;
    }
  return false;
}

/// One list contains the other (the extra names are detail one statement adds).
bool nested(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::includes(a.begin(), a.end(), b.begin(), b.end()) || std::includes(b.begin(), b.end(), a.begin(), a.end());
}

/// Each list equal, or one of the two empty (one statement leaves out what the other says).
bool complementary(const schemas::signature& a, const schemas::signature& b) {
  auto fits = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    return x == y || x.empty() || y.empty();
  };
  return fits(a.numbers, b.numbers) && fits(a.dates, b.dates) && fits(a.amounts, b.amounts) &&
         fits(a.entities, b.entities);
}

std::string percent(float similarity) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(similarity));
  return buf;
}

/// Snapshot file names: the organisation id hex-encoded (ids may hold any printable byte).
std::string snapshot_name(const std::string& org) {
  return to_hex(reinterpret_cast<const unsigned char*>(org.data()), org.size()) + ".hnsw";
}

}  // namespace

bool same_values(const schemas::signature& a, const schemas::signature& b) {
  // Named entities are read by capitalisation and lexicons: one statement may name a
  // company the reader missed in the other. The wording check sees real differences.
  return a.numbers == b.numbers && a.dates == b.dates && a.amounts == b.amounts && nested(a.entities, b.entities);
}

bool same_wording(const std::string& words_a, const std::string& words_b, const std::vector<order_word>& order_a,
                  const std::vector<order_word>& order_b) {
  auto a = schemas::split_words(words_a), b = schemas::split_words(words_b);
  if (!(is_subset(a, b) || is_subset(b, a)))
    return false;
  return !roles_swapped(order_a, order_b);
}

struct deduplicator::org_index {
  std::unique_ptr<storage::vector_index> index;
  detail::label_ids ids;
  std::uint64_t last_seq = 0;
  /// Its snapshot files hold exactly this index (loaded with nothing added or hidden since,
  /// or saved since the last change): save() leaves them as they are.
  mutable std::atomic<bool> on_disk{false};
  /// Alone to change index, ids and last_seq; shared to read them (deduplicator::mutex_).
  mutable std::shared_mutex mutex;
};

deduplicator::deduplicator(std::shared_ptr<const storage::graph_store> store, dedup_options opts)
    : store_(std::move(store)), opts_(opts), facts_(std::make_shared<detail::facts_cache>(opts.facts_cached)) {
  // The cache forgets every entry the store writes (the watcher holds the cache: a batch
  // being written while this deduplicator goes still finds it).
  watching_ = store_->watch_entries([cache = facts_](const storage::graph_store::entries_written& w) {
    cache->forget(w.organization_id, w.ids, w.all);
  });
}

deduplicator::~deduplicator() { (void)wait_opened(); }

void deduplicator::open_in_background(const std::string& snapshot_dir, snapshot_reads ahead) {
  opening_ = std::async(std::launch::async, [this, snapshot_dir, reads = std::move(ahead)]() mutable {
               return open(snapshot_dir, std::move(reads));
             }).share();
}

bool deduplicator::opened() const {
  return !opening_.valid() || opening_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

engram::result<index_stats> deduplicator::open_result() const {
  if (!opening_.valid())
    return engram::fail("the vector indexes were not opened in the background");
  return opening_.get();
}

std::optional<std::string> deduplicator::wait_opened() const {
  if (!opening_.valid())
    return std::nullopt;
  const auto& opened = opening_.get();
  return opened ? std::nullopt : std::optional<std::string>(opened.error());
}

void deduplicator::must_have_opened() const {
  if (auto failed = wait_opened())
    throw std::runtime_error("the vector indexes did not open: " + *failed);
}

deduplicator::org_index& deduplicator::index_of(const std::string& org) {
  auto& slot = orgs_[org];
  if (!slot) {
    slot = std::make_unique<org_index>();
    slot->index = std::make_unique<storage::vector_index>(opts_.dim, opts_.index);
  }
  return *slot;
}

void deduplicator::forget(const std::string& org, std::uint64_t seq) {
  must_have_opened();
  std::shared_lock lock(mutex_);
  auto it = orgs_.find(org);
  if (it == orgs_.end())
    return;
  std::unique_lock own(it->second->mutex);
  if (it->second->ids.erase(seq)) {
    it->second->index->remove(seq);
    it->second->on_disk = false;
  }
}

void deduplicator::drop(const std::string& org) {
  must_have_opened();
  std::unique_lock lock(mutex_);
  orgs_.erase(org);
  if (snapshot_dir_.empty())
    return;
  const auto base = snapshot_dir_ + "/" + snapshot_name(org);
  std::error_code ec;
  for (const char* suffix : {"", ".sum", ".ids", ".ids.tmp"})
    std::filesystem::remove(base + suffix, ec);
}

std::size_t deduplicator::size(const std::string& org) const {
  (void)wait_opened();
  std::shared_lock lock(mutex_);
  auto it = orgs_.find(org);
  if (it == orgs_.end())
    return 0;
  std::shared_lock own(it->second->mutex);
  return it->second->index->size();
}

std::size_t deduplicator::total_size() const {
  (void)wait_opened();
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [_, oi] : orgs_) {
    std::shared_lock own(oi->mutex);
    n += oi->index->size();
  }
  return n;
}

std::size_t deduplicator::memory_bytes() const {
  (void)wait_opened();
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [_, oi] : orgs_) {
    std::shared_lock own(oi->mutex);
    n += oi->index->memory_bytes() + oi->ids.memory_bytes();
  }
  return n;
}

std::size_t deduplicator::facts_bytes() const { return facts_->memory_bytes(); }

std::vector<std::pair<std::string, float>> deduplicator::nearest(const std::string& org, const schemas::vector8& query,
                                                                 std::size_t k) const {
  (void)wait_opened();
  std::shared_lock lock(mutex_);
  std::vector<std::pair<std::string, float>> out;
  auto it = orgs_.find(org);
  if (it == orgs_.end() || query.size() != opts_.dim)
    return out;
  std::shared_lock own(it->second->mutex);
  for (const auto& hit : it->second->index->search(query, k))
    if (auto id = it->second->ids.find(hit.label))
      out.emplace_back(std::string(*id), hit.similarity);
  return out;
}

engram::result<index_stats> deduplicator::reopen() {
  const auto dir = snapshot_dir_;  // open() sets it
  return open(dir);
}

/// One organisation's snapshot as its files hold it: <name> (hnswlib) with <name>.sum (its
/// checksum), and <name>.ids (the store's identity, the last seq covered, then "seq id"
/// lines). `index` null: there is none, or it is unreadable (then it is rebuilt from the
/// store: why it was refused does not matter).
struct snapshot_reads::file {
  std::string identity;
  std::uint64_t covered = 0;
  detail::label_ids ids;
  std::unique_ptr<storage::vector_index> index;

  static std::unique_ptr<file> read(const std::string& base, const storage::vector_index_options& opts) {
    auto f = std::make_unique<file>();
    std::ifstream ids(base + ".ids");
    if (!(ids >> f->identity >> f->covered))
      return f;
    auto loaded = storage::vector_index::load(base, 0, opts);
    if (!loaded)
      return f;
    f->index = std::move(*loaded);
    std::uint64_t seq;
    std::string id;
    while (ids >> seq >> id)
      f->ids.emplace(seq, id);
    return f;
  }
};

snapshot_reads::snapshot_reads() = default;
snapshot_reads::~snapshot_reads() = default;
snapshot_reads::snapshot_reads(snapshot_reads&&) noexcept = default;
snapshot_reads& snapshot_reads::operator=(snapshot_reads&&) noexcept = default;

snapshot_reads snapshot_reads::read(const std::string& dir, const storage::vector_index_options& index) {
  const auto t0 = std::chrono::steady_clock::now();
  snapshot_reads out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.ends_with(".hnsw"))
      out.by_name_[name] = file::read(it->path().string(), index);
  }
  out.seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

bool deduplicator::load_snapshot(const std::string& dir, const std::string& org, std::uint64_t last, bool current,
                                 org_index& oi, snapshot_reads& ahead) const {
  const auto name = snapshot_name(org);
  auto found = ahead.by_name_.find(name);
  auto snap = found != ahead.by_name_.end() ? std::move(found->second)
                                            : snapshot_reads::file::read(dir + "/" + name, opts_.index);
  // Since the store's snapshot: what was removed (hidden below), or the organisation
  // dropped (then this file predates what it holds now, or was written after; either
  // way it is rebuilt from the rows).
  const auto since = current ? store_->since_snapshot(org) : storage::changes_since_snapshot{};
  if (!snap->index || snap->identity != store_->identity() || snap->covered > last || since.dropped ||
      snap->index->dim() != opts_.dim || snap->ids.size() < snap->index->size())
    return false;
  oi.index = std::move(snap->index);
  oi.ids = std::move(snap->ids);
  oi.last_seq = snap->covered;
  // Entries removed (expired) after the snapshot was written: hidden as the live index hid
  // them (hnswlib keeps a removed vector in the graph either way).
  std::vector<std::uint64_t> gone;
  if (!current)
    oi.ids.for_each([&](std::uint64_t label, std::string_view id) {
      if (auto e = store_->get_entry(org, std::string(id)); !e && e.error() == storage::errc::not_found)
        gone.push_back(label);
    });
  else  // the journal names them: no read of each id
    for (auto label : since.removed_vectors)
      if (oi.ids.find(label))
        gone.push_back(label);
  for (auto label : gone) {
    oi.index->remove(label);
    oi.ids.erase(label);
  }
  oi.on_disk = gone.empty();
  return true;
}

engram::result<index_stats> deduplicator::open(const std::string& snapshot_dir, snapshot_reads ahead) {
  std::unique_lock lock(mutex_);
  orgs_.clear();
  snapshot_dir_ = snapshot_dir;
  poisoned_ = false;
  index_stats st;
  const bool current = store_->indexes_current();
  for (const auto& [org, last] : store_->vector_sequences()) {
    auto oi = std::make_unique<org_index>();
    if (!snapshot_dir.empty() && load_snapshot(snapshot_dir, org, last, current, *oi, ahead))
      ++st.loaded;
    if (!oi->index) {
      oi->index = std::make_unique<storage::vector_index>(opts_.dim, opts_.index);
      ++st.rebuilt;
    }
    // The vectors applied after the snapshot (all of them on a rebuild), in apply order.
    bool bad_dim = false;
    auto e =
        store_->scan_vectors(org, oi->last_seq, [&](std::uint64_t seq, std::string_view id, const schemas::vector8& v) {
          if (v.size() != opts_.dim) {
            bad_dim = true;
            return false;
          }
          oi->index->add(seq, v);
          oi->ids.emplace(seq, id);
          oi->last_seq = seq;
          oi->on_disk = false;
          return true;
        });
    // The highest sequence handed out, even when its vector was removed since: the next
    // vector gets the number it got live.
    if (last > oi->last_seq)
      oi->on_disk = false;  // its file names an older last sequence
    oi->last_seq = std::max(oi->last_seq, last);
    if (bad_dim)
      return engram::fail("the store's vectors of organisation '" + org + "' do not have " + std::to_string(opts_.dim) +
                          " dimensions: the embedder changed; rebuild the store with engramctl replay");
    if (e != storage::errc::ok)
      return engram::fail("cannot read the vectors of organisation '" + org + "': " + storage::to_string(e));
    st.vectors += oi->index->size();
    orgs_[org] = std::move(oi);
  }
  st.organizations = orgs_.size();
  return st;
}

engram::result<std::size_t> deduplicator::save(const std::string& snapshot_dir) const {
  if (auto failed = wait_opened())
    return engram::fail("the vector indexes did not open (" + *failed + "); not saved");
  std::lock_guard saving(save_mutex_);  // one writer of the snapshot files
  std::shared_lock lock(mutex_);        // no organisation added or dropped meanwhile
  if (poisoned_)
    return engram::fail("the index holds vectors the store failed to write; not saved (it is rebuilt at start)");
  std::error_code ec;
  std::filesystem::create_directories(snapshot_dir, ec);
  if (ec)
    return engram::fail("cannot create '" + snapshot_dir + "': " + ec.message());
  const auto identity = store_->identity();
  std::size_t written = 0;
  for (const auto& [org, oi] : orgs_) {
    std::shared_lock own(oi->mutex);  // no vector added to it while it is written
    if (oi->on_disk && snapshot_dir == snapshot_dir_)
      continue;  // what its files hold: a stop after an idle run, or an organisation untouched since
    auto base = snapshot_dir + "/" + snapshot_name(org);
    if (auto saved = oi->index->save(base); !saved)
      return engram::fail(saved.error());
    std::ofstream ids(base + ".ids.tmp", std::ios::trunc);
    ids << identity << ' ' << oi->last_seq << '\n';
    oi->ids.for_each([&](std::uint64_t seq, std::string_view id) { ids << seq << ' ' << id << '\n'; });
    if (!ids.flush())
      return engram::fail("cannot write '" + base + ".ids.tmp'");
    ids.close();
    std::filesystem::rename(base + ".ids.tmp", base + ".ids", ec);
    if (ec)
      return engram::fail("cannot install '" + base + ".ids': " + ec.message());
    oi->on_disk = snapshot_dir == snapshot_dir_;
    ++written;
  }
  return written;
}

namespace {

/// Stored entries with the same title compared per new entry at most.
constexpr std::size_t max_title_candidates = 64;

/// An entry's facts: the event's own, else the cache's, else read from the store.
std::optional<facts> read_through(const storage::graph_store& store, detail::facts_cache& cache,
                                  const event_overlay& overlay, const std::string& org, const std::string& id) {
  if (auto it = overlay.find(id); it != overlay.end())
    return it->second;
  facts held;
  std::uint64_t generation = 0;
  if (cache.find(org, id, held, generation))
    return held;
  auto c = load_facts(store, {}, org, id);
  if (c)
    cache.fill(org, *c, generation);
  return c;
}

/// One new entry's facts and where the entries it may repeat are read: the store and the
/// event's overlay, in its organisation.
struct entry_match {
  const storage::graph_store& store;
  const event_overlay& overlay;
  detail::facts_cache& cache;
  const std::string& org;
  const facts& f;

  std::optional<facts> read(const std::string& id) const { return read_through(store, cache, overlay, org, id); }

  /// An entry the new one may repeat: same type, not superseded, not the entry itself.
  std::optional<facts> candidate(const std::string& id) const {
    auto c = read(id);
    if (!c || c->type != f.type || c->status == "superseded" || c->id == f.id)
      return std::nullopt;
    return c;
  }
  bool duplicate(const facts& c) const {
    return c.positive == f.positive && c.markers == f.markers && !sense_differs(c.sense, f.sense) &&
           same_values(c.sig, f.sig) && same_wording(c.sig.words, f.sig.words, c.order, f.order);
  }
};

/// 1. Exact normalised title, before any vector search: merged into the first duplicate.
void match_title(const entry_match& k, std::uint64_t values, schemas::resolution& r) {
  const auto& f = k.f;
  if (f.title.empty())
    return;  // a title of fillers only says nothing to match on
  // Only entries whose values key is the new entry's can be duplicates: the store lists
  // those alone. A title many of them share would make every save read them all: the
  // newest max_title_candidates are compared, and the vector search below still finds a
  // near duplicate among the rest.
  auto same_title = k.store.entries_with_title(k.org, f.type, f.title, values, max_title_candidates);
  for (const auto& [id, c] : k.overlay)
    if (c.type == f.type && c.title == f.title && !f.title.empty())
      same_title.push_back(id);
  for (const auto& id : same_title)
    if (auto c = k.candidate(id); c && k.duplicate(*c)) {
      r.outcome = schemas::save_outcome::merged;
      r.merged_into = c->id;
      r.reason = "same title words; same numbers, dates, amounts, entities and polarity";
      break;
    }
}

/// 2. Neighbours above the threshold in the organisation's index: a duplicate is merged
/// into, complements are linked, the other near ones are handed on in `near`.
void match_neighbours(const entry_match& k, const storage::vector_index& index, const detail::label_ids& ids,
                      const dedup_options& opts, const schemas::vector8& embedding, schemas::resolution& r,
                      std::vector<near_conflict>& near) {
  const auto& f = k.f;
  for (const auto& hit : index.search(embedding, opts.neighbours)) {
    if (hit.similarity <= opts.threshold)
      break;
    auto id = ids.find(hit.label);
    if (!id)
      continue;
    auto c = k.candidate(std::string(*id));
    if (!c)
      continue;
    const auto sim = "cosine " + percent(hit.similarity);
    if (k.duplicate(*c)) {
      r.outcome = schemas::save_outcome::merged;
      r.merged_into = c->id;
      r.reason = sim + "; same numbers, dates, amounts, entities and polarity";
      r.relations.clear();
      break;
    }
    if (c->positive == f.positive && !sense_differs(c->sense, f.sense) && complementary(c->sig, f.sig) &&
        same_wording(c->sig.words, f.sig.words, c->order, f.order)) {
      r.outcome = schemas::save_outcome::linked;
      r.relations.push_back({schemas::relation_type::supports, c->id, sim + "; complements it (no value disagrees)"});
    } else {
      near.push_back({c->id, hit.similarity, std::move(*c)});
    }
  }
}

}  // namespace

facts_reader deduplicator::reader() const {
  return [store = store_, cache = facts_](const event_overlay& overlay, const std::string& org, const std::string& id) {
    return read_through(*store, *cache, overlay, org, id);
  };
}

void deduplicator::resolve(const schemas::inbound_message& m, const schemas::extraction& x,
                           std::vector<schemas::resolution>& out, std::vector<std::vector<near_conflict>>& near,
                           event_overlay& overlay) {
  must_have_opened();
  const auto& org = m.organization_id;
  out.assign(x.entries.size(), {});
  near.assign(x.entries.size(), {});
  overlay.clear();
  for (std::size_t i = 0; i < x.entries.size(); ++i) {
    const auto& en = x.entries[i];
    auto& r = out[i];
    auto f = facts_of(m, en, i);
    const entry_match match{*store_, overlay, *facts_, org, f};
    match_title(match, knowledge::values_key(en), r);
    if (r.outcome != schemas::save_outcome::merged && en.embedding.size() == opts_.dim) {
      const org_index* own = nullptr;
      {
        std::shared_lock lock(mutex_);  // another organisation's index may be added meanwhile
        if (auto it = orgs_.find(org); it != orgs_.end())
          own = it->second.get();
      }
      if (own)  // only this thread changes it
        match_neighbours(match, *own->index, own->ids, opts_, en.embedding, r, near[i]);
    }
    if (r.outcome == schemas::save_outcome::merged) {
      near[i].clear();
      continue;
    }
    if (r.outcome == schemas::save_outcome::linked)
      r.reason =
          "complements " + std::to_string(r.relations.size()) + " entr" + (r.relations.size() == 1 ? "y" : "ies");
    if (en.embedding.size() == opts_.dim) {
      org_index* oi = nullptr;
      {
        std::shared_lock lock(mutex_);
        if (auto it = orgs_.find(org); it != orgs_.end())
          oi = it->second.get();
      }
      if (!oi) {  // the organisation's first vector
        std::unique_lock lock(mutex_);
        oi = &index_of(org);
      }
      std::unique_lock own(oi->mutex);  // readers of this organisation wait; other appliers do not
      r.vector_seq = ++oi->last_seq;
      oi->index->add(r.vector_seq, en.embedding);
      oi->ids.emplace(r.vector_seq, f.id);
      oi->on_disk = false;
    }
    overlay.emplace(f.id, std::move(f));
  }
}

}  // namespace engram::dedup
