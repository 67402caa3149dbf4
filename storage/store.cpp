// The graph store over its key-value backend: layout version, counters, commit, offsets,
// stats, identity, engine figures and the digest; open_graph_store, make_memory_graph_store.
#include "storage/internal/graph_store_impl.hpp"
#include <algorithm>
#include <set>

namespace engram::storage::detail {

std::map<std::int32_t, stored_offset> kv_graph_store::offsets(const std::string& topic) const {
  std::map<std::int32_t, stored_offset> out;
  auto prefix = key(meta_tag::offset, topic, "");
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto k = it->key().substr(prefix.size());
    if (k.size() != 4)
      continue;
    auto partition = static_cast<std::int32_t>(decode_u64(std::string(4, '\0').append(k)));
    auto v = it->value();
    out[partition] = stored_offset{static_cast<std::int64_t>(decode_u64(v)),
                                   std::string(v.size() > 8 ? v.substr(8) : std::string_view{})};
  }
  return out;
}

errc kv_graph_store::record_gap(const accepted_gap& g, bool advance, const std::string& cluster_id) {
  if (g.topic.empty() || g.topic.find('\0') != std::string::npos || g.partition < 0 || g.from < 0 || g.to <= g.from)
    return errc::invalid_argument;
  const auto partition = encode_u32(static_cast<std::uint32_t>(g.partition));
  kv_batch b;
  b.put(cf_meta, key(meta_tag::gap, g.topic, partition + encode_u64(static_cast<std::uint64_t>(g.from))),
        encode_u64(static_cast<std::uint64_t>(g.to)));
  if (advance)
    b.put(cf_meta, key(meta_tag::offset, g.topic, partition),
          encode_u64(static_cast<std::uint64_t>(g.to)) + cluster_id);
  return kv_->write(b);
}

errc kv_graph_store::drop_position(const std::string& topic, std::int32_t partition) {
  if (topic.empty() || topic.find('\0') != std::string::npos || partition < 0)
    return errc::invalid_argument;
  const auto p = encode_u32(static_cast<std::uint32_t>(partition));
  kv_batch b;
  b.del(cf_meta, key(meta_tag::offset, topic, p));
  const auto gaps = key(meta_tag::gap, topic, p);
  auto it = kv_->iterate(cf_meta);
  for (it->seek(gaps); it->valid() && it->key().starts_with(gaps); it->next())
    b.del(cf_meta, it->key());
  return kv_->write(b);
}

std::vector<std::string> kv_graph_store::held_organizations() const {
  std::set<std::string> out;
  for (const char* tag : {meta_tag::counter, meta_tag::seen, meta_tag::seen_save}) {
    const auto prefix = key(tag, "");
    auto it = kv_->iterate(cf_meta);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix);) {
      auto rest = it->key().substr(prefix.size());
      std::string org(rest.substr(0, rest.find('\0')));
      out.insert(org);
      it->seek(prefix + org + '\1');  // past every row of this organisation
    }
  }
  return {out.begin(), out.end()};
}

std::vector<accepted_gap> kv_graph_store::gaps() const {
  std::vector<accepted_gap> out;
  const std::string prefix("g\0", 2);
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto k = it->key().substr(prefix.size());
    auto sep = k.find('\0');
    if (sep == std::string_view::npos || k.size() != sep + 1 + 12)
      continue;
    auto pos = k.substr(sep + 1);
    out.push_back({std::string(k.substr(0, sep)), static_cast<std::int32_t>(decode_u32(pos)),
                   static_cast<std::int64_t>(decode_u64(pos.substr(4))),
                   static_cast<std::int64_t>(decode_u64(it->value()))});
  }
  return out;
}

std::vector<organization_stats> kv_graph_store::stats() const {
  std::map<std::string, organization_stats> by_org;
  std::string prefix("n\0", 2);
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto k = it->key().substr(prefix.size());
    auto sep = k.find('\0');
    if (sep == std::string_view::npos)
      continue;
    std::string org(k.substr(0, sep));
    auto counter = k.substr(sep + 1);
    auto& s = by_org[org];
    s.organization_id = org;
    auto v = decode_u64(it->value());
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
    else if (counter == "passages")
      s.passages = v;
  }
  std::vector<organization_stats> out;
  for (auto& [_, s] : by_org)
    out.push_back(std::move(s));
  return out;
}

