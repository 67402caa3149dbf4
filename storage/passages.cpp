// Passages (schemas::passage): the windows of person messages kept beside the entries, so
// that recall never loses what was said. Written in the message's batch (the passage, its
// BM25 rows, its vector under the organisation's passage sequence), indexed in memory once
// the batch is written: BM25 postings (text_index) and one HNSW index per organisation,
// both derived from the column families and rebuilt from them at open.
#include "storage/internal/graph_store_impl.hpp"
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
  std::size_t passages = 0;

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
};

kv_graph_store::kv_graph_store(std::unique_ptr<kv> backend)
  : kv_(std::move(backend)), passage_vectors_(std::make_unique<passage_vectors>()) {}

kv_graph_store::~kv_graph_store() = default;

errc kv_graph_store::put_passages(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x) {
  if (x.passages.empty())
    return errc::ok;
  const auto& org = m.organization_id;
  const auto contacts = knowledge::contacts_of(m);
  for (std::size_t i = 0; i < x.passages.size() && i < schemas::max_passages_per_message; ++i) {
    const auto& p = x.passages[i];
    const auto id = passage_id(org, m.event_id, i);
    tx.batch.put(cf_passages, key(org, "p", id), passage_json(id, m, i, p, contacts));
    auto doc = index_words(p.words);
    if (!doc.tf.empty()) {
      for (const auto& [term, n] : doc.tf)
        tx.batch.put(cf_passage_text, key(org, term, id), encode_u32(n) + encode_u32(doc.length));
      tx.passage_text.push_back({true, org, id, std::move(doc)});
    }
    if (!p.embedding.empty()) {
      const auto counter = key("n", org, "passage_vectors");
      if (auto e = bump(tx, counter, 1); e != errc::ok)
        return e;
      const auto seq = tx.counters[counter];
      tx.batch.put(cf_passages, key(org, "v", encode_u64(seq)), id + std::string(1, '\0') + schemas::to_bytes(p.embedding));
      tx.passage_vectors.push_back({org, id, seq, p.embedding});
    }
  }
  tx.new_passages += std::min(x.passages.size(), schemas::max_passages_per_message);
  return bump(tx, key("n", org, "passages"), std::min(x.passages.size(), schemas::max_passages_per_message));
}

void kv_graph_store::index_passages(write_txn& tx) {
  for (const auto& c : tx.passage_text)
    c.add ? passage_text_.add(c.org, c.id, c.doc) : passage_text_.remove(c.org, c.id, c.doc);
  if (!tx.passage_vectors.empty() || tx.new_passages) {
    std::unique_lock lock(passage_vectors_->mutex);
    passage_vectors_->passages += tx.new_passages;
    for (const auto& c : tx.passage_vectors)
      passage_vectors_->add(c.org, c.seq, c.id, c.v);
  }
  tx.passage_text.clear();
  tx.passage_vectors.clear();
  tx.new_passages = 0;
}

errc kv_graph_store::load_passage_indexes() {
  {
    auto it = kv_->iterate(cf_passage_text);
    for (it->seek_to_first(); it->valid(); it->next()) {
      const auto k = it->key();
      const auto a = k.find('\0'), b = a == std::string_view::npos ? a : k.find('\0', a + 1);
      const auto v = it->value();
      if (b == std::string_view::npos || v.size() < 8)
        return errc::corruption;
      passage_text_.load(k.substr(0, a), k.substr(a + 1, b - a - 1), k.substr(b + 1), decode_u32(v.substr(0, 4)),
                         decode_u32(v.substr(4, 4)));
    }
    passage_text_.seal();
    if (auto e = it->status(); e != errc::ok)
      return e;
  }
  std::unique_lock lock(passage_vectors_->mutex);
  auto it = kv_->iterate(cf_passages);
  for (it->seek_to_first(); it->valid(); it->next()) {
    const auto k = it->key();
    const auto a = k.find('\0');
    if (a == std::string_view::npos || k.size() < a + 3 || k[a + 2] != '\0')
      return errc::corruption;
    if (k[a + 1] == 'p') {
      ++passage_vectors_->passages;
      continue;
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

std::pair<std::size_t, std::size_t> kv_graph_store::passage_counts() const {
  std::shared_lock lock(passage_vectors_->mutex);
  std::size_t vectors = 0;
  for (const auto& [_, o] : passage_vectors_->orgs)
    vectors += o.index ? o.index->size() : 0;
  return {passage_vectors_->passages, vectors};
}

}  // namespace engram::storage::detail
