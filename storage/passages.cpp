// Passages (schemas::passage): the windows of person messages kept beside the entries, so
// that recall never loses what was said. Written in the message's batch (the passage, its
// BM25 rows, its vector under the organisation's passage sequence), indexed in memory once
// the batch is written: BM25 postings (text_index) and one HNSW index per organisation,
// both derived from the column families: loaded at open from the snapshot the last stop
// wrote (index_snapshot.cpp), or rebuilt from the rows.
#include "storage/index_worker.hpp"
#include "storage/internal/graph_store_impl.hpp"

#include "base/hex.hpp"
#include "storage/internal/snapshot_file.hpp"
#include "storage/vector_index.hpp"

#include <mutex>
#include <shared_mutex>

namespace engram::storage::detail {

namespace {

/// "p-" + 16 hex digits: derived from (organisation, eventId, index), never random.
std::string passage_id(const std::string& org, const std::string& event_id, std::size_t index) {
  return "p-" + schemas::entry_id(org, "passage\x1f" + event_id, index).substr(2);
}

std::string passage_json(const std::string& id, const schemas::inbound_message& m, std::size_t index,
                         const schemas::passage& p, const std::set<std::string>& contacts) {
  json j{{"id", id},
         {"eventId", m.event_id},
         {"index", index},
         {"text", p.text},
         {"sourceType", std::string(schemas::to_string(m.source))},
         {"sourceId", m.source_id},
         {"threadId", m.thread_id},
         {"sentAt", m.sent_at},
         {"from", {{"name", m.from.name}, {"address", m.from.address}, {"contactId", m.from.contact_id}}},
         {"contactIds", contacts}};
  if (!p.dates.empty())
    j["dates"] = p.dates;
  if (p.suspicious)
    j["suspicious"] = true;
  return j.dump();
}

}  // namespace

struct kv_graph_store::passage_vectors {
  struct org_index {
    std::unique_ptr<vector_index> index;
    std::unordered_map<std::uint64_t, std::string> ids;  // label (seq) -> passage id
  };
  mutable std::shared_mutex mutex;
  std::map<std::string, org_index> orgs;
  /// Passages by organisation (with a vector or not); a drop erases its organisation's.
  std::map<std::string, std::uint64_t> passages;

  [[nodiscard]] std::uint64_t total_passages() const {
    std::uint64_t n = 0;
    for (const auto& [_, count] : passages)
      n += count;
    return n;
  }

  /// Adds a vector (its organisation's first one fixes the dimension; another size is not
  /// indexed). Caller holds the mutex exclusively.
  void add(const std::string& org, std::uint64_t seq, const std::string& id, const schemas::vector8& v) {
    auto& o = orgs[org];
    if (!o.index)
      o.index = std::make_unique<vector_index>(v.size());
    if (v.size() != o.index->dim())
      return;
    o.index->add(seq, v);
    o.ids.emplace(seq, id);
  }