std::pair<std::uint64_t, std::uint64_t> kv_graph_store::redelivery_counts() const {
  return {sum_prefix(std::string("d\0", 2)), sum_prefix(std::string("r\0", 2))};
}

std::string kv_graph_store::identity() const { return kv_->identity(); }

std::map<std::string, std::uint64_t> kv_graph_store::engine_stats() const { return kv_->engine_stats(); }

void kv_graph_store::visit_logical(const std::function<void(std::string_view)>& family,
                                   const std::function<void(std::string_view, std::string_view)>& pair,
                                   std::string_view organization) const {
  // A snapshot makes the view consistent even while the writer keeps applying.
  const auto snap = kv_->snapshot();
  const std::string org = organization.empty() ? std::string() : std::string(organization) + '\0';
  // One organisation: its range of each data family, and in meta its rows under each
  // per-organisation tag (tag \0 org \0 ..., or "R" \0 org), the tags in key order.
  auto visit_range = [&](std::size_t c, const std::string& prefix, bool exact_too) {
    auto it = kv_->iterate(c, snap.get());
    const std::string_view whole(prefix.data(), prefix.size() - 1);  // without the last '\0'
    for (it->seek(whole); it->valid(); it->next()) {
      auto k = it->key();
      if (exact_too && k == whole) {
        pair(k, it->value());
        continue;
      }
      if (!k.starts_with(prefix))
        break;
      pair(k, it->value());
    }
  };
  for (std::size_t c = cf_messages; c < cf_count; ++c) {
    family(cf_names[c]);
    if (!org.empty()) {
      if (c != cf_meta) {
        visit_range(c, org, false);
        continue;
      }
      for (const char* tag : meta_tag::organisation_rows)
        visit_range(c, key(tag, org), std::string_view(tag) == meta_tag::rebuild);
      continue;
    }
    auto it = kv_->iterate(c, snap.get());
    for (it->seek_to_first(); it->valid(); it->next()) {
      auto k = it->key();
      if (c == cf_meta && meta_tag::physical(k.substr(0, k.find('\0'))))
        continue;  // physical: delivery positions, redelivery counts, accepted gaps, the layout version
      pair(k, it->value());
    }
  }
}

