// Forget commands (docs/forgetting.md): the store becomes what it would be had the forgotten
// records never been applied. Applied in log order like every command, so a replay of the
// log forgets the same.
#include "storage/internal/graph_store_impl.hpp"

#include <nlohmann/json.hpp>

namespace engram::storage::detail {

namespace {

/// The keys under `prefix` in `family`, deleted in `tx`; how many.
std::uint64_t delete_prefix(kv& store, write_txn& tx, cf family, const std::string& prefix) {
  std::uint64_t n = 0;
  auto it = store.iterate(family);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    tx.batch.del(family, it->key());
    ++n;
  }
  return n;
}

}  // namespace

std::vector<std::string> kv_graph_store::forget_audit(const std::string& org) const {
  std::vector<std::string> out;
  const auto prefix = key("f", org, "");
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
    out.emplace_back(it->value());
  return out;
}

errc kv_graph_store::forget(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  const auto& org = c.organization_id;
  // The audit row (meta "f", organisation, issuedAt, eventId): kept through any forget, the
  // organisation's own included; rejected forgets write none (reject() clears the batch).
  tx.batch.put(
      cf_meta, key("f", org, c.issued_at, c.event_id),
      nlohmann::json{
          {"eventId", c.event_id}, {"issuedAt", c.issued_at}, {"issuedBy", c.issued_by}, {"what", c.what}, {"id", c.id}}
          .dump());
  if (c.what == "organization") {
    if (c.id != org) {
      r.error = "id: an organisation forgets only itself ('" + org + "'), not '" + c.id + "'";
      return errc::ok;
    }
    // Every row under the organisation's prefix, in every family; in meta, the rows whose
    // second part is the organisation (seen events, branch state, document chunks, counters).
    const auto prefix = key(org, "");
    for (std::size_t f = cf_messages; f < cf_count; ++f) {
      if (f == cf_meta)
        continue;
      const auto n = delete_prefix(*kv_, tx, static_cast<cf>(f), prefix);
      if (f == cf_messages)
        r.forgotten["messages"] = n;
      else if (f == cf_entries)
        r.forgotten["entries"] = n;
      else if (f == cf_entities)
        r.forgotten["entities"] = n;
      else if (f == cf_entity_edges)
        r.forgotten["entityRelations"] = n;
    }
    {  // counted (the family's rows are deleted above)
      std::uint64_t n = 0;
      const auto p = key(org, "p", "");
      auto it = kv_->iterate(cf_passages);
      for (it->seek(p); it->valid() && it->key().starts_with(p); it->next())
        ++n;
      r.forgotten["passages"] = tx.dropped_passages = n;
    }
    for (const char* part : {"s", "S", "b", "c", "n"})
      delete_prefix(*kv_, tx, cf_meta, key(part, org, ""));
    // The command's own seen row stays (the batch wrote it before this ran), so a redelivery
    // of this forget is a duplicate.
    tx.batch.put(cf_meta, key("s", org, c.event_id), "");
    tx.dropped_org = true;
    r.organization_forgotten = true;
    return errc::ok;
  }
  // One entry: its rows (remove_entry), its expiry row, and what it did to other entries: an
  // entry it superseded is active again, one it flagged for review is no longer flagged.
  stored_entry* doc = nullptr;
  if (auto e = load_entry(tx, org, c.id, &doc); e != errc::ok) {
    if (e != errc::not_found)
      return e;
    r.error = "id: no entry '" + c.id + "' in this organisation";
    return errc::ok;
  }
  const stored_entry d = *doc;
  if (!d.expires_at.empty())
    if (auto ms = due_ms(d.expires_at))
      tx.batch.del(cf_expiry, key(org, encode_u64(static_cast<std::uint64_t>(*ms)), c.id));
  std::uint64_t seq = 0, relations = 0;
  if (auto e = remove_entry(tx, org, c.id, &seq, &relations); e != errc::ok)
    return e;
  r.removed.emplace_back(c.id, seq);
  std::uint64_t restored = 0;
  for (const auto& rel : d.relations) {
    const auto& other = rel.to_id.empty() ? rel.from_id : rel.to_id;
    if (other.empty() || other == c.id)
      continue;
    stored_entry* o = nullptr;
    if (auto e = load_if_present(tx, org, other, &o); e != errc::ok)
      return e;
    if (!o)
      continue;
    bool changed = false;
    if (o->superseded_by == c.id) {
      o->superseded_by.clear();
      o->status = knowledge::entry_status::active;
      changed = true;
    }
    if (o->review && o->review->contradicted_by == c.id) {
      o->review.reset();
      if (o->status == knowledge::entry_status::flagged)
        o->status = knowledge::entry_status::active;
      tx.batch.del(cf_review, key(org, other));
      changed = true;
    }
    restored += changed;
  }
  if (auto e = drop(tx, key("n", org, "entries"), 1); e != errc::ok)
    return e;
  if (relations)
    if (auto e = drop(tx, key("n", org, "relations"), relations); e != errc::ok)
      return e;
  r.forgotten["entries"] = 1;
  r.forgotten["relations"] = relations;
  r.forgotten["restored"] = restored;
  return errc::ok;
}

}  // namespace engram::storage::detail