  /// The vectors' changes of committed batches, in commit order, off the writer's thread;
  /// every read of `orgs` and `passages` settles it first. Last: it stops before the maps go.
  index_worker worker{"engram-passages"};
};

kv_graph_store::kv_graph_store(std::unique_ptr<kv> backend, std::set<std::string> reserved_tool_names)
    : kv_(std::move(backend)),
      reserved_tool_names_(std::move(reserved_tool_names)),
      passage_vectors_(std::make_unique<passage_vectors>()) {}

kv_graph_store::~kv_graph_store() = default;

std::map<std::string, std::uint64_t> kv_graph_store::memory_stats() const {
  std::uint64_t vectors = 0;
  {
    passage_vectors_->worker.settle();
    std::shared_lock lock(passage_vectors_->mutex);
    for (const auto& [_, o] : passage_vectors_->orgs) {
      vectors += o.index ? o.index->memory_bytes() : 0;
      vectors += o.ids.bucket_count() * sizeof(void*);
      for (const auto& [__, id] : o.ids)
        vectors +=
            2 * sizeof(void*) + sizeof(std::uint64_t) + sizeof(std::string) + (id.size() > 15 ? id.capacity() + 1 : 0);
    }
  }
  return {{"postings", text_.memory_bytes()},
          {"passage_postings", passage_text_.memory_bytes()},
          {"passage_vectors", vectors},
          {"entities", entities_.memory_bytes()}};
}

namespace {

/// A thread's last passage, for the reply that follows it: its sender, eventId, words (at
/// most context_words of them), the words of the message before it, and its vector. Row
/// value: address \0 eventId \0 words \0 earlier words \0 vector.
constexpr std::size_t context_words = 60;
/// How much of the message before a reply its first passage's vector takes in.
constexpr float context_share = 0.5f;

struct thread_context {
  std::string address, event_id, words;
  /// The words of the message before that one (a reply two messages on still reads them).
  std::string earlier;
  schemas::vector8 vector;
};

std::optional<thread_context> parse_context(std::string_view v) {
  thread_context c;
  auto take = [&](std::string& out) {
    auto sep = v.find('\0');
    if (sep == std::string_view::npos)
      return false;
    out.assign(v.substr(0, sep));
    v.remove_prefix(sep + 1);
    return true;
  };
  if (!take(c.address) || !take(c.event_id) || !take(c.words) || !take(c.earlier))
    return std::nullopt;
  if (!v.empty()) {
    auto vec = schemas::from_bytes(v);
    if (!vec)
      return std::nullopt;
    c.vector = std::move(*vec);
  }
  return c;
}

std::string first_words(std::string_view words, std::size_t n) {
  std::string out;
  for (auto w : schemas::split_words(words)) {
    if (n-- == 0)
      break;
    if (!out.empty())
      out.push_back(' ');
    out.append(w);
  }
  return out;
}

}  // namespace

errc kv_graph_store::put_passages(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x) {
  if (x.passages.empty())
    return errc::ok;
  const auto& org = m.organization_id;
  const auto contacts = knowledge::contacts_of(m);
  // A reply is read with the message before it in its thread, when another person wrote
  // that one ("How much did you raise?" / "$1,340!"): its first passage is indexed with the
  // words of that message and of the one before it (the exchange it answers), and its
  // vector leans towards that message's.
  std::optional<thread_context> before;
  std::string prior_words;  // what this message's row passes on as "earlier"
  const auto context_key = m.thread_id.empty() ? std::string() : key(org, "t", m.thread_id);
  if (!context_key.empty()) {
    auto raw = kv_->get(cf_passages, context_key);
    if (!raw && raw.error() != errc::not_found)
      return raw.error();
    if (raw) {
      before = parse_context(*raw);
      if (!before)
        return errc::corruption;
      prior_words = before->words;
      if (before->address == m.from.address)
        before.reset();
    }
  }
  const std::size_t n = std::min(x.passages.size(), schemas::max_passages_per_message);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = x.passages[i];
    const bool reply = i == 0 && before;
    const auto id = passage_id(org, m.event_id, i);
    auto record = passage_json(id, m, i, p, contacts);
    if (reply) {
      auto j = json::parse(record);
      j["after"] = before->event_id;
      record = j.dump();
    }
    tx.batch.put(cf_passages, key(org, "p", id), record);
    auto doc = index_words(reply ? p.words + " " + before->words + " " + before->earlier : p.words);
    if (!doc.tf.empty()) {
      for (const auto& [term, count] : doc.tf)
        tx.batch.put(cf_passage_text, key(org, term, id), encode_u32(count) + encode_u32(doc.length));
      tx.passage_text.push_back({true, org, id, std::move(doc)});
    }
    auto vector = p.embedding;
    if (reply && !vector.empty() && before->vector.size() == vector.size()) {
      auto a = schemas::dequantise(vector);
      const auto b = schemas::dequantise(before->vector);
      for (std::size_t d = 0; d < a.size(); ++d)
        a[d] += context_share * b[d];
      vector = schemas::quantise(a);
    }
    if (!vector.empty()) {
      const auto counter = key(meta_tag::counter, org, "passage_vectors");
      if (auto e = bump(tx, counter, 1); e != errc::ok)
        return e;
      const auto seq = tx.counters[counter];
      tx.batch.put(cf_passages, key(org, "v", encode_u64(seq)), id + std::string(1, '\0') + schemas::to_bytes(vector));
      tx.passage_vectors.push_back({org, id, seq, std::move(vector)});
    }
  }
  if (!context_key.empty()) {
    const auto& last = x.passages[n - 1];
    std::string row = m.from.address + std::string(1, '\0') + m.event_id + std::string(1, '\0') +
                      first_words(last.words, context_words) + std::string(1, '\0') + prior_words +
                      std::string(1, '\0');
    if (!last.embedding.empty())
      row += schemas::to_bytes(last.embedding);
    tx.batch.put(cf_passages, context_key, row);
  }
  tx.new_passages += n;
  return bump(tx, key(meta_tag::counter, org, "passages"), n);
}

