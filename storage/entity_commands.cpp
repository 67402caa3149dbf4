// The entity graph: entity commands (schemas/entity_command.hpp) applied to the people,
// organisations and other entities the store keeps, their observations and attributes, and
// the labelled edges between them (entity_edges, mirrored in entity_edges_in in the same
// batch). Entities from mail and from tools are one set of nodes: a name resolves through
// entity_names whoever wrote it.
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

std::vector<std::string> split_key(std::string_view k) {
  std::vector<std::string> out;
  for (std::size_t at = 0;;) {
    const auto z = k.find('\0', at);
    out.emplace_back(k.substr(at, z == std::string_view::npos ? std::string_view::npos : z - at));
    if (z == std::string_view::npos)
      return out;
    at = z + 1;
  }
}

std::string edge_value(const entity_edge& e, const std::string& event_id) {
  json j{{"weight", e.weight}, {"createdAt", e.created_at}, {"eventId", event_id}};
  j["attributes"] = json(e.attributes);
  return j.dump();
}

entity_edge parse_edge(std::string from, std::string label, std::string to, std::string_view value) {
  entity_edge e{std::move(from), std::move(to), std::move(label)};
  auto j = json::parse(value, nullptr, false);
  if (j.is_object()) {
    e.weight = j.value("weight", 1.0);
    e.created_at = j.value("createdAt", std::string());
    if (j.contains("attributes") && j["attributes"].is_object())
      for (auto it = j["attributes"].begin(); it != j["attributes"].end(); ++it)
        if (it.value().is_string())
          e.attributes[it.key()] = it.value().get<std::string>();
  }
  return e;
}

namespace {

/// The id an entity of this type gets when a tool creates it: people and organisations
/// share the id space extraction uses, so mail and tools meet on one node.
std::string new_entity_id(const std::string& type_key, const std::string& norm) {
  if (type_key == "person")
    return "person:~" + norm;
  if (type_key == "company" || type_key == "organization" || type_key == "organisation" || type_key == "org")
    return "org:" + norm;
  return "entity:" + norm;
}

const char* kind_of_type(const std::string& type_key) {
  if (type_key == "person")
    return "person";
  if (type_key == "company" || type_key == "organization" || type_key == "organisation" || type_key == "org")
    return "organization";
  return "entity";
}

/// Splits a key under `prefix` into its remaining two parts (label, other end).
std::pair<std::string, std::string> rest_of(std::string_view k, std::size_t prefix) {
  auto rest = k.substr(prefix);
  auto z = rest.find('\0');
  if (z == std::string_view::npos)
    return {std::string(rest), {}};
  return {std::string(rest.substr(0, z)), std::string(rest.substr(z + 1))};
}

}  // namespace

/// One entity command's work on a write_txn: reads see the command's own writes.
class kv_graph_store::entity_writer {
public:
  entity_writer(kv_graph_store& s, write_txn& tx, const schemas::entity_command& c)
      : s_(s), tx_(tx), c_(c), org_(c.organization_id) {}

  /// The op's answer (JSON) or, in `error`, why nothing is to change.
  errc run(std::string& answer, std::string& error) {
    switch (c_.op) {
      case schemas::entity_op::add_entities: return add_entities(answer);
      case schemas::entity_op::relate: return relate(answer, error);
      case schemas::entity_op::add_observations: return observations(answer, error, true);
      case schemas::entity_op::delete_observations: return observations(answer, error, false);
      case schemas::entity_op::delete_entities: return delete_entities(answer);
      case schemas::entity_op::delete_relations: return delete_relations(answer);
      case schemas::entity_op::merge_entities: return merge(answer, error);
    }
    return errc::invalid_argument;
  }

private:
  std::string find(const std::string& name) const {
    auto id = s_.resolve_name(&tx_, org_, normalise_name(name), "");
    return tx_.deleted_entities.count(id) ? std::string() : id;
  }
  std::string missing(const std::string& field, const std::string& name) const {
    return field + ": no entity '" + name + "' in this organisation";
  }
  void put(const stored_entity& e) { tx_.batch.put(cf_entities, key(org_, e.id), knowledge::encode(e)); }
  void index_name(const std::string& name, const std::string& id) {
    const auto norm = normalise_name(name);
    tx_.batch.put(cf_entity_names, key(org_, norm, id), "");
    tx_.names[key(org_, norm)] = id;
  }
  void unindex_name(const std::string& name, const std::string& id) {
    const auto norm = normalise_name(name);
    tx_.batch.del(cf_entity_names, key(org_, norm, id));
    if (auto it = tx_.names.find(key(org_, norm)); it != tx_.names.end() && it->second == id)
      tx_.names.erase(it);
  }

