// The RocksDB graph store: layout version, counters, commit, offsets, stats, identity,
// engine figures and the digest; open_graph_store.
#include "storage/internal/rocks_store.hpp"

namespace engram::storage::detail {

errc to_errc(const rocksdb::Status& s) {
  if (s.ok())
    return errc::ok;
  if (s.IsNotFound())
    return errc::not_found;
  if (s.IsCorruption())
    return errc::corruption;
  if (s.IsInvalidArgument() || s.IsNotSupported())
    return errc::invalid_argument;
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut())
    return errc::busy;
  return errc::io_error;
}

std::map<std::int32_t, stored_offset> rocks_graph_store::offsets(const std::string& topic) const {
  std::map<std::int32_t, stored_offset> out;
  auto prefix = key("o", topic, "");
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto k = it->key().ToStringView().substr(prefix.size());
    if (k.size() != 4)
      continue;
    auto partition = static_cast<std::int32_t>(decode_u64(std::string(4, '\0').append(k)));
    auto v = it->value().ToStringView();
    out[partition] = stored_offset{static_cast<std::int64_t>(decode_u64(v)),
                                   std::string(v.size() > 8 ? v.substr(8) : std::string_view{})};
  }
  return out;
}

std::vector<organization_stats> rocks_graph_store::stats() const {
  std::map<std::string, organization_stats> by_org;
  std::string prefix("n\0", 2);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto k = it->key().ToStringView().substr(prefix.size());
    auto sep = k.find('\0');
    if (sep == std::string_view::npos)
      continue;
    std::string org(k.substr(0, sep));
    auto counter = k.substr(sep + 1);
    auto& s = by_org[org];
    s.organization_id = org;
    auto v = decode_u64(it->value().ToStringView());
    if (counter == "events")
      s.events = v;
    else if (counter == "contacts")
      s.contacts = v;
    else if (counter == "entries")
      s.entries = v;
    else if (counter == "entities")
      s.entities = v;
    else if (counter == "relations")
      s.relations = v;
  }
  std::vector<organization_stats> out;
  for (auto& [_, s] : by_org)
    out.push_back(std::move(s));
  return out;
}

std::pair<std::uint64_t, std::uint64_t> rocks_graph_store::redelivery_counts() const {
  return {sum_prefix(std::string("d\0", 2)), sum_prefix(std::string("r\0", 2))};
}

std::string rocks_graph_store::identity() const {
  std::string id;
  if (!db_->GetDbIdentity(id).ok())
    return "unknown";
  id.erase(std::remove_if(id.begin(), id.end(), [](unsigned char c) { return std::isspace(c); }), id.end());
  return id;
}

std::map<std::string, std::uint64_t> rocks_graph_store::engine_stats() const {
  std::map<std::string, std::uint64_t> out;
  for (auto [name, property] : {std::pair{"memtable_bytes", "rocksdb.cur-size-all-mem-tables"},
                                {"pending_compaction_bytes", "rocksdb.estimate-pending-compaction-bytes"},
                                {"running_compactions", "rocksdb.num-running-compactions"},
                                {"live_sst_bytes", "rocksdb.live-sst-files-size"}}) {
    std::uint64_t total = 0;
    if (std::string_view(name) == "running_compactions") {  // a DB-wide figure
      (void)db_->GetIntProperty(property, &total);
    } else {
      for (auto* h : cfs_) {
        std::uint64_t v = 0;
        if (db_->GetIntProperty(h, property, &v))
          total += v;
      }
    }
    out[name] = total;
  }
  return out;
}

std::string rocks_graph_store::digest() const {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  auto feed = [&](std::string_view s) {
    auto len = encode_u64(s.size());
    EVP_DigestUpdate(ctx.get(), len.data(), len.size());
    EVP_DigestUpdate(ctx.get(), s.data(), s.size());
  };
  // A snapshot makes the digest consistent even while the writer keeps applying.
  const rocksdb::Snapshot* snap = db_->GetSnapshot();
  rocksdb::ReadOptions ro;
  ro.snapshot = snap;
  for (std::size_t c = cf_messages; c < cf_count; ++c) {
    feed(cf_names[c]);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[c]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      auto k = it->key().ToStringView();
      if (c == cf_meta && k.size() >= 2 && k[1] == '\0' && (k[0] == 'o' || k[0] == 'd' || k[0] == 'r'))
        continue;
      feed(k);
      feed(it->value().ToStringView());
    }
  }
  db_->ReleaseSnapshot(snap);
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md.data(), &len);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

errc rocks_graph_store::init_layout() {
  std::string v;
  auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], "v", &v);
  if (st.IsNotFound())
    return to_errc(db_->Put(write_opts_, cfs_[cf_meta], "v", layout_version));
  if (!st.ok())
    return to_errc(st);
  return v == layout_version ? errc::ok : errc::invalid_argument;
}