void kv_graph_store::drop_passage_indexes(const std::string& org) {
  passage_text_.drop(org);
  passage_vectors_->worker.settle();
  std::unique_lock lock(passage_vectors_->mutex);
  passage_vectors_->orgs.erase(org);
  passage_vectors_->passages.erase(org);
}

void kv_graph_store::index_passages(write_txn& tx) {
  for (const auto& c : tx.passage_text)
    c.add ? passage_text_.add(c.org, c.id, c.doc) : passage_text_.remove(c.org, c.id, c.doc);
  if (!tx.passage_vectors.empty() || tx.new_passages || tx.removed_passages || !tx.removed_passage_vectors.empty()) {
    // HNSW inserts cost the writer a tenth of its time at a million entries: they run on the
    // worker meanwhile, in commit order, and readers settle it first (same index, same answers).
    passage_vectors_->worker.post([pv = passage_vectors_.get(), org = tx.org, added = tx.new_passages,
                                   removed = tx.removed_passages, vectors = std::move(tx.passage_vectors),
                                   removed_vectors = std::move(tx.removed_passage_vectors)] {
      std::unique_lock lock(pv->mutex);
      auto& passages = pv->passages[org];
      passages += added;
      passages -= std::min<std::uint64_t>(passages, removed);
      for (const auto& c : vectors)
        pv->add(c.org, c.seq, c.id, c.v);
      for (const auto& [o_id, seq] : removed_vectors)
        if (auto o = pv->orgs.find(o_id); o != pv->orgs.end()) {
          o->second.index->remove(seq);
          o->second.ids.erase(seq);
        }
    });
  }
  tx.passage_text.clear();
  tx.passage_vectors.clear();
  tx.new_passages = 0;
  tx.removed_passage_vectors.clear();
  tx.removed_passages = 0;
}