  /// Whether (from, label, to) exists, seeing this command's own writes.
  errc edge_exists(const std::string& from, const std::string& label, const std::string& to, bool* out) {
    const auto k = key(org_, from, label, to);
    if (auto it = edges_.find(k); it != edges_.end()) {
      *out = it->second.has_value();
      return errc::ok;
    }
    auto v = s_.kv_->get(cf_entity_edges, k);
    if (!v && v.error() != errc::not_found)
      return v.error();
    *out = static_cast<bool>(v);
    return errc::ok;
  }
  void put_edge(const entity_edge& e) {
    tx_.batch.put(cf_entity_edges, key(org_, e.from_id, e.label, e.to_id), edge_value(e, c_.event_id));
    tx_.batch.put(cf_entity_edges_in, key(org_, e.to_id, e.label, e.from_id), "");
    edges_[key(org_, e.from_id, e.label, e.to_id)] = e;
    tx_.edges.push_back({true, e.from_id, e.label, e.to_id, e.weight});
  }
  void del_edge(const std::string& from, const std::string& label, const std::string& to) {
    tx_.batch.del(cf_entity_edges, key(org_, from, label, to));
    tx_.batch.del(cf_entity_edges_in, key(org_, to, label, from));
    edges_[key(org_, from, label, to)] = std::nullopt;
    tx_.edges.push_back({false, from, label, to, 0});
  }
  /// Every edge leaving (or reaching) `id`, as stored and as this command changed them.
  std::vector<entity_edge> edges_of(const std::string& id, bool outgoing) {
    std::vector<entity_edge> out;
    for (auto& e : s_.entity_edges(org_, id, outgoing))
      if (!edges_.count(key(org_, e.from_id, e.label, e.to_id)))
        out.push_back(std::move(e));
    for (const auto& [k, e] : edges_)
      if (e && (outgoing ? e->from_id : e->to_id) == id)
        out.push_back(*e);
    return out;
  }

  errc add_entities(std::string& answer) {
    json items = json::array();
    for (const auto& spec : c_.entities) {
      const auto norm = normalise_name(spec.name);
      auto id = find(spec.name);
      stored_entity* e = nullptr;
      bool created = false;
      if (!id.empty()) {
        if (auto err = s_.load_entity(tx_, org_, id, &e); err != errc::ok)
          return err;
      }
      if (!e) {
        const auto tk = schemas::type_key(spec.entity_type);
        id = new_entity_id(tk, norm);
        tx_.deleted_entities.erase(id);
        e = &(tx_.entities[id] = knowledge::new_entity(id, kind_of_type(tk), spec.name, c_.issued_at));
        e->entity_type = spec.entity_type;
        index_name(spec.name, id);
        created = true;
        ++created_;
      }
      if (created || c_.merge_existing) {
        if (e->entity_type.empty())
          e->entity_type = spec.entity_type;
        for (const auto& [k, v] : spec.attributes)
          e->attributes[k] = v;
        for (const auto& o : spec.observations)
          if (std::find(e->observations.begin(), e->observations.end(), o) == e->observations.end())
            e->observations.push_back(o);
        put(*e);
      }
      items.push_back({{"id", e->id}, {"name", e->name}, {"created", created}});
    }
    answer = json{{"entities", items}}.dump();
    return created_ ? s_.bump(tx_, key(meta_tag::counter, org_, "entities"), created_) : errc::ok;
  }

