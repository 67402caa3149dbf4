// Knowledge commands (validate, resolve_review, discard/merge branch, expire, reminder_sent)
// and what the timers and the review queue read.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

errc kv_graph_store::apply_once(const log_position& pos, const std::string& org, const std::string& event_id,
                                apply_outcome* outcome, const std::function<errc(write_txn&, std::string&)>& run) {
  write_txn tx;
  tx.org = org;
  apply_outcome how = apply_outcome::applied;
  const auto seen = key(meta_tag::seen, org, event_id);
  bool first = false;
  if (auto e = mark_seen(tx, seen, pos, &first); e != errc::ok)
    return e;
  if (!first) {
    how = apply_outcome::duplicate;
  } else {
    std::string rejected;
    if (auto e = run(tx, rejected); e != errc::ok)
      return e;
    if (!rejected.empty())  // nothing changes but the seen eventId and the offset
      reject(tx, seen);
  }
  put_offset(tx, pos);
  if (auto e = commit(tx); e != errc::ok)
    return e;
  if (outcome)
    *outcome = how;
  return errc::ok;
}

errc kv_graph_store::apply_command(const log_position& pos, const schemas::knowledge_command& c, command_result* result,
                                   apply_outcome* outcome) {
  command_result r;
  const auto& org = c.organization_id;
  auto e = apply_once(pos, org, c.event_id, outcome, [&](write_txn& tx, std::string& rejected) {
    errc e = errc::ok;
    switch (c.op) {
      case schemas::command_op::validate: e = validate(tx, c, r); break;
      case schemas::command_op::resolve_review: e = resolve_review(tx, c, r); break;
      case schemas::command_op::merge_branch:
      case schemas::command_op::discard_branch: e = drop_branch(tx, org, c.branch_id, &r.dropped_saves); break;
      case schemas::command_op::expire: e = expire(tx, c, r); break;
      case schemas::command_op::reminder_sent: e = reminder_sent(tx, c, r); break;
      case schemas::command_op::chunk_failed: e = chunk_failed(tx, c); break;
      case schemas::command_op::forget: e = forget(tx, c, r); break;
    }
    if (e != errc::ok)
      return e;
    rejected = r.error;
    if (rejected.empty()) {
      put_entries(tx, org);
      for (const auto& [id, doc] : tx.entries)
        r.entries.push_back(knowledge::to_json(doc).dump());
    }
    return errc::ok;
  });
  // What a forget deleted leaves the disk before it is answered: the organisation's ranges of
  // every family are compacted (RocksDB keeps deleted values in older files until then); in a
  // rebuild, once at its end.
  if (e == errc::ok && c.op == schemas::command_op::forget && r.error.empty() && !rebuilding(org) &&
      (!outcome || *outcome == apply_outcome::applied))
    e = compact_organization(org);
  if (e == errc::ok && result)
    *result = std::move(r);
  return e;
}

errc kv_graph_store::compact_organization(const std::string& org) {
  // Not the audit and forget-mark rows (f, x, X): a forget keeps them.
  return compact_ranges(org, org, meta_tag::organisation_state, nullptr);
}

errc kv_graph_store::compact_ranges(const std::string& first, const std::string& last,
                                    std::span<const char* const> meta_tags, const std::atomic<bool>* cancel) {
  // Every memtable first: the write-ahead logs holding the values deleted are then deleted
  // too, and the memtables' range tombstones go to files the compaction reaches.
  if (auto e = kv_->flush(); e != errc::ok)
    return e;
  errc failed = errc::ok;
  organization_ranges(first, last, meta_tags, [&](std::size_t f, const std::string& b, const std::string& e) {
    if (failed == errc::ok)
      failed = kv_->compact(f, b, e, cancel);
  });
  return failed;
}

