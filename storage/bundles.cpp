// Knowledge bundles (docs/bundles.md; records: schemas/kg_bundle.hpp): an apply's chunks are
// staged in cf_kg until the last one has arrived, then the new version replaces the old one
// in one batch (entities, the filter index, the header), so a reader sees one version whole.
// Tool names are checked here, in log order, so a replay refuses the same applies.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

namespace {

std::string status_json(const schemas::kg_command& c, const char* state, std::size_t received, std::size_t entities,
                        const std::string& error) {
  json j{{"bundle", c.bundle}, {"applyId", c.apply_id}, {"state", state},       {"chunksReceived", received},
         {"chunks", c.chunks}, {"entities", entities},  {"version", c.version}, {"eventId", c.event_id}};
  if (!error.empty())
    j["error"] = error;
  return j.dump();
}

/// Every value an indexed field holds: a scalar, or each scalar of an array.
std::vector<std::string> index_values(const json& v) {
  std::vector<std::string> out;
  auto one = [&](const json& x) {
    if (x.is_string())
      out.push_back(x.get<std::string>());
    else if (x.is_primitive() && !x.is_null())
      out.push_back(x.dump());
  };
  if (v.is_array())
    for (const auto& x : v)
      one(x);
  else
    one(v);
  return out;
}

/// An apply's chunks by number; a bundle's types by name.
using chunk_map = std::map<std::uint32_t, schemas::kg_command>;
using type_map = std::map<std::string, const schemas::kg_type_spec*>;

/// The first tool name of the new version that another bundle of the organisation or the
/// server itself already exposes, as a refusal; nullopt when every name is its own.
std::optional<std::string> tool_name_collision(const std::vector<kg_bundle_info>& bundles, const std::string& bundle,
                                               const schemas::kg_command& head, const std::set<std::string>& reserved) {
  std::map<std::string, std::string> taken;  // tool -> bundle
  for (const auto& b : bundles)
    if (b.name != bundle)
      for (const auto& t : b.types)
        for (const auto& name : schemas::kg_tool_names(t))
          taken.emplace(name, b.name);
  for (const auto& t : head.types) {
    for (const auto& name : schemas::kg_tool_names(t)) {
      if (auto x = taken.find(name); x != taken.end())
        return "tool_name_collision_in_tenant: " + name + " is already exposed by bundle '" + x->second +
               "' of this organisation";
      if (reserved.count(name))
        return "tool_name_collision_in_tenant: " + name + " is a tool of the server itself";
    }
  }
  return std::nullopt;
}

/// The first entity of an undeclared type, or the first that appears twice, as a refusal;
/// `seen` gets each (type, id).
std::optional<std::string> item_problem(const chunk_map& chunks, const type_map& types,
                                        std::set<std::pair<std::string, std::string>>& seen) {
  for (const auto& [n, c] : chunks)
    for (const auto& item : c.items)
      if (!types.count(item.type))
        return "entity '" + item.id + "' of chunk " + std::to_string(n) + " has type '" + item.type +
               "', which the bundle does not declare";
  for (const auto& [n, c] : chunks)
    for (const auto& item : c.items)
      if (!seen.emplace(item.type, item.id).second)
        return "entity '" + item.id + "' of type '" + item.type + "' appears twice";
  return std::nullopt;
}

/// Writes the new version's entities and their filter index rows; the count of each type.
std::map<std::string, std::uint64_t> put_items(write_txn& tx, const std::string& org, const std::string& bundle,
                                               const schemas::kg_command& head, const chunk_map& chunks,
                                               const type_map& types) {
  std::map<std::string, std::uint64_t> counts;
  for (const auto& t : head.types)
    counts[t.name] = 0;
  for (const auto& [n, c] : chunks)
    for (const auto& item : c.items) {
      ++counts[item.type];
      tx.batch.put(cf_kg, key(org, "e", bundle, item.type, item.id), item.data);
      const auto& t = *types.at(item.type);
      if (t.indexed.empty())
        continue;
      auto data = json::parse(item.data, nullptr, false);
      for (const auto& field : t.indexed)
        if (data.is_object() && data.contains(field))
          for (const auto& v : index_values(data[field]))
            tx.batch.put(cf_kg_index, key(org, bundle, item.type, field, v, item.id), "");
    }
  return counts;
}

/// The version's header: the first chunk without items, when it was applied, its counts.
void put_header(write_txn& tx, const schemas::kg_command& head, const schemas::kg_command& last,
                const std::map<std::string, std::uint64_t>& counts) {
  schemas::kg_command header = head;
  header.chunk = 0;
  header.chunks = 1;
  header.items.clear();
  auto h = json::parse(schemas::to_json(header));
  h["appliedAt"] = last.issued_at;
  h["counts"] = counts;
  tx.batch.put(cf_kg, key(last.organization_id, "h", last.bundle), h.dump());
}

}  // namespace