  errc relate(std::string& answer, std::string& error) {
    json items = json::array();
    for (std::size_t i = 0; i < c_.relations.size(); ++i) {
      const auto& r = c_.relations[i];
      const auto at = "/relations/" + std::to_string(i);
      const auto from = find(r.from), to = find(r.to);
      if (from.empty()) {
        error = missing(at + "/from", r.from);
        return errc::ok;
      }
      if (to.empty()) {
        error = missing(at + "/to", r.to);
        return errc::ok;
      }
      const auto label = schemas::relation_label(r.relation_type);
      bool exists = false;
      if (auto err = edge_exists(from, label, to, &exists); err != errc::ok)
        return err;
      if (!exists)
        put_edge(entity_edge{from, to, label, r.weight, r.attributes, c_.issued_at});
      items.push_back({{"from", r.from}, {"to", r.to}, {"relationType", label}, {"created", !exists}});
    }
    answer = json{{"relations", items}}.dump();
    return errc::ok;
  }

  errc observations(std::string& answer, std::string& error, bool add) {
    json items = json::array();
    for (std::size_t i = 0; i < c_.observations.size(); ++i) {
      const auto& o = c_.observations[i];
      const auto id = find(o.entity_name);
      stored_entity* e = nullptr;
      if (!id.empty())
        if (auto err = s_.load_entity(tx_, org_, id, &e); err != errc::ok)
          return err;
      if (!e) {
        if (!add)
          continue;  // deleting from what is missing is a no-op
        error = missing("/observations/" + std::to_string(i) + "/entityName", o.entity_name);
        return errc::ok;
      }
      json changed = json::array();
      auto& obs = e->observations;
      for (const auto& text : o.contents) {
        auto it = std::find(obs.begin(), obs.end(), text);
        if (add && it == obs.end()) {
          obs.push_back(text);
          changed.push_back(text);
        } else if (!add && it != obs.end()) {
          obs.erase(it);
          changed.push_back(text);
        }
      }
      put(*e);
      items.push_back({{"entityName", o.entity_name}, {add ? "addedObservations" : "deletedObservations", changed}});
    }
    answer = json{{"results", items}}.dump();
    return errc::ok;
  }

