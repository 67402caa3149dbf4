// The journal of the in-memory indexes: while a snapshot of them is marked current
// (index_snapshot.cpp), every batch that changes them also writes, in the same RocksDB batch,
// a row saying what it did to them. An open loads the snapshot, then applies the rows in
// order, and holds what the process held before it stopped or was killed, without reading
// every row of the indexed column families again. A save deletes the rows with the mark.
//
// Rows: meta "j" \0 org \0 n (u64 BE, in the order the batches were written; an organisation
// has one writer, so its rows are in its batches' order). A drop of the organisation deletes
// its earlier rows with its data. Value, format 1 (little-endian, bytes_out's encodings):
//   u32 format, u32 flags (1: the organisation was dropped first), u64 passages added,
//   u64 passages removed,
//   entries' postings: u64 n, each: u32 added, org, id, u32 length, u64 terms, each: term, u32 tf
//   passages' postings: the same
//   passage vectors added: u64 n, each: org, id, u64 seq, the vector (schemas::to_bytes)
//   passage vectors removed: u64 n, each: org, u64 seq
//   entry vectors removed: u64 n, each: u64 seq
#include "storage/internal/graph_store_impl.hpp"
#include "storage/internal/snapshot_file.hpp"

namespace engram::storage::detail {

namespace {

constexpr std::uint32_t journal_format = 1;
constexpr std::uint32_t dropped_flag = 1;

void write_postings(bytes_out& out, const std::vector<write_txn::text_change>& changes) {
  out.u64(changes.size());
  for (const auto& c : changes) {
    out.u32(c.add ? 1 : 0);
    out.bytes(c.org);
    out.bytes(c.id);
    out.u32(c.doc.length);
    out.u64(c.doc.tf.size());
    for (const auto& [term, n] : c.doc.tf) {
      out.bytes(term);
      out.u32(n);
    }
  }
}

void read_postings(snapshot_in& in, std::vector<write_txn::text_change>& changes) {
  const auto n = in.count(4 + 8 + 8 + 4 + 8);
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    auto& c = changes.emplace_back();
    c.add = in.u32() != 0;
    c.org = in.bytes();
    c.id = in.bytes();
    c.doc.length = in.u32();
    const auto terms = in.count(8 + 4);
    for (std::uint64_t t = 0; t < terms && in.ok(); ++t) {
      std::string term(in.bytes());
      c.doc.tf.emplace_back(std::move(term), in.u32());
    }
  }
}

}  // namespace

bool kv_graph_store::changes_indexes(const write_txn& tx) {
  return tx.dropped_org || !tx.text.empty() || !tx.passage_text.empty() || !tx.passage_vectors.empty() ||
         tx.new_passages || tx.removed_passages || !tx.removed_passage_vectors.empty() || !tx.removed_vectors.empty();
}

std::string kv_graph_store::journal_row(const write_txn& tx) {
  bytes_out out;
  out.u32(journal_format);
  out.u32(tx.dropped_org ? dropped_flag : 0);
  out.u64(tx.new_passages);
  out.u64(tx.removed_passages);
  write_postings(out, tx.text);
  write_postings(out, tx.passage_text);
  out.u64(tx.passage_vectors.size());
  for (const auto& c : tx.passage_vectors) {
    out.bytes(c.org);
    out.bytes(c.id);
    out.u64(c.seq);
    out.bytes(schemas::to_bytes(c.v));
  }
  out.u64(tx.removed_passage_vectors.size());
  for (const auto& [org, seq] : tx.removed_passage_vectors) {
    out.bytes(org);
    out.u64(seq);
  }
  out.u64(tx.removed_vectors.size());
  for (auto seq : tx.removed_vectors)
    out.u64(seq);
  return out.take();
}