errc kv_graph_store::apply_kg_command(const log_position& pos, const schemas::kg_command& c, kg_result* result,
                                      apply_outcome* outcome) {
  kg_result r;
  const auto& org = c.organization_id;
  auto e = apply_once(pos, org, c.event_id, outcome, [&](write_txn& tx, std::string&) -> errc {
    if (c.op == schemas::kg_op::remove) {
      const bool existed = bool(kv_->get(cf_kg, key(org, "h", c.bundle)));
      kg_drop(tx, org, c.bundle);
      r.json = status_json(c, existed ? "deleted" : "absent", 0, 0, "");
      tx.batch.put(cf_kg, key(org, "s", c.bundle), r.json);
      r.changed = existed;
      return errc::ok;
    }
    // Staged chunks of this apply, and this one.
    const auto prefix = key(org, "p", c.bundle, c.apply_id, "");
    std::size_t received = 1;
    auto it = kv_->iterate(cf_kg);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
      received += decode_u32(it->key().substr(prefix.size())) != c.chunk;
    if (received < c.chunks) {
      tx.batch.put(cf_kg, prefix + encode_u32(c.chunk), schemas::to_json(c));
      r.json = status_json(c, "staged", received, 0, "");
      tx.batch.put(cf_kg, key(org, "s", c.bundle), r.json);
      return errc::ok;
    }
    return kg_finalize(tx, c, r);
  });
  if (e == errc::ok && result)
    *result = std::move(r);
  return e;
}

errc kv_graph_store::kg_finalize(write_txn& tx, const schemas::kg_command& last, kg_result& r) {
  const auto& org = last.organization_id;
  // The apply's chunks in order: the staged ones, then the last.
  chunk_map chunks;
  const auto prefix = key(org, "p", last.bundle, last.apply_id, "");
  auto it = kv_->iterate(cf_kg);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    schemas::kg_command c;
    if (auto bad = schemas::decode(it->value(), c))
      return errc::corruption;
    chunks.emplace(c.chunk, std::move(c));
  }
  if (it->status() != errc::ok)
    return it->status();
  chunks.insert_or_assign(last.chunk, last);
  const auto& head = chunks.at(0);
  auto refuse = [&](const std::string& why) {
    for (const auto& [n, c] : chunks)
      tx.batch.del(cf_kg, prefix + encode_u32(n));
    r.error = why;
    r.json = status_json(head, "rejected", chunks.size(), 0, why);
    tx.batch.put(cf_kg, key(org, "s", last.bundle), r.json);
    return errc::ok;
  };
  // Every tool name the new version exposes must be its own in the organisation.
  if (auto why = tool_name_collision(kg_bundles(org), last.bundle, head, reserved_tool_names_))
    return refuse(*why);
  type_map types;
  for (const auto& t : head.types)
    types[t.name] = &t;
  std::set<std::pair<std::string, std::string>> seen;
  if (auto why = item_problem(chunks, types, seen))
    return refuse(*why);
  // The old version goes, the new one comes, in this batch.
  kg_drop(tx, org, last.bundle);
  const auto counts = put_items(tx, org, last.bundle, head, chunks, types);
  put_header(tx, head, last, counts);
  r.json = status_json(head, "applied", chunks.size(), seen.size(), "");
  tx.batch.put(cf_kg, key(org, "s", last.bundle), r.json);
  r.changed = true;
  return errc::ok;
}

