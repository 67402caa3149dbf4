// Messages, contacts, people and organisations: what a message adds besides its entries.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

result<std::string> kv_graph_store::get_message(const std::string& org, const std::string& event_id) const {
  return kv_->get(cf_messages, key(org, event_id));
}

result<std::string> kv_graph_store::get_contact(const std::string& org, const std::string& address) const {
  return kv_->get(cf_entities, key(org, person_id(address)));
}

std::vector<std::string> kv_graph_store::thread_messages(const std::string& org, const std::string& thread) const {
  std::vector<std::string> out;
  auto prefix = key(org, thread, "message", "");
  auto it = kv_->iterate(cf_by_thread);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
    out.emplace_back(it->key().substr(prefix.size()));
  return out;
}

result<std::string> kv_graph_store::find_entity(const std::string& org, const std::string& name) const {
  auto id = resolve_name(nullptr, org, normalise_name(name), "");
  if (id.empty())
    return failure{errc::not_found};
  return kv_->get(cf_entities, key(org, id));
}

result<bool> kv_graph_store::seen(const std::string& org, const std::string& event_id) const {
  auto v = kv_->get(cf_meta, key(meta_tag::seen, org, event_id));
  if (v)
    return true;
  if (v.error() == errc::not_found)
    return false;
  return failure{v.error()};
}

errc kv_graph_store::put_message(write_txn& tx, const schemas::inbound_message& m) {
  const auto& org = m.organization_id;
  tx.batch.put(cf_messages, key(org, m.event_id), schemas::to_json(m));
  const auto& thread = m.thread_or_event();
  tx.batch.put(cf_by_thread, key(org, thread, "message", m.event_id), m.sent_at);

  // Each address once per message; the first role (from, to, cc) wins.
  std::vector<std::pair<const schemas::participant*, const char*>> people;
  std::set<std::string> addresses;
  auto add = [&](const schemas::participant& p, const char* role) {
    if (addresses.insert(lower_ascii(p.address)).second)
      people.emplace_back(&p, role);
  };
  // An agent's save names no mail participants; a document's "from" is where it came from.
  if (m.source != schemas::source_type::manual && m.source != schemas::source_type::file)
    add(m.from, "from");
  for (const auto& p : m.to)
    add(p, "to");
  for (const auto& p : m.cc)
    add(p, "cc");

  std::set<std::string> contact_ids(m.contact_ids.begin(), m.contact_ids.end());
  std::uint64_t new_contacts = 0;
  for (const auto& [p, role] : people) {
    auto id = person_id(p->address);
    stored_entity* e = nullptr;
    if (auto err = load_entity(tx, org, id, &e); err != errc::ok)
      return err;
    const bool created = !e;
    if (created) {
      ++new_contacts;
      e = &(tx.entities[id] = new_entity(id, "person", p->name, m.sent_at));
      e->address = lower_ascii(p->address);
      tx.batch.put(cf_entity_names, key(org, lower_ascii(p->address), id), "");
    }
    if (!p->name.empty()) {
      bool known = e->name == p->name || std::find(e->aliases.begin(), e->aliases.end(), p->name) != e->aliases.end();
      if (e->name.empty())
        e->name = p->name;
      else if (!known)
        e->aliases.push_back(p->name);
      if (created || !known)  // a known name is indexed already
        put_name_keys(tx, org, p->name, id);
      tx.names[key(org, normalise_name(p->name))] = id;
    }
    if (!p->contact_id.empty()) {
      e->contact_id = p->contact_id;
      contact_ids.insert(p->contact_id);
    }
    e->last_seen_at = m.sent_at;
    ++e->messages;
    tx.batch.put(cf_entities, key(org, id), knowledge::encode(*e));
    tx.batch.put(cf_links, key(org, id, "message", m.event_id), role);
    tx.batch.put(cf_links, key(org, id, "thread", thread), "");
  }
  for (const auto& c : contact_ids)
    tx.batch.put(cf_by_contact, key(org, c, "message", m.event_id), "");

  if (auto e = bump(tx, key(meta_tag::counter, org, "events"), 1); e != errc::ok)
    return e;
  if (new_contacts)
    for (const char* counter : {"contacts", "entities"})
      if (auto e = bump(tx, key(meta_tag::counter, org, counter), new_contacts); e != errc::ok)
        return e;
  return errc::ok;
}

/// The entity id an exact normalised name (or address) resolves to, preferring ids that
/// start with `kind_prefix`; "" when none. Names written earlier by the event being applied
/// are seen through `tx` (null for readers).
std::string kv_graph_store::resolve_name(const write_txn* tx, const std::string& org, const std::string& norm,
                                         std::string_view kind_prefix) const {
  if (tx)
    if (auto it = tx->names.find(key(org, norm));
        it != tx->names.end() && (kind_prefix.empty() || it->second.rfind(kind_prefix, 0) == 0))
      return it->second;
  auto prefix = key(org, norm, "");
  auto it = kv_->iterate(cf_entity_names);
  std::string any;
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    std::string id(it->key().substr(prefix.size()));
    if (kind_prefix.empty() || id.rfind(kind_prefix, 0) == 0)
      return id;
    if (any.empty())
      any = id;
  }
  return kind_prefix.empty() ? any : std::string();
}

/// Loads an entity for update: from this batch if written in it, else from the store.
errc kv_graph_store::load_entity(write_txn& tx, const std::string& org, const std::string& id, stored_entity** out) {
  *out = nullptr;
  if (auto it = tx.entities.find(id); it != tx.entities.end()) {
    *out = &it->second;
    return errc::ok;
  }
  auto v = kv_->get(cf_entities, key(org, id));
  if (!v)
    return v.error() == errc::not_found ? errc::ok : v.error();
  stored_entity e;
  if (knowledge::decode(*v, e))
    return errc::corruption;
  *out = &(tx.entities[id] = std::move(e));
  return errc::ok;
}

}  // namespace engram::storage::detail