bool kv_graph_store::read_journal_row(std::string value, write_txn& tx) {
  auto in = snapshot_in::of(std::move(value));
  if (in.u32() != journal_format)
    return false;
  tx.dropped_org = (in.u32() & dropped_flag) != 0;
  tx.new_passages = in.u64();
  tx.removed_passages = in.u64();
  read_postings(in, tx.text);
  read_postings(in, tx.passage_text);
  const auto added = in.count(8 + 8 + 8 + 8);
  for (std::uint64_t i = 0; i < added && in.ok(); ++i) {
    auto& c = tx.passage_vectors.emplace_back();
    c.org = in.bytes();
    c.id = in.bytes();
    c.seq = in.u64();
    auto v = schemas::from_bytes(in.bytes());
    if (!v)
      in.fail();
    else
      c.v = std::move(*v);
  }
  const auto removed = in.count(8 + 8);
  for (std::uint64_t i = 0; i < removed && in.ok(); ++i) {
    std::string org(in.bytes());
    tx.removed_passage_vectors.emplace_back(std::move(org), in.u64());
  }
  const auto vectors = in.count(8);
  for (std::uint64_t i = 0; i < vectors && in.ok(); ++i)
    tx.removed_vectors.push_back(in.u64());
  return in.ok() && in.at_end();
}

void kv_graph_store::journal(write_txn& tx) {
  if (!changes_indexes(tx))
    return;
  unsaved_batches_.fetch_add(1, std::memory_order_relaxed);  // a batch that then fails only brings a save closer
  if (indexes_marked_.load(std::memory_order_acquire))
    tx.batch.put(cf_meta, key(meta_tag::index_journal, tx.org, encode_u64(journal_next_.fetch_add(1))),
                 journal_row(tx));
}

void kv_graph_store::note_since_snapshot(const write_txn& tx) {
  if (!tx.dropped_org && tx.removed_vectors.empty())
    return;
  std::lock_guard lock(since_mutex_);
  auto& s = since_[tx.org];
  if (tx.dropped_org)
    s = {true, {}};
  s.removed_vectors.insert(s.removed_vectors.end(), tx.removed_vectors.begin(), tx.removed_vectors.end());
}

changes_since_snapshot kv_graph_store::since_snapshot(const std::string& org) const {
  std::lock_guard lock(since_mutex_);
  auto it = since_.find(org);
  return it == since_.end() ? changes_since_snapshot{} : it->second;
}

std::string kv_graph_store::replay_journal(std::uint64_t* rows) {
  *rows = 0;
  const auto prefix = key(meta_tag::index_journal, "");
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    const auto k = it->key().substr(prefix.size());  // org \0 n (8 bytes, which may hold \0)
    if (k.size() < 9 || k[k.size() - 9] != '\0')
      return "a journal row's key is not \"j\", an organisation and a number";
    write_txn tx;
    tx.org = k.substr(0, k.size() - 9);
    if (!read_journal_row(std::string(it->value()), tx))
      return "a journal row of organisation '" + tx.org + "' does not hold together";
    update_indexes(tx);
    note_since_snapshot(tx);
    journal_next_.store(std::max(journal_next_.load(), decode_u64(k.substr(k.size() - 8)) + 1));
    unsaved_batches_.fetch_add(1, std::memory_order_relaxed);
    ++*rows;
  }
  if (auto e = it->status(); e != errc::ok)
    return "cannot read the journal: " + to_string(e);
  return "";
}

errc kv_graph_store::forget_snapshot() {
  kv_batch b;
  b.del(cf_meta, meta_tag::indexes);
  b.del_range(cf_meta, key(meta_tag::index_journal, ""), std::string(meta_tag::index_journal) + '\1');
  if (auto e = kv_->write(b); e != errc::ok)
    return e;
  indexes_marked_.store(false, std::memory_order_release);
  unsaved_batches_.store(0, std::memory_order_relaxed);
  std::lock_guard lock(since_mutex_);
  since_.clear();
  return errc::ok;
}

}  // namespace engram::storage::detail