/// Adds `delta` to a u64 counter in meta. The store has one writer, so counters are
/// cached once read; the new value reaches the cache only when its batch is written.
errc rocks_graph_store::bump(write_txn& tx, const std::string& k, std::uint64_t delta) {
  auto pending = tx.counters.find(k);
  std::uint64_t current = 0;
  if (pending != tx.counters.end()) {
    current = pending->second;
  } else if (auto cached = counters_.find(k); cached != counters_.end()) {
    current = cached->second;
  } else {
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], k, &v);
    if (!st.ok() && !st.IsNotFound())
      return to_errc(st);
    current = decode_u64(v);
  }
  tx.counters[k] = current + delta;
  tx.batch.Put(cfs_[cf_meta], k, encode_u64(current + delta));
  return errc::ok;
}

/// Sets a u64 counter in meta to `value` if that is higher (a sequence's high mark).
errc rocks_graph_store::set_counter(write_txn& tx, const std::string& k, std::uint64_t value) {
  std::uint64_t current = 0;
  if (auto e = bump(tx, k, 0); e != errc::ok)
    return e;
  current = tx.counters[k];
  if (value > current) {
    tx.counters[k] = value;
    tx.batch.Put(cfs_[cf_meta], k, encode_u64(value));
  }
  return errc::ok;
}

/// Writes the batch; on success the counters it changed enter the cache.
errc rocks_graph_store::commit(write_txn& tx) {
  auto e = to_errc(db_->Write(write_opts_, &tx.batch));
  if (e == errc::ok)
    for (auto& [k, v] : tx.counters)
      counters_[k] = v;
  tx.counters.clear();
  return e;
}

/// The last key part of every key under `prefix` (an index's entry ids).
std::vector<std::string> rocks_graph_store::ids_under(std::size_t family, const std::string& prefix) const {
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[family]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
    out.emplace_back(it->key().ToStringView().substr(prefix.size()));
  return out;
}

std::uint64_t rocks_graph_store::sum_prefix(const std::string& prefix) const {
  std::uint64_t total = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
    total += decode_u64(it->value().ToStringView());
  return total;
}

/// Folds a duplicate into the entry it duplicates (DESIGN.md §5): content combined,
/// confidence raised by noisy-or, contacts, sources and entities united, the newer
/// timestamp kept.
void rocks_graph_store::put_offset(write_txn& tx, const log_position& pos) {
  if (!pos.advance)
    return;
  tx.batch.Put(cfs_[cf_meta], key("o", pos.topic, encode_u32(static_cast<std::uint32_t>(pos.partition))),
            encode_u64(static_cast<std::uint64_t>(pos.offset + 1)) + pos.cluster_id);
}

/// Subtracts `delta` from a u64 counter (never below 0).
errc rocks_graph_store::drop(write_txn& tx, const std::string& k, std::uint64_t delta) {
  if (auto e = bump(tx, k, 0); e != errc::ok)
    return e;
  auto& current = tx.counters[k];
  current = current > delta ? current - delta : 0;
  tx.batch.Put(cfs_[cf_meta], k, encode_u64(current));
  return errc::ok;
}

}  // namespace engram::storage::detail

namespace engram::storage {

using detail::cf_names;

std::string to_string(errc e) {
  switch (e) {
    case errc::ok: return "ok";
    case errc::not_found: return "not_found";
    case errc::corruption: return "corruption";
    case errc::io_error: return "io_error";
    case errc::invalid_argument: return "invalid_argument";
    case errc::busy: return "busy";
  }
  return "unknown";
}

std::unique_ptr<graph_store> open_graph_store(const open_options& opts, std::string* error) {
  if (!opts.read_only) {
    std::error_code ec;
    std::filesystem::create_directories(opts.path, ec);  // RocksDB makes only the last level
    if (ec) {
      if (error)
        *error = "cannot open store at '" + opts.path + "': " + ec.message();
      return nullptr;
    }
  }
  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = !opts.read_only;
  db_opts.create_missing_column_families = !opts.read_only;
  rocksdb::ColumnFamilyOptions cf_opts;
  // Most point lookups are for keys that do not exist yet (seen eventIds, new contacts):
  // bloom filters in the tables answer those without reading data blocks.
  rocksdb::BlockBasedTableOptions table_opts;
  table_opts.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  cf_opts.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_opts));
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto* name : cf_names)
    descs.emplace_back(name, cf_opts);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = opts.read_only
                ? rocksdb::DB::OpenForReadOnly(db_opts, opts.path, descs, &handles, &raw)
                : rocksdb::DB::Open(db_opts, opts.path, descs, &handles, &raw);
  if (!st.ok()) {
    if (error)
      *error = "cannot open store at '" + opts.path + "': " + st.ToString();
    return nullptr;
  }
  auto store = std::make_unique<detail::rocks_graph_store>(std::unique_ptr<rocksdb::DB>(raw), std::move(handles),
                                                   opts.sync_writes);
  if (!opts.read_only) {
    if (auto e = store->init_layout(); e != errc::ok) {
      if (error)
        *error = "store at '" + opts.path + "' has an unknown layout version (" + to_string(e) + ")";
      return nullptr;
    }
  }
  return store;
}

}  // namespace engram::storage