std::string kv_graph_store::digest(std::string_view organization) const {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  auto feed = [&](std::string_view s) {
    auto len = encode_u64(s.size());
    EVP_DigestUpdate(ctx.get(), len.data(), len.size());
    EVP_DigestUpdate(ctx.get(), s.data(), s.size());
  };
  visit_logical(
      feed,
      [&](std::string_view k, std::string_view v) {
        feed(k);
        feed(v);
      },
      organization);
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

errc kv_graph_store::init_layout() {
  auto v = kv_->get(cf_meta, meta_tag::layout_version);
  if (!v && v.error() == errc::not_found) {
    kv_batch b;
    b.put(cf_meta, meta_tag::layout_version, layout_version);
    return kv_->write(b);
  }
  if (!v)
    return v.error();
  std::string at = *v;
  if (at == "8") {
    if (auto e = upgrade_from_8(); e != errc::ok)  // deletes rows behind group_counts_ (empty at open)
      return e;
    at = "9";
  }
  if (at == "9")
    return upgrade_from_9();
  return at == layout_version ? errc::ok : errc::invalid_argument;
}

errc kv_graph_store::upgrade_entries(const char* to_layout,
                                     const std::function<errc(kv_batch&, std::string_view, stored_entry&)>& step) {
  constexpr std::size_t ops_per_batch = 10'000;
  kv_batch b;
  auto it = kv_->iterate(cf_entries);
  for (it->seek_to_first(); it->valid(); it->next()) {
    stored_entry d;
    if (knowledge::decode(it->value(), d))
      return errc::corruption;
    if (auto e = step(b, it->key(), d); e != errc::ok)
      return e;
    if (b.ops().size() >= ops_per_batch) {
      if (auto e = kv_->write(b); e != errc::ok)
        return e;
      b.clear();
    }
  }
  if (auto e = it->status(); e != errc::ok)
    return e;
  b.put(cf_meta, meta_tag::layout_version, to_layout);
  return kv_->write(b);
}

errc kv_graph_store::upgrade_from_8() {
  return upgrade_entries("9", [](kv_batch& b, std::string_view, stored_entry& d) {
    if (d.status == knowledge::entry_status::superseded)
      candidate_rows(b, d, false);
    return errc::ok;
  });
}

errc kv_graph_store::upgrade_from_9() {
  return upgrade_entries(layout_version, [](kv_batch& b, std::string_view k, stored_entry& d) {
    if (d.sources.size() <= knowledge::kept_sources)
      return errc::ok;
    const auto parts = split_key(k);  // org, entryId
    if (parts.size() != 2)
      return errc::corruption;
    shed_sources(b, parts[0], parts[1], d);
    b.put(cf_entries, std::string(k), knowledge::encode(d));
    return errc::ok;
  });
}

/// Adds `delta` to a u64 counter in meta. Each counter has one writer (the applier of the
/// partition its organisation or position is on), so counters are cached once read; the new
/// value reaches the cache only when its batch is written.
errc kv_graph_store::bump(write_txn& tx, const std::string& k, std::uint64_t delta) {
  auto pending = tx.counters.find(k);
  std::uint64_t current = 0;
  std::optional<std::uint64_t> cached;
  if (pending == tx.counters.end()) {
    std::lock_guard lock(counters_mutex_);
    if (auto it = counters_.find(k); it != counters_.end())
      cached = it->second;
  }
  if (pending != tx.counters.end()) {
    current = pending->second;
  } else if (cached) {
    current = *cached;
  } else {
    auto v = kv_->get(cf_meta, k);
    if (!v && v.error() != errc::not_found)
      return v.error();
    current = v ? decode_u64(*v) : 0;
  }
  tx.counters[k] = current + delta;
  tx.batch.put(cf_meta, k, encode_u64(current + delta));
  return errc::ok;
}

/// Sets a u64 counter in meta to `value` if that is higher (a sequence's high mark).
errc kv_graph_store::set_counter(write_txn& tx, const std::string& k, std::uint64_t value) {
  std::uint64_t current = 0;
  if (auto e = bump(tx, k, 0); e != errc::ok)
    return e;
  current = tx.counters[k];
  if (value > current) {
    tx.counters[k] = value;
    tx.batch.put(cf_meta, k, encode_u64(value));
  }
  return errc::ok;
}

/// An eventId's first application marks it seen (`seen`, a meta key) in the transaction; a
/// later one counts a duplicate delivered at `pos`'s partition. `first` says which.
errc kv_graph_store::mark_seen(write_txn& tx, const std::string& seen, const log_position& pos, bool* first) {
  auto v = kv_->get(cf_meta, seen);
  *first = !v && v.error() == errc::not_found;
  if (v)
    return bump(tx, redelivery_key(meta_tag::duplicates, pos), 1);
  if (!*first)
    return v.error();
  tx.batch.put(cf_meta, seen, "");
  return errc::ok;
}

/// Writes the batch; on success the counters it changed enter the cache.
errc kv_graph_store::commit(write_txn& tx) {
  std::shared_lock gate(save_gate_);  // a save of the in-memory indexes sees every batch or none
  journal(tx);
  std::unique_lock<std::mutex> marking;
  if (tx.reminder_mark) {
    marking = std::unique_lock(reminder_mark_mutex_);
    const auto mark = key(meta_tag::reminder_offset, encode_u32(tx.reminder_mark->first));
    std::uint64_t have = 0;
    if (auto v = kv_->get(cf_meta, mark))
      have = decode_u64(*v);
    if (tx.reminder_mark->second > have)
      tx.batch.put(cf_meta, mark, encode_u64(tx.reminder_mark->second));
    tx.reminder_mark.reset();
  }
  auto e = kv_->write(tx.batch);
  if (marking)
    marking.unlock();
  if (e != errc::ok)
    group_counts_.clear();  // what the store holds of the batch is not known
  else if (tx.dropped_org)
    group_counts_.drop_organization(tx.org);
  else
    group_counts_.apply(tx.group_deltas);
  tx.group_deltas.clear();
  tell_watchers(tx, e != errc::ok);
  if (e == errc::ok && tx.dropped_org) {
    const auto counters = key(meta_tag::counter, tx.org, "");
    {
      std::lock_guard lock(counters_mutex_);
      std::erase_if(counters_, [&](const auto& kv) { return kv.first.starts_with(counters); });
    }
    entities_.drop(tx.org);
  }
  if (e == errc::ok) {
    {
      std::lock_guard lock(counters_mutex_);
      for (auto& [k, v] : tx.counters)
        counters_[k] = v;
    }
    if (indexes_marked_.load(std::memory_order_acquire))
      note_since_snapshot(tx);
    update_indexes(tx);
    // Entities first (an edge needs both ends), then edges in order, then removals.
    for (const auto& [id, e] : tx.entities)
      entities_.put(tx.org, e);
    for (const auto& c : tx.edges)
      c.add ? entities_.add_edge(tx.org, c.from, c.label, c.to, c.weight)
            : entities_.remove_edge(tx.org, c.from, c.label, c.to);
    for (const auto& id : tx.deleted_entities)
      if (!tx.entities.count(id))
        entities_.remove(tx.org, id);
  }
  tx.counters.clear();
  tx.text.clear();
  tx.passage_text.clear();
  tx.passage_vectors.clear();
  tx.new_passages = 0;
  tx.removed_vectors.clear();
  tx.edges.clear();
  return e;
}

std::shared_ptr<const void> kv_graph_store::watch_entries(entries_watcher fn) const {
  auto held = std::make_shared<const entries_watcher>(std::move(fn));
  std::lock_guard lock(watchers_mutex_);
  watchers_.push_back(held);
  return held;
}

void kv_graph_store::tell_watchers(const write_txn& tx, bool failed) const {
  std::vector<std::shared_ptr<const entries_watcher>> live;
  {
    std::lock_guard lock(watchers_mutex_);
    std::erase_if(watchers_, [](const auto& w) { return w.expired(); });
    for (const auto& w : watchers_)
      if (auto f = w.lock())
        live.push_back(std::move(f));
  }
  if (live.empty())
    return;
  // Read from the batch itself, so that no way of writing an entry is missed.
  std::vector<std::string> ids;
  bool all = failed || tx.dropped_org;
  for (const auto& op : tx.batch.ops()) {
    if (op.cf != cf_entries || all)
      continue;
    auto parts = split_key(op.key);  // org, entryId
    if (op.end || parts.size() != 2)
      all = true;
    else
      ids.push_back(std::move(parts[1]));
  }
  if (ids.empty() && !all)
    return;
  const entries_written w{tx.org, ids, all};
  for (const auto& f : live)
    (*f)(w);
}

void kv_graph_store::update_indexes(write_txn& tx) {
  if (tx.dropped_org) {
    text_.drop(tx.org);
    drop_passage_indexes(tx.org);
  }
  for (const auto& c : tx.text)
    c.add ? text_.add(c.org, c.id, c.doc) : text_.remove(c.org, c.id, c.doc);
  index_passages(tx);
}

/// The last key part of every key under `prefix` (an index's entry ids).
std::vector<std::string> kv_graph_store::ids_under(std::size_t family, const std::string& prefix) const {
  std::vector<std::string> out;
  auto it = kv_->iterate(family);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
    out.emplace_back(it->key().substr(prefix.size()));
  return out;
}

std::vector<std::optional<std::string>> kv_graph_store::read_keys(std::size_t family,
                                                                  std::vector<std::string> keys) const {
  // MultiGet wants its keys sorted: read them so, answer in the order asked.
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<std::string> sorted;
  sorted.reserve(keys.size());
  for (auto i : order)
    sorted.push_back(std::move(keys[i]));
  std::vector<std::optional<std::string>> found, out(sorted.size());
  kv_->multi_get(family, sorted, found);
  for (std::size_t i = 0; i < order.size() && i < found.size(); ++i)
    out[order[i]] = std::move(found[i]);
  return out;
}

std::vector<std::string> kv_graph_store::newest_under(std::size_t family, const std::string& prefix,
                                                      std::size_t limit) const {
  std::vector<std::string> out;
  // Its rows, when known: the read stops at the last instead of walking the tombstones of
  // the group's superseded rows to its end.
  const auto known = group_counts_.find(family, prefix);
  const std::size_t want = known ? static_cast<std::size_t>(std::min<std::uint64_t>(*known, limit)) : limit;
  if (want == 0)
    return out;
  // After every row of the group: the part after it is an RFC 3339 time (its digits, every
  // byte below 0xff), and the target stays in the group for the family's filter.
  const auto past = prefix + '\xff';
  auto it = kv_->iterate_group(family);
  for (it->seek_for_prev(past); it->valid() && it->key().starts_with(prefix); it->prev()) {
    const auto k = it->key();  // ... \0 time \0 entryId; the id is the last part (ids never hold '\0')
    out.emplace_back(k.substr(k.rfind('\0') + 1));
    if (out.size() == want)
      break;  // not one step more: a step back walks every tombstone before the next row
  }
  // Short of `want`, the read reached the group's end: its count (one held was wrong if it
  // said more; it is mended).
  if (out.size() < want && it->status() == errc::ok)
    group_counts_.remember(family, prefix, out.size());
  return out;
}

std::uint64_t kv_graph_store::sum_prefix(const std::string& prefix) const {
  std::uint64_t total = 0;
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
    total += decode_u64(it->value());
  return total;
}

/// Folds a duplicate into the entry it duplicates (docs/extraction.md): content combined,
/// confidence raised by noisy-or, contacts, sources and entities united, the newer
/// timestamp kept.
void kv_graph_store::put_offset(write_txn& tx, const log_position& pos) {
  if (!pos.advance)
    return;
  tx.batch.put(cf_meta, key(meta_tag::offset, pos.topic, encode_u32(static_cast<std::uint32_t>(pos.partition))),
               encode_u64(static_cast<std::uint64_t>(pos.offset + 1)) + pos.cluster_id);
}

/// Subtracts `delta` from a u64 counter (never below 0).
errc kv_graph_store::drop(write_txn& tx, const std::string& k, std::uint64_t delta) {
  if (auto e = bump(tx, k, 0); e != errc::ok)
    return e;
  auto& current = tx.counters[k];
  current = current > delta ? current - delta : 0;
  tx.batch.put(cf_meta, k, encode_u64(current));
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
    case errc::no_space: return "no_space";
  }
  return "unknown";
}

