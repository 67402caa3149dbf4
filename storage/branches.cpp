// Branch saves: an agent's speculative saves, kept apart until merged or discarded.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

errc kv_graph_store::apply_branch_save(const log_position& pos, const schemas::knowledge_save& s,
                                       const schemas::vector8& embedding, apply_outcome* outcome) {
  write_txn tx;
  const auto& org = s.organization_id;
  tx.org = org;
  apply_outcome result = apply_outcome::applied;
  bool first = false;
  if (auto e = mark_seen(tx, key(meta_tag::seen_save, org, s.event_id), pos, &first); e != errc::ok)
    return e;
  if (!first) {
    result = apply_outcome::duplicate;
  } else {
    const auto state_key = key(meta_tag::branch, org, s.branch_id);
    std::uint64_t seq = 0;
    auto state = kv_->get(cf_meta, state_key);
    if (!state && state.error() != errc::not_found)
      return state.error();
    if (state) {
      const std::string& v = *state;
      seq = decode_u64(v);
      const auto last = static_cast<std::int64_t>(decode_u64(std::string_view(v).substr(8)));
      if (last + s.branch_ttl_ms < s.saved_at_ms) {  // abandoned: its saves are gone, a new life starts
        std::size_t dropped = 0;
        if (auto e = drop_branch(tx, org, s.branch_id, &dropped); e != errc::ok)
          return e;
      }
    }
    ++seq;
    auto kept = s;
    kept.embedding = {};  // stored once, after the JSON
    const auto doc = schemas::to_json(kept);
    std::string value = encode_u32(static_cast<std::uint32_t>(doc.size())) + doc;
    if (!embedding.empty())
      value += schemas::to_bytes(embedding);
    tx.batch.put(cf_branches, key(org, s.branch_id, encode_u64(seq)), value);
    tx.batch.put(cf_meta, state_key, encode_u64(seq) + encode_u64(static_cast<std::uint64_t>(s.saved_at_ms)));
  }
  put_offset(tx, pos);
  if (auto e = commit(tx); e != errc::ok)
    return e;
  if (outcome)
    *outcome = result;
  return errc::ok;
}

std::vector<branch_save> kv_graph_store::branch_saves(const std::string& org, const std::string& branch,
                                                      std::int64_t* last_save_ms) const {
  std::vector<branch_save> out;
  *last_save_ms = 0;
  if (auto v = kv_->get(cf_meta, key(meta_tag::branch, org, branch)); v && v->size() >= 16)
    *last_save_ms = static_cast<std::int64_t>(decode_u64(std::string_view(*v).substr(8)));
  const auto prefix = key(org, branch, "");
  auto it = kv_->iterate(cf_branches);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto val = it->value();
    branch_save b;
    b.seq = decode_u64(it->key().substr(prefix.size()));
    const auto n = decode_u32(val);
    b.save_json = std::string(val.substr(4, n));
    auto rest = val.substr(4 + n);
    if (auto v = schemas::from_bytes(rest))
      b.embedding = std::move(*v);
    out.push_back(std::move(b));
  }
  return out;
}

/// Deletes a branch's saves and its state.
errc kv_graph_store::drop_branch(write_txn& tx, const std::string& org, const std::string& branch, std::size_t* n) {
  const auto prefix = key(org, branch, "");
  auto it = kv_->iterate(cf_branches);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    tx.batch.del(cf_branches, it->key());
    ++*n;
  }
  tx.batch.del(cf_meta, key(meta_tag::branch, org, branch));
  return it->status();
}

}  // namespace engram::storage::detail