void kv_graph_store::reject(write_txn& tx, const std::string& seen) {
  tx.batch.clear();
  tx.counters.clear();
  tx.group_deltas.clear();
  tx.entries.clear();
  tx.entities.clear();
  tx.deleted_entities.clear();
  tx.edges.clear();
  tx.text.clear();
  tx.passage_text.clear();
  tx.passage_vectors.clear();
  tx.new_passages = 0;
  tx.removed_passage_vectors.clear();
  tx.removed_passages = 0;
  tx.removed.clear();
  tx.removed_vectors.clear();
  tx.dropped_org = false;
  tx.batch.put(cf_meta, seen, "");
}

std::vector<std::pair<std::string, std::string>> kv_graph_store::review_queue(const std::string& org,
                                                                              std::size_t limit) const {
  std::vector<std::pair<std::string, std::string>> out;
  const auto prefix = key(org, "");
  auto it = kv_->iterate(cf_review);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix) && out.size() < limit; it->next())
    out.emplace_back(std::string(it->key().substr(prefix.size())), std::string(it->value()));
  return out;
}

std::vector<due_item> kv_graph_store::due_reminders(std::int64_t until_ms, std::size_t limit) const {
  std::vector<due_item> out;
  auto it = kv_->iterate(cf_due);
  for (it->seek_to_first(); it->valid() && out.size() < limit; it->next()) {
    auto k = it->key();
    auto a = k.find('\0');
    if (a == std::string_view::npos || k.size() < a + 1 + 8 + 1)
      continue;
    const auto org = std::string(k.substr(0, a));
    const auto ms = static_cast<std::int64_t>(decode_u64(k.substr(a + 1, 8)));
    if (ms > until_ms) {  // the rest of this organisation is later: skip to the next one
      it->seek(org + '\x01');
      if (!it->valid())
        break;
      it->prev();
      continue;
    }
    out.push_back({org, std::string(k.substr(a + 1 + 8 + 1)), ms});
  }
  return out;
}

bool kv_graph_store::has_expired(const std::string& org, std::int64_t now_ms, std::int64_t ttl_ms) const {
  const auto prefix = key(org, "");
  auto it = kv_->iterate(cf_expiry);
  it->seek(prefix);
  if (it->valid() && it->key().starts_with(prefix) &&
      static_cast<std::int64_t>(decode_u64(it->key().substr(prefix.size(), 8))) <= now_ms)
    return true;
  const auto branches = key(meta_tag::branch, org, "");
  auto b = kv_->iterate(cf_meta);
  for (b->seek(branches); b->valid() && b->key().starts_with(branches); b->next())
    if (static_cast<std::int64_t>(decode_u64(b->value().substr(8))) + ttl_ms < now_ms)
      return true;
  return false;
}

std::map<std::int32_t, std::int64_t> kv_graph_store::reminder_marks() const {
  std::map<std::int32_t, std::int64_t> out;
  const std::string prefix("m\0", 2);
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
    out[static_cast<std::int32_t>(decode_u32(it->key().substr(prefix.size())))] =
        static_cast<std::int64_t>(decode_u64(it->value()));
  return out;
}

errc kv_graph_store::validate(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  stored_entry* doc = nullptr;
  if (auto e = load_entry(tx, c.organization_id, c.id, &doc); e != errc::ok)
    return e == errc::not_found ? (r.error = "id: no entry '" + c.id + "' in this organisation", errc::ok) : e;
  knowledge::validate(*doc, c.outcome, c.issued_at, c.issued_by);
  return errc::ok;
}

errc kv_graph_store::resolve_review(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  const auto& org = c.organization_id;
  stored_entry* older = nullptr;
  if (auto e = load_entry(tx, org, c.id, &older); e != errc::ok)
    return e == errc::not_found ? (r.error = "id: no entry '" + c.id + "' in this organisation", errc::ok) : e;
  const auto newer_id = knowledge::awaiting_review(*older);
  stored_entry* newer = nullptr;
  if (newer_id)
    if (auto e = load_entry(tx, org, *newer_id, &newer); e != errc::ok && e != errc::not_found)
      return e;  // a newer entry since expired leaves older alone to decide
  const auto outcome = knowledge::resolve_review(*older, newer, c.keep, c.issued_at, c.issued_by);
  if (outcome.error) {
    r.error = *outcome.error;
    return errc::ok;
  }
  tx.batch.del(cf_review, key(org, c.id));
  if (outcome.superseded)
    drop_due_row(tx, *outcome.superseded);
  return errc::ok;
}