  /// Deletes an entity with its names, its edges both ways and its links; the entries that
  /// mention it keep the mention without the entity id.
  errc delete_entity(const std::string& id) {
    stored_entity* e = nullptr;
    if (auto err = s_.load_entity(tx_, org_, id, &e); err != errc::ok)
      return err;
    if (!e)
      return errc::ok;
    unindex_name(e->name, id);
    for (const auto& a : e->aliases)
      unindex_name(a, id);
    if (!e->address.empty())
      unindex_name(e->address, id);
    for (bool outgoing : {true, false})
      for (const auto& edge : edges_of(id, outgoing))
        del_edge(edge.from_id, edge.label, edge.to_id);
    const auto prefix = key(org_, id, "");
    auto it = s_.kv_->iterate(cf_links);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      auto [kind, target] = rest_of(it->key(), prefix.size());
      tx_.batch.del(cf_links, std::string(it->key()));
      if (kind == "entry")
        if (auto err = remap_mentions(target, id, ""); err != errc::ok)
          return err;
    }
    tx_.batch.del(cf_entities, key(org_, id));
    tx_.entities.erase(id);
    tx_.deleted_entities.insert(id);
    return s_.drop(tx_, key(meta_tag::counter, org_, "entities"), 1);
  }

  /// Points an entry's mentions of entity `from` at `to` ("" = no entity).
  errc remap_mentions(const std::string& entry_id, const std::string& from, const std::string& to) {
    stored_entry* doc = nullptr;
    auto err = s_.load_entry(tx_, org_, entry_id, &doc);
    if (err == errc::not_found)
      return errc::ok;
    if (err != errc::ok)
      return err;
    for (auto& m : doc->entities)
      if (m.entity_id == from)
        m.entity_id = to;
    return errc::ok;
  }

  errc delete_entities(std::string& answer) {
    std::size_t deleted = 0;
    for (const auto& name : c_.names) {
      const auto id = find(name);
      if (id.empty())
        continue;  // deleting what is missing is a no-op
      if (auto err = delete_entity(id); err != errc::ok)
        return err;
      ++deleted;
    }
    s_.put_entries(tx_, org_);
    answer = json{{"deleted", deleted}}.dump();
    return errc::ok;
  }

  errc delete_relations(std::string& answer) {
    std::size_t deleted = 0;
    for (const auto& r : c_.relations) {
      const auto from = find(r.from), to = find(r.to);
      if (from.empty() || to.empty())
        continue;
      const auto label = schemas::relation_label(r.relation_type);
      bool exists = false;
      if (auto err = edge_exists(from, label, to, &exists); err != errc::ok)
        return err;
      if (exists) {
        del_edge(from, label, to);
        ++deleted;
      }
    }
    answer = json{{"deleted", deleted}}.dump();
    return errc::ok;
  }

  /// B into A: attributes A lacks, names, observations, contact details A lacks, edges
  /// both ways (a B-A edge would become a loop and is dropped) and links; then B is deleted.
  errc merge(std::string& answer, std::string& error) {
    const auto a_id = find(c_.name_a), b_id = find(c_.name_b);
    if (a_id.empty()) {
      error = missing("/nameA", c_.name_a);
      return errc::ok;
    }
    if (b_id.empty()) {
      error = missing("/nameB", c_.name_b);
      return errc::ok;
    }
    if (a_id == b_id) {
      error = "/nameB: '" + c_.name_b + "' and '" + c_.name_a + "' are already one entity";
      return errc::ok;
    }
    stored_entity *a = nullptr, *b = nullptr;
    if (auto err = s_.load_entity(tx_, org_, a_id, &a); err != errc::ok)
      return err;
    if (auto err = s_.load_entity(tx_, org_, b_id, &b); err != errc::ok)
      return err;
    if (!a || !b)
      return errc::corruption;      // a name row without its entity
    const stored_entity gone = *b;  // b's node may move when tx_.entities changes
    std::size_t relationships_gained = 0;
    const std::size_t attributes_gained = absorb(*a, gone);
    const auto names = take_names(*a, a_id, gone);
    const stored_entity kept = *a;
    if (auto err = move_edges(b_id, a_id, &relationships_gained); err != errc::ok)
      return err;
    if (auto err = move_links(b_id, a_id); err != errc::ok)
      return err;
    // delete_entity would clear the moved mentions: remap first, then delete B's own rows.
    if (auto err = delete_entity(b_id); err != errc::ok)
      return err;
    for (const auto& n : names)
      index_name(n, a_id);  // delete_entity dropped B's names; they now name A
    tx_.entities[a_id] = kept;
    put(kept);
    s_.put_entries(tx_, org_);
    answer = json{{"merged_into", kept.name},
                  {"removed", gone.name},
                  {"attributes_gained", attributes_gained},
                  {"relationships_gained", relationships_gained}}
                 .dump();
    return errc::ok;
  }

  /// merge's step: the attributes, observations, type and contact details of B that A lacks,
  /// and B's message count; the number of attributes gained.
  static std::size_t absorb(stored_entity& a, const stored_entity& gone) {
    std::size_t attributes_gained = 0;
    for (const auto& [k, v] : gone.attributes)
      if (a.attributes.emplace(k, v).second)
        ++attributes_gained;
    for (const auto& o : gone.observations)
      if (std::find(a.observations.begin(), a.observations.end(), o) == a.observations.end())
        a.observations.push_back(o);
    if (a.entity_type.empty())
      a.entity_type = gone.entity_type;
    for (auto [mine, theirs] : {std::pair{&a.address, &gone.address},
                                {&a.contact_id, &gone.contact_id},
                                {&a.role, &gone.role},
                                {&a.company, &gone.company},
                                {&a.phone, &gone.phone}})
      if (mine->empty())
        *mine = *theirs;
    a.messages += gone.messages;
    return attributes_gained;
  }

  /// merge's step: B's name and aliases become A's aliases (those not A's name) and name A;
  /// returns them.
  std::vector<std::string> take_names(stored_entity& a, const std::string& a_id, const stored_entity& gone) {
    std::vector<std::string> names{gone.name};
    names.insert(names.end(), gone.aliases.begin(), gone.aliases.end());
    const auto a_norm = normalise_name(a.name);
    for (const auto& n : names) {
      if (normalise_name(n) != a_norm && std::find(a.aliases.begin(), a.aliases.end(), n) == a.aliases.end())
        a.aliases.push_back(n);
      index_name(n, a_id);
    }
    return names;
  }

  /// merge's step: B's edges both ways move to A (an edge between A and B is dropped, one A
  /// already has is kept once); counts the edges A gains.
  errc move_edges(const std::string& b_id, const std::string& a_id, std::size_t* gained) {
    for (bool outgoing : {true, false})
      for (const auto& edge : edges_of(b_id, outgoing)) {
        auto moved = edge;
        (outgoing ? moved.from_id : moved.to_id) = a_id;
        if (moved.from_id == moved.to_id)
          continue;  // an edge between A and B
        bool exists = false;
        if (auto err = edge_exists(moved.from_id, moved.label, moved.to_id, &exists); err != errc::ok)
          return err;
        if (!exists) {
          put_edge(moved);
          ++*gained;
        }
      }
    return errc::ok;
  }

  /// merge's step: B's links become A's; the entries that mention B mention A.
  errc move_links(const std::string& b_id, const std::string& a_id) {
    const auto prefix = key(org_, b_id, "");
    auto it = s_.kv_->iterate(cf_links);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      auto [kind, target] = rest_of(it->key(), prefix.size());
      tx_.batch.put(cf_links, key(org_, a_id, kind, target), std::string(it->value()));
      if (kind == "entry")
        if (auto err = remap_mentions(target, b_id, a_id); err != errc::ok)
          return err;
    }
    return errc::ok;
  }

  kv_graph_store& s_;
  write_txn& tx_;
  const schemas::entity_command& c_;
  const std::string& org_;
  /// Edges this command wrote (the edge) or deleted (nullopt), by entity_edges key.
  std::map<std::string, std::optional<entity_edge>> edges_;
  std::uint64_t created_ = 0;
};