errc kv_graph_store::remove_passages(write_txn& tx, const std::string& org,
                                     const std::map<std::string, std::string>& events, std::uint64_t* removed) {
  *removed = 0;
  std::set<std::string> ids;
  std::set<std::string> threads;
  for (const auto& [event, thread] : events) {
    threads.insert(thread);
    for (std::size_t i = 0; i < schemas::max_passages_per_message; ++i) {  // indexes 0..n-1
      const auto id = passage_id(org, event, i);
      auto v = kv_->get(cf_passages, key(org, "p", id));
      if (!v) {
        if (v.error() != errc::not_found)
          return v.error();
        break;
      }
      tx.batch.del(cf_passages, key(org, "p", id));
      ids.insert(id);
    }
  }
  // Their postings, read back from the store: exactly what was indexed (a reply's words
  // included the message before it), for the rows and the in-memory index alike.
  std::map<std::string, text_doc> docs;
  {
    const auto prefix = key(org, "");
    auto it = kv_->iterate(cf_passage_text);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      auto parts = split_key(it->key());  // org, term, id
      if (parts.size() != 3 || !ids.count(parts[2]))
        continue;
      const auto v = it->value();
      if (v.size() != 8)
        return errc::corruption;
      auto& doc = docs[parts[2]];
      doc.tf.emplace_back(parts[1], decode_u32(v.substr(0, 4)));
      doc.length = decode_u32(v.substr(4, 4));
      tx.batch.del(cf_passage_text, it->key());
    }
    if (auto e = it->status(); e != errc::ok)
      return e;
  }
  for (auto& [id, doc] : docs)
    tx.passage_text.push_back({false, org, id, std::move(doc)});
  {
    const auto prefix = key(org, "v", "");
    auto it = kv_->iterate(cf_passages);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      const auto v = it->value();
      const auto id = v.substr(0, v.find('\0'));
      if (!ids.count(std::string(id)))
        continue;
      tx.removed_passage_vectors.emplace_back(org, decode_u64(it->key().substr(prefix.size())));
      tx.batch.del(cf_passages, it->key());
    }
    if (auto e = it->status(); e != errc::ok)
      return e;
  }
  // A thread whose last passage went: its next reply is read without it.
  for (const auto& thread : threads) {
    const auto context_key = key(org, "t", thread);
    auto raw = kv_->get(cf_passages, context_key);
    if (!raw) {
      if (raw.error() != errc::not_found)
        return raw.error();
      continue;
    }
    auto c = parse_context(*raw);
    if (!c)
      return errc::corruption;
    if (events.count(c->event_id))
      tx.batch.del(cf_passages, context_key);
  }
  *removed = ids.size();
  tx.removed_passages += ids.size();
  return ids.empty() ? errc::ok : drop(tx, key(meta_tag::counter, org, "passages"), ids.size());
}

namespace {

constexpr const char* vectors_suffix = ".passages.hnsw";

/// A passage vector index's snapshot file: the organisation id hex-encoded (ids may hold any
/// printable byte).
std::string vectors_file(const std::string& org) {
  return to_hex(reinterpret_cast<const unsigned char*>(org.data()), org.size()) + vectors_suffix;
}

}  // namespace

engram::result<void> kv_graph_store::save_passage_vectors(snapshot_out& out, const std::string& dir) const {
  std::set<std::string> written;
  passage_vectors_->worker.settle();
  std::shared_lock lock(passage_vectors_->mutex);
  out.u64(passage_vectors_->passages.size());
  for (const auto& [org, n] : passage_vectors_->passages) {
    out.bytes(org);
    out.u64(n);
  }
  out.u64(passage_vectors_->orgs.size());
  for (const auto& [org, o] : passage_vectors_->orgs) {
    out.bytes(org);
    out.u64(o.index->dim());
    const auto name = vectors_file(org);
    if (auto saved = o.index->save(dir + "/" + name); !saved)
      return saved;
    written.insert(name);
    std::vector<std::pair<std::uint64_t, std::string_view>> ids(o.ids.begin(), o.ids.end());
    std::sort(ids.begin(), ids.end());
    out.u64(ids.size());
    for (const auto& [seq, id] : ids) {
      out.u64(seq);
      out.bytes(id);
    }
  }
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {  // of organisations dropped since
    const auto name = f.path().filename().string();
    const auto at = name.find(vectors_suffix);
    if (at != std::string::npos && !written.contains(name.substr(0, at) + vectors_suffix))
      std::filesystem::remove(f.path(), ec);
  }
  return {};
}