errc kv_graph_store::reminder_sent(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  (void)r;
  const auto& org = c.organization_id;
  if (c.reminder_offset >= 0) {
    const auto partition = static_cast<std::uint32_t>(c.reminder_partition);
    const auto next = static_cast<std::uint64_t>(c.reminder_offset + 1);
    if (!tx.reminder_mark || tx.reminder_mark->first != partition || tx.reminder_mark->second < next)
      tx.reminder_mark = {partition, next};
  }
  stored_entry* doc = nullptr;
  if (auto e = load_entry(tx, org, c.id, &doc); e != errc::ok)
    return e == errc::not_found ? errc::ok : e;  // removed since: the mark is all that is left to record
  if (knowledge::record_reminder(*doc, c.reminder_id, c.issued_at))
    drop_due_row(tx, *doc);
  return errc::ok;
}

/// A document chunk the sequencer refused: failed, with the reason, unless a good copy of
/// the chunk was applied (a done status stays; a later good copy overwrites a failed one).
errc kv_graph_store::chunk_failed(write_txn& tx, const schemas::knowledge_command& c) {
  const auto k = key(meta_tag::chunk, c.organization_id, c.id, encode_u64(static_cast<std::uint64_t>(c.chunk)));
  auto have = kv_->get(cf_meta, k);
  if (!have && have.error() != errc::not_found)
    return have.error();
  if (have && json::parse(*have, nullptr, false).value("status", std::string()) == "done")
    return errc::ok;
  json status{{"title", c.title},      {"chunk", c.chunk},   {"chunks", c.chunks},
              {"eventId", c.event_id}, {"status", "failed"}, {"error", c.reason}};
  tx.batch.put(cf_meta, k, status.dump());
  return errc::ok;
}

/// Removes up to c.limit entries whose expiresAt <= issuedAt, every index row of theirs,
/// and the saves of branches idle since before issuedAt - ttlMs.
errc kv_graph_store::expire(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  const auto& org = c.organization_id;
  const auto prefix = key(org, "");
  std::vector<std::string> ids;
  {
    auto it = kv_->iterate(cf_expiry);
    for (it->seek(prefix);
         it->valid() && it->key().starts_with(prefix) && ids.size() < static_cast<std::size_t>(c.limit); it->next()) {
      auto k = it->key().substr(prefix.size());
      if (static_cast<std::int64_t>(decode_u64(k.substr(0, 8))) > c.issued_at_ms)
        break;
      ids.emplace_back(k.substr(9));
      tx.batch.del(cf_expiry, it->key());
    }
  }
  std::uint64_t relation_count = 0;
  for (const auto& id : ids) {
    std::uint64_t seq = 0;
    if (auto e = remove_entry(tx, org, id, &seq, &relation_count); e != errc::ok)
      return e;
    r.removed.emplace_back(id, seq);
  }
  if (!ids.empty())
    if (auto e = drop(tx, key(meta_tag::counter, org, "entries"), ids.size()); e != errc::ok)
      return e;
  if (relation_count)
    if (auto e = drop(tx, key(meta_tag::counter, org, "relations"), relation_count); e != errc::ok)
      return e;
  std::vector<std::string> idle;
  const auto branches = key(meta_tag::branch, org, "");
  auto b = kv_->iterate(cf_meta);
  for (b->seek(branches); b->valid() && b->key().starts_with(branches); b->next())
    if (static_cast<std::int64_t>(decode_u64(b->value().substr(8))) + c.ttl_ms < c.issued_at_ms)
      idle.emplace_back(b->key().substr(branches.size()));
  for (const auto& branch : idle)
    if (auto e = drop_branch(tx, org, branch, &r.dropped_saves); e != errc::ok)
      return e;
  return errc::ok;
}

}  // namespace engram::storage::detail