void kv_graph_store::kg_drop(write_txn& tx, const std::string& org, const std::string& bundle) {
  for (const auto& p : {key(org, "e", bundle, ""), key(org, "p", bundle, "")}) {
    auto it = kv_->iterate(cf_kg);
    for (it->seek(p); it->valid() && it->key().starts_with(p); it->next())
      tx.batch.del(cf_kg, it->key());
  }
  const auto p = key(org, bundle, "");
  auto it = kv_->iterate(cf_kg_index);
  for (it->seek(p); it->valid() && it->key().starts_with(p); it->next())
    tx.batch.del(cf_kg_index, it->key());
  tx.batch.del(cf_kg, key(org, "h", bundle));
}

std::vector<kg_bundle_info> kv_graph_store::kg_bundles(const std::string& org) const {
  std::vector<kg_bundle_info> out;
  auto read_headers = [&](const std::string& of) {
    const auto p = key(of, "h", "");
    auto it = kv_->iterate(cf_kg);
    for (it->seek(p); it->valid() && it->key().starts_with(p); it->next()) {
      schemas::kg_command head;
      if (schemas::decode(it->value(), head))
        continue;
      kg_bundle_info b;
      b.organization_id = head.organization_id;
      b.name = head.bundle;
      b.version = head.version;
      b.description = head.description;
      b.apply_id = head.apply_id;
      b.types = std::move(head.types);
      auto h = json::parse(it->value(), nullptr, false);
      b.applied_at = h.value("appliedAt", std::string());
      if (h.contains("counts") && h["counts"].is_object())
        for (auto c = h["counts"].begin(); c != h["counts"].end(); ++c)
          b.counts[c.key()] = c.value().get<std::uint64_t>();
      out.push_back(std::move(b));
    }
  };
  if (!org.empty()) {
    read_headers(org);
    return out;
  }
  // Every organisation: its headers, then on to the next organisation's first key.
  auto it = kv_->iterate(cf_kg);
  for (it->seek_to_first(); it->valid();) {
    const auto k = it->key();
    const std::string of(k.substr(0, k.find('\0')));
    read_headers(of);
    it->seek(of + '\x01');
  }
  return out;
}

result<std::string> kv_graph_store::kg_status(const std::string& org, const std::string& bundle) const {
  return kv_->get(cf_kg, key(org, "s", bundle));
}

result<std::string> kv_graph_store::kg_get(const std::string& org, const std::string& bundle, const std::string& type,
                                           const std::string& id) const {
  if (id.find('\0') != std::string::npos)
    return failure{errc::not_found};
  return kv_->get(cf_kg, key(org, "e", bundle, type, id));
}

kg_page kv_graph_store::kg_list(const std::string& org, const std::string& bundle, const std::string& type,
                                const std::vector<std::pair<std::string, std::string>>& filters, std::size_t offset,
                                std::size_t limit, bool with_items) const {
  kg_page page;
  std::vector<std::string> ids;
  if (filters.empty()) {
    const auto p = key(org, "e", bundle, type, "");
    auto it = kv_->iterate(cf_kg);
    for (it->seek(p); it->valid() && it->key().starts_with(p); it->next()) {
      if (page.total >= offset && page.ids.size() < limit) {
        page.ids.emplace_back(it->key().substr(p.size()));
        if (with_items)
          page.items.emplace_back(it->value());
      }
      ++page.total;
    }
    return page;
  }
  // Each filter's ids (sorted by the index), intersected.
  for (std::size_t i = 0; i < filters.size(); ++i) {
    const auto& [field, value] = filters[i];
    if (value.find('\0') != std::string::npos)
      return page;
    std::vector<std::string> these = ids_under(cf_kg_index, key(org, bundle, type, field, value, ""));
    if (i == 0) {
      ids = std::move(these);
    } else {
      std::vector<std::string> both;
      std::set_intersection(ids.begin(), ids.end(), these.begin(), these.end(), std::back_inserter(both));
      ids = std::move(both);
    }
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  page.total = ids.size();
  for (std::size_t i = offset; i < ids.size() && page.ids.size() < limit; ++i)
    page.ids.push_back(ids[i]);
  if (with_items && !page.ids.empty()) {
    std::vector<std::string> keys;
    for (const auto& id : page.ids)
      keys.push_back(key(org, "e", bundle, type, id));
    std::vector<std::optional<std::string>> values;
    kv_->multi_get(cf_kg, keys, values);
    for (auto& v : values)
      page.items.push_back(v ? std::move(*v) : std::string("null"));
  }
  return page;
}

}  // namespace engram::storage::detail