std::string kv_graph_store::load_passage_vectors(snapshot_in& in, const std::string& dir) {
  passage_vectors_->worker.settle();
  std::unique_lock lock(passage_vectors_->mutex);
  const auto counted = in.count(16);
  for (std::uint64_t i = 0; i < counted && in.ok(); ++i) {
    std::string org(in.bytes());
    passage_vectors_->passages[std::move(org)] = in.u64();
  }
  const auto orgs = in.count(16);
  for (std::uint64_t i = 0; i < orgs && in.ok(); ++i) {
    const std::string org(in.bytes());
    const auto dim = in.u64();
    auto index = vector_index::load(dir + "/" + vectors_file(org), dim, {});
    if (!index)
      return vectors_file(org) + ": " + index.error();
    auto& o = passage_vectors_->orgs[org];
    o.index = std::move(*index);
    const auto n = in.count(16);
    o.ids.reserve(n);
    for (std::uint64_t k = 0; k < n && in.ok(); ++k) {
      const auto seq = in.u64();
      o.ids.emplace(seq, std::string(in.bytes()));
    }
  }
  return in.ok() ? "" : "indexes.bin: its passage vectors do not hold together";
}

void kv_graph_store::clear_passage_vectors() {
  passage_vectors_->worker.settle();
  std::unique_lock lock(passage_vectors_->mutex);
  passage_vectors_->orgs.clear();
  passage_vectors_->passages.clear();
}

errc kv_graph_store::load_passage_indexes() {
  if (auto e = load_postings(cf_passage_text, passage_text_); e != errc::ok)
    return e;
  passage_vectors_->worker.settle();
  std::unique_lock lock(passage_vectors_->mutex);
  auto it = kv_->iterate(cf_passages);
  for (it->seek_to_first(); it->valid(); it->next()) {
    const auto k = it->key();
    const auto a = k.find('\0');
    if (a == std::string_view::npos || k.size() < a + 3 || k[a + 2] != '\0')
      return errc::corruption;
    if (k[a + 1] == 'p' || k[a + 1] == 't') {
      passage_vectors_->passages[std::string(k.substr(0, a))] += k[a + 1] == 'p';
      continue;  // a passage, or a thread's last one (the context of its next reply)
    }
    const auto v = it->value();
    const auto sep = v.find('\0');
    auto vec = sep == std::string_view::npos ? std::nullopt : schemas::from_bytes(v.substr(sep + 1));
    if (!vec)
      return errc::corruption;
    passage_vectors_->add(std::string(k.substr(0, a)), decode_u64(k.substr(a + 3)), std::string(v.substr(0, sep)),
                          *vec);
  }
  return it->status();
}

std::vector<std::pair<std::string, double>> kv_graph_store::search_passages(const std::string& org,
                                                                            const std::vector<std::string>& terms,
                                                                            std::size_t limit) const {
  return passage_text_.search(org, terms, limit);
}

std::vector<std::pair<std::string, float>> kv_graph_store::nearest_passages(const std::string& org,
                                                                            const schemas::vector8& query,
                                                                            std::size_t k) const {
  passage_vectors_->worker.settle();
  std::shared_lock lock(passage_vectors_->mutex);
  std::vector<std::pair<std::string, float>> out;
  auto it = passage_vectors_->orgs.find(org);
  if (it == passage_vectors_->orgs.end() || query.size() != it->second.index->dim())
    return out;
  for (const auto& hit : it->second.index->search(query, k))
    if (auto id = it->second.ids.find(hit.label); id != it->second.ids.end())
      out.emplace_back(id->second, hit.similarity);
  return out;
}

result<std::string> kv_graph_store::get_passage(const std::string& org, const std::string& passage_id) const {
  return kv_->get(cf_passages, key(org, "p", passage_id));
}

std::vector<std::optional<std::string>> kv_graph_store::get_passages(const std::string& org,
                                                                     std::span<const std::string> ids) const {
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (const auto& id : ids)
    keys.push_back(key(org, "p", id));
  return read_keys(cf_passages, std::move(keys));
}

std::pair<std::size_t, std::size_t> kv_graph_store::passage_counts() const {
  passage_vectors_->worker.settle();
  std::shared_lock lock(passage_vectors_->mutex);
  std::size_t vectors = 0;
  for (const auto& [_, o] : passage_vectors_->orgs)
    vectors += o.index ? o.index->size() : 0;
  return {passage_vectors_->total_passages(), vectors};
}

}  // namespace engram::storage::detail