errc kv_graph_store::apply_entity_command(const log_position& pos, const schemas::entity_command& c,
                                          entity_result* result, apply_outcome* outcome) {
  entity_result r;
  auto e = apply_once(pos, c.organization_id, c.event_id, outcome, [&](write_txn& tx, std::string& rejected) {
    entity_writer w(*this, tx, c);
    auto e = w.run(r.json, r.error);
    rejected = r.error;
    if (!rejected.empty())
      r.json.clear();
    return e;
  });
  if (e == errc::ok && result)
    *result = std::move(r);
  return e;
}

std::string kv_graph_store::entity_id(const std::string& org, const std::string& name) const {
  return resolve_name(nullptr, org, normalise_name(name), "");
}

std::vector<std::string> kv_graph_store::entity_entries(const std::string& org, const std::string& id,
                                                        std::size_t limit) const {
  std::vector<std::string> out;
  const auto prefix = key(org, id, "entry", "");
  auto it = kv_->iterate(cf_links);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix) && out.size() < limit; it->next())
    out.emplace_back(it->key().substr(prefix.size()));
  return out;
}

std::vector<std::pair<std::string, std::string>> kv_graph_store::names_with_prefix(const std::string& org,
                                                                                   const std::string& prefix,
                                                                                   std::size_t limit) const {
  std::vector<std::pair<std::string, std::string>> out;
  const auto under = key(org, "");
  const auto start = under + prefix;
  auto it = kv_->iterate(cf_entity_names);
  for (it->seek(start); it->valid() && it->key().starts_with(start) && out.size() < limit; it->next()) {
    const auto rest = it->key().substr(under.size());  // name \0 id
    const auto z = rest.find('\0');
    if (z != std::string_view::npos)
      out.emplace_back(std::string(rest.substr(0, z)), std::string(rest.substr(z + 1)));
  }
  return out;
}