engram::result<std::unique_ptr<graph_store>> open_graph_store(const open_options& opts) {
  // Compactions wait for the end of the open (or for start_compactions): at a million
  // entries, those the writes before a crash left pending took a third of the CPU of the
  // loads below (docs/benchmarks.md).
  auto kv = detail::open_rocks_kv(opts, /*compactions_paused=*/!opts.read_only);
  if (!kv)
    return fail(kv.error());
  auto store = std::make_unique<detail::kv_graph_store>(std::move(*kv), opts.reserved_tool_names);
  if (!opts.read_only) {
    if (auto e = store->init_layout(); e == errc::invalid_argument)
      return fail("store at '" + opts.path + "' was written with another layout than this build's (" +
                  std::string(detail::layout_version) + "): rebuild it from engram-log with engramctl replay");
    else if (e != errc::ok)
      return fail("store at '" + opts.path + "': cannot read or upgrade its layout (" + to_string(e) + ")");
  }
  if (auto e = store->open_indexes(opts.path + "/indexes", !opts.read_only); e != errc::ok)
    return fail("store at '" + opts.path + "': cannot read its text and passage indexes (" + to_string(e) + ")");
  if (auto e = store->load_entity_index(); e != errc::ok)
    return fail("store at '" + opts.path + "': cannot read its entities (" + to_string(e) + ")");
  if (!opts.read_only && !opts.defer_compactions)
    if (auto e = store->start_compactions(); e != errc::ok)
      return fail("store at '" + opts.path + "': cannot start its compactions (" + to_string(e) + ")");
  return std::unique_ptr<graph_store>(std::move(store));
}

std::unique_ptr<graph_store> make_memory_graph_store(std::set<std::string> reserved_tool_names) {
  auto store = std::make_unique<detail::kv_graph_store>(detail::make_memory_kv(), std::move(reserved_tool_names));
  if (store->init_layout() != errc::ok)
    return nullptr;  // cannot happen: a new memory store is empty
  return store;
}

}  // namespace engram::storage