result<std::string> kv_graph_store::get_entity(const std::string& org, const std::string& id) const {
  return kv_->get(cf_entities, key(org, id));
}

std::vector<entity_edge> kv_graph_store::entity_edges(const std::string& org, const std::string& id,
                                                      bool outgoing) const {
  std::vector<entity_edge> out;
  const auto prefix = key(org, id, "");
  auto it = kv_->iterate(outgoing ? cf_entity_edges : cf_entity_edges_in);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto [label, other] = rest_of(it->key(), prefix.size());
    if (outgoing) {
      out.push_back(parse_edge(id, std::move(label), std::move(other), it->value()));
    } else {
      auto v = kv_->get(cf_entity_edges, key(org, other, label, id));
      out.push_back(parse_edge(std::move(other), std::move(label), id, v ? std::string_view(*v) : "{}"));
    }
  }
  return out;
}

void kv_graph_store::scan_entities(const std::string& org, const std::function<void(const entity_summary&)>& fn) const {
  entities_.scan(org, fn);
}

std::vector<entity_card> kv_graph_store::entity_cards(const std::string& org, const std::vector<std::string>& ids,
                                                      bool incoming) const {
  return entities_.cards(org, ids, incoming);
}

void kv_graph_store::scan_entities_containing(const std::string& org, std::string_view needle,
                                              const std::function<void(const entity_summary&)>& fn) const {
  entities_.scan_containing(org, needle, fn);
}

bool kv_graph_store::entity_name(const std::string& org, const std::string& id, std::string* name,
                                 std::string* type) const {
  return entities_.find(org, id, name, type);
}

errc kv_graph_store::load_entity_index() {
  auto it = kv_->iterate(cf_entities);
  for (it->seek_to_first(); it->valid(); it->next()) {
    const auto k = it->key();
    const auto z = k.find('\0');
    stored_entity e;
    if (z == std::string_view::npos || knowledge::decode(it->value(), e))
      return errc::corruption;
    entities_.put(k.substr(0, z), e);
  }
  if (auto e = it->status(); e != errc::ok)
    return e;
  auto edges = kv_->iterate(cf_entity_edges);
  for (edges->seek_to_first(); edges->valid(); edges->next()) {
    auto parts = split_key(edges->key());
    if (parts.size() != 4)
      return errc::corruption;
    const auto edge = parse_edge(parts[1], parts[2], parts[3], edges->value());
    entities_.add_edge(parts[0], edge.from_id, edge.label, edge.to_id, edge.weight);
  }
  return edges->status();
}

std::vector<entity_neighbour> kv_graph_store::entity_neighbours(const std::string& org, const std::string& id,
                                                                bool outgoing, bool incoming) const {
  std::vector<entity_neighbour> out;
  entities_.neighbours(org, id, outgoing, incoming,
                       [&](const std::string& other, const std::string& label, double weight, bool out_edge) {
                         out.push_back({other, label, weight, out_edge});
                       });
  return out;
}

std::vector<std::pair<std::string, std::string>> kv_graph_store::list_entities(const std::string& org,
                                                                               const std::string& after,
                                                                               std::size_t limit) const {
  std::vector<std::pair<std::string, std::string>> out;
  const auto prefix = key(org, "");
  auto it = kv_->iterate(cf_entities);
  it->seek(after.empty() ? prefix : key(org, after));
  for (; it->valid() && it->key().starts_with(prefix) && out.size() < limit; it->next()) {
    std::string id(it->key().substr(prefix.size()));
    if (!after.empty() && id == after)
      continue;
    out.emplace_back(std::move(id), std::string(it->value()));
  }
  return out;
}

}  // namespace engram::storage::detail
