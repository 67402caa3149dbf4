// The apply path of messages and saves: entries with their indexes, links, relations,
// merges, supersedes and flags, in one WriteBatch with the offset advance.
#include "storage/internal/graph_store_impl.hpp"

#include <set>

namespace engram::storage::detail {

errc kv_graph_store::apply(const log_position& pos, const schemas::inbound_message* m,
                           const schemas::extraction* knowledge, const std::vector<schemas::resolution>* resolutions,
                           apply_outcome* outcome) {
  write_txn tx;
  apply_outcome result;
  std::optional<schemas::inbound_message> without_forgotten;
  m = redacted(m, without_forgotten);
  if (!m) {
    result = apply_outcome::skipped;
    if (auto e = bump(tx, redelivery_key(meta_tag::skipped, pos), 1); e != errc::ok)
      return e;
  } else {
    tx.org = m->organization_id;
    bool first = false;
    if (auto e = mark_seen(tx, key(meta_tag::seen, m->organization_id, m->event_id), pos, &first); e != errc::ok)
      return e;
    if (!first) {
      result = apply_outcome::duplicate;
    } else {
      result = apply_outcome::applied;
      if (auto e = put_message(tx, *m); e != errc::ok)
        return e;
      if (knowledge) {
        if (auto e = put_knowledge(tx, *m, *knowledge, resolutions); e != errc::ok)
          return e;
        if (auto e = put_passages(tx, *m, *knowledge); e != errc::ok)
          return e;
      }
      if (m->document)
        put_chunk_status(tx, *m, knowledge);
    }
  }
  put_offset(tx, pos);
  if (auto e = commit(tx); e != errc::ok)
    return e;
  if (outcome)
    *outcome = result;
  return errc::ok;
}

result<std::string> kv_graph_store::get_entry(const std::string& org, const std::string& id) const {
  return kv_->get(cf_entries, key(org, id));
}

std::vector<std::optional<std::string>> kv_graph_store::get_entries(const std::string& org,
                                                                    std::span<const std::string> ids) const {
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (const auto& id : ids)
    keys.push_back(key(org, id));
  return read_keys(cf_entries, std::move(keys));
}

result<std::vector<std::string>> kv_graph_store::moved_sources(const std::string& org, const std::string& id,
                                                               std::uint64_t first, std::size_t limit) const {
  std::vector<std::string> out;
  if (auto e = moved_rows(org, id, first,
                          [&](std::string_view, std::string_view value) {
                            out.emplace_back(value);
                            return out.size() < limit;
                          });
      e != errc::ok)
    return failure{e};
  return out;
}

std::vector<std::string> kv_graph_store::entries_of_type(const std::string& org, schemas::entry_type type) const {
  std::vector<std::string> out;
  auto prefix = key(org, std::string(schemas::to_string(type)), "");
  auto it = kv_->iterate(cf_by_type);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto rest = it->key().substr(prefix.size());
    out.emplace_back(rest.substr(rest.find('\0') + 1));
  }
  return out;
}

std::vector<std::string> kv_graph_store::entries_with_title(const std::string& org, schemas::entry_type type,
                                                            const std::string& title, std::uint64_t values,
                                                            std::size_t limit) const {
  return newest_under(
      cf_titles, key(org, std::string(schemas::to_string(type)), title, knowledge::values_key_hex(values), ""), limit);
}

std::vector<std::string> kv_graph_store::entries_with_slot(const std::string& org, const std::string& subject,
                                                           const std::string& slot, std::size_t limit) const {
  return newest_under(cf_by_slot, key(org, subject, slot, ""), limit);
}

namespace {

/// A decision (merge into, relate to, supersede, flag) that names an entry the store lacks
/// is an invalid decision, not a missing row.
errc decided(errc e) { return e == errc::not_found ? errc::invalid_argument : e; }

/// A mentioned entity's aliases and names, and the role, company and phone the mention gives.
/// The names to index for it go to `names`.
void note_mention(const schemas::entity_mention& mention, stored_entity& e, bool index_names,
                  std::vector<std::string>& names) {
  // A person's first name alone ("Priya" signing for Priya Raghunathan) is a short form,
  // not a name: another person may share it (resolution joins it by its words).
  auto short_form = [&](const std::string& name) {
    return e.kind == "person" && knowledge::person_words(knowledge::fold_name(name)).size() == 1 &&
           knowledge::person_words(knowledge::fold_name(e.name)).size() > 1;
  };
  for (const auto* name : {&mention.value, &mention.text}) {
    if (!index_names || name->empty() || short_form(*name))
      continue;
    if (normalise_name(*name) != normalise_name(e.name) &&
        std::find(e.aliases.begin(), e.aliases.end(), *name) == e.aliases.end())
      e.aliases.push_back(*name);
    names.push_back(*name);
  }
  if (!mention.role.empty())
    e.role = mention.role;
  if (!mention.company.empty())
    e.company = mention.company;
  if (!mention.phone.empty())
    e.phone = mention.phone;
}

/// Keeps the evidence of a resolution on the entity it joined (the first notes, each once).
void note_resolution(stored_entity& e, knowledge::resolution_note note) {
  if (note.reason.empty() || e.resolutions.size() >= knowledge::max_resolution_notes ||
      std::find(e.resolutions.begin(), e.resolutions.end(), note) != e.resolutions.end())
    return;
  e.resolutions.push_back(std::move(note));
}

/// The mentions an entry names, with their entity ids; each entity gets a link to the entry.
std::vector<knowledge::mention_ref> mention_refs(write_txn& tx, const std::string& org, const schemas::extraction& x,
                                                 const schemas::entry& en, const std::vector<std::string>& entity_of,
                                                 const std::string& id) {
  std::vector<knowledge::mention_ref> mentions;
  for (auto mi : en.mentions) {
    if (mi >= x.mentions.size())
      continue;
    const auto& mention = x.mentions[mi];
    mentions.push_back(
        {std::string(schemas::to_string(mention.kind)), mention.text, mention.value, mention.currency, entity_of[mi]});
    if (!entity_of[mi].empty())
      tx.batch.put(cf_links, key(org, entity_of[mi], "entry", id), "mention");
  }
  return mentions;
}

}  // namespace

/// Mentions of people and organisations -> entity ids in `entity_of` (created when unknown,
/// counted in `new_entities`).
errc kv_graph_store::put_mentions(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x,
                                  std::vector<std::string>& entity_of, std::uint64_t* new_entities) {
  const auto& org = m.organization_id;
  for (std::size_t i = 0; i < x.mentions.size(); ++i) {
    const auto& mention = x.mentions[i];
    const bool person = mention.kind == schemas::entity_kind::person;
    const bool company = mention.kind == schemas::entity_kind::organization;
    // Technologies and locations (the far ends of relations) are entities of their type,
    // in the id space the entity tools use ("entity:" + name); a name already known as
    // any entity (a vendor's organisation) is that entity.
    const bool other =
        mention.kind == schemas::entity_kind::technology || mention.kind == schemas::entity_kind::location;
    if ((!person && !company && !other) || forgotten_mention(org, mention))
      continue;
    auto norm = normalise_name(mention.value);
    // An order, ticket or invoice number is never a person or an organisation.
    if (norm.empty() || ((person || company) && knowledge::is_identifier(mention.value)))
      continue;
    std::string id;
    knowledge::resolution_note resolved;
    bool by_words = false;
    if (person && !mention.address.empty())
      id = person_id(mention.address);
    if (id.empty())
      id = resolve_mention(tx, m, mention, person ? "person:" : company ? "org:" : "", &resolved, &by_words);
    if (id.empty())
      id = (person ? "person:~" : company ? "org:" : "entity:") + norm;
    stored_entity* e = nullptr;
    if (auto err = load_entity(tx, org, id, &e); err != errc::ok)
      return err;
    if (!e) {
      ++*new_entities;
      const char* type = person ? "person" : company ? "organization" : "entity";
      e = &(tx.entities[id] = new_entity(id, type, mention.value, m.sent_at));
      if (other)
        e->entity_type = std::string(schemas::to_string(mention.kind));
      if (person && !mention.address.empty())
        e->address = lower_ascii(mention.address);
    }
    note_resolution(*e, std::move(resolved));
    std::vector<std::string> names;
    note_mention(mention, *e, !by_words, names);
    for (const auto& name : names)
      put_name_keys(tx, org, name, id);
    entity_of[i] = id;
    tx.batch.put(cf_links, key(org, id, "message", m.event_id), "mention");
  }
  return errc::ok;
}

/// A new entry's index rows: expiry, due date, type, its words (BM25) and its vector
/// (raising `vectors` to the highest sequence written). Its title and slot rows are written
/// by put_entries.
errc kv_graph_store::index_entry(write_txn& tx, const schemas::inbound_message& m, const std::string& id,
                                 const schemas::entry& en, const schemas::resolution* r, std::uint64_t* vectors) {
  const auto& org = m.organization_id;
  if (!en.expires_at.empty())
    if (auto ms = due_ms(en.expires_at))
      tx.batch.put(cf_expiry, key(org, encode_u64(static_cast<std::uint64_t>(*ms)), id), "");
  if (en.type == schemas::entry_type::action_item && !en.due_at.empty())
    if (auto ms = due_ms(en.due_at))
      tx.batch.put(cf_due, key(org, encode_u64(static_cast<std::uint64_t>(*ms)), id), "");
  tx.batch.put(cf_by_type, key(org, std::string(schemas::to_string(en.type)), m.sent_at, id), "");
  tx.listed[id] = false;  // its titles and by_slot rows: put_entries, unless superseded by then
  if (auto e = put_text(tx, org, id, en.sig.key + " " + en.sig.words); e != errc::ok)
    return e;
  if (r && r->vector_seq && !en.embedding.empty()) {
    auto seq = encode_u64(r->vector_seq);
    std::string value = id;
    value.push_back('\0');
    value += schemas::to_bytes(en.embedding);
    tx.batch.put(cf_vectors, key(org, "q", seq), value);
    tx.batch.put(cf_vectors, key(org, "e", id), seq);
    *vectors = std::max(*vectors, r->vector_seq);
  }
  return errc::ok;
}

/// An entry's decisions: its relations to other entries (counted in `relations`), the
/// entries it supersedes and those it flags for review.
errc kv_graph_store::apply_decisions(write_txn& tx, const schemas::inbound_message& m, const std::string& id,
                                     stored_entry& doc, const schemas::resolution& r, std::uint64_t* relations) {
  const auto& org = m.organization_id;
  for (const auto& edge : r.relations) {
    stored_entry* other = nullptr;
    if (auto e = decided(load_entry(tx, org, edge.to, &other)); e != errc::ok)
      return e;
    auto type = std::string(schemas::to_string(edge.type));
    tx.batch.put(cf_relations, key(org, id, type, edge.to), edge.reason);
    tx.batch.put(cf_relations_in, key(org, edge.to, type, id), edge.reason);
    knowledge::relate(doc, *other, edge.type, edge.reason);
    ++*relations;
  }
  for (const auto& old : r.superseded) {
    stored_entry* other = nullptr;
    if (auto e = decided(load_entry(tx, org, old, &other)); e != errc::ok)
      return e;
    knowledge::supersede(*other, id, m.sent_at);
    tx.batch.del(cf_review, key(org, old));
    drop_due_row(tx, *other);
  }
  for (const auto& old : r.flagged) {
    stored_entry* other = nullptr;
    if (auto e = decided(load_entry(tx, org, old, &other)); e != errc::ok)
      return e;
    if (knowledge::flag(*other, id, r.reason))
      tx.batch.put(cf_review, key(org, old), id);
  }
  return errc::ok;
}

/// Stores entries, their indexes, and the people and organisations they mention.
errc kv_graph_store::put_knowledge(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction& x,
                                   const std::vector<schemas::resolution>* resolutions) {
  const auto& org = m.organization_id;
  std::uint64_t new_entities = 0;
  // Mentions of people and organisations -> entity ids (created when unknown).
  std::vector<std::string> entity_of(x.mentions.size());
  if (auto e = put_mentions(tx, m, x, entity_of, &new_entities); e != errc::ok)
    return e;
  // A document chunk's relations add its structure's; a message's are written as read.
  std::vector<schemas::entity_relation> with_structure;
  const auto* entity_relations = &x.relations;
  if (m.document) {
    with_structure = x.relations;
    if (auto e = put_document_structure(tx, m, entity_of, with_structure, &new_entities); e != errc::ok)
      return e;
    entity_relations = &with_structure;
  }
  for (auto& [id, e] : tx.entities)
    tx.batch.put(cf_entities, key(org, id), knowledge::encode(e));

  // Entries: ids derived from (organisation, eventId, index), never random.
  const auto contact_ids = knowledge::contacts_of(m);
  const auto& thread = m.thread_or_event();
  std::uint64_t created = 0, relations = 0, vectors = 0;
  std::vector<std::string> entry_ids(x.entries.size());
  for (std::size_t i = 0; i < x.entries.size(); ++i) {
    const auto& en = x.entries[i];
    const schemas::resolution* r = resolutions && i < resolutions->size() ? &(*resolutions)[i] : nullptr;
    const bool merged = r && r->outcome == schemas::save_outcome::merged;
    const auto id = merged ? r->merged_into : schemas::entry_id(org, m.event_id, i);
    entry_ids[i] = id;
    auto mentions = mention_refs(tx, org, x, en, entity_of, id);
    stored_entry* doc = nullptr;
    if (merged) {
      if (auto e = decided(load_entry(tx, org, id, &doc)); e != errc::ok)
        return e;
      knowledge::merge_into(*doc, en, mentions, knowledge::source_of(m), contact_ids, m.sent_at, r->reason);
      shed_sources(tx.batch, org, id, *doc);
    } else {
      doc = &(tx.entries[id] = knowledge::new_entry(id, m, en, std::move(mentions), x.extractor, r));
      ++created;
      if (auto e = index_entry(tx, m, id, en, r, &vectors); e != errc::ok)
        return e;
    }
    tx.batch.put(cf_by_thread, key(org, thread, "entry", id), "");
    for (const auto& c : contact_ids)
      tx.batch.put(cf_by_contact, key(org, c, "entry", id), "");
    if (!r)
      continue;
    if (auto e = apply_decisions(tx, m, id, *doc, *r, &relations); e != errc::ok)
      return e;
  }
  put_entries(tx, org);
  if (auto e = put_relations(tx, m, *entity_relations, entity_of, entry_ids); e != errc::ok)
    return e;
  if (created)
    if (auto e = bump(tx, key(meta_tag::counter, org, "entries"), created); e != errc::ok)
      return e;
  if (relations)
    if (auto e = bump(tx, key(meta_tag::counter, org, "relations"), relations); e != errc::ok)
      return e;
  if (vectors)
    if (auto e = set_counter(tx, key(meta_tag::counter, org, "vectors"), vectors); e != errc::ok)
      return e;
  if (new_entities)
    if (auto e = bump(tx, key(meta_tag::counter, org, "entities"), new_entities); e != errc::ok)
      return e;
  return errc::ok;
}

/// A document chunk's status: applied, and what extraction read from it.
void kv_graph_store::put_chunk_status(write_txn& tx, const schemas::inbound_message& m, const schemas::extraction* x) {
  const auto& d = *m.document;
  std::uint64_t entities = 0;
  if (x)
    for (const auto& mention : x->mentions)
      entities += mention.kind != schemas::entity_kind::date && mention.kind != schemas::entity_kind::amount;
  json status{{"title", d.title},
              {"section", d.section},
              {"chunk", d.chunk},
              {"chunks", d.chunks},
              {"eventId", m.event_id},
              {"status", "done"},
              {"entries", x ? x->entries.size() : 0},
              {"entities", entities},
              {"relations", x ? x->relations.size() : 0}};
  tx.batch.put(cf_meta, key(meta_tag::chunk, m.organization_id, d.id, encode_u64(d.chunk)), status.dump());
}

std::vector<document_status> kv_graph_store::documents(const std::string& org) const {
  std::vector<document_status> out;
  const auto prefix = org.empty() ? key(meta_tag::chunk, "") : key(meta_tag::chunk, org, "");
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    const auto parts = split_key(it->key());  // "c", org, documentId, chunk
    if (parts.size() < 4)
      continue;
    auto j = json::parse(it->value(), nullptr, false);
    if (!j.is_object())
      continue;
    if (out.empty() || out.back().organization_id != parts[1] || out.back().id != parts[2]) {
      auto& fresh = out.emplace_back();
      fresh.organization_id = parts[1];
      fresh.id = parts[2];
    }
    auto& d = out.back();
    d.chunks = std::max<std::uint32_t>(d.chunks, j.value("chunks", 0u));
    if (d.title.empty())
      d.title = j.value("title", std::string());
    if (j.value("status", std::string()) == "failed") {
      if (!d.failed++)
        d.error = j.value("error", std::string());
      continue;
    }
    ++d.done;
    d.entries += j.value("entries", std::uint64_t{0});
    d.entities += j.value("entities", std::uint64_t{0});
    d.relations += j.value("relations", std::uint64_t{0});
  }
  return out;
}

errc kv_graph_store::put_document_structure(write_txn& tx, const schemas::inbound_message& m,
                                            std::vector<std::string>& entity_of,
                                            std::vector<schemas::entity_relation>& relations,
                                            std::uint64_t* new_entities) {
  const auto& org = m.organization_id;
  const auto& d = *m.document;
  const auto named = entity_of.size();
  // Ids of their own ("~doc:" sorts after every other prefix): a document titled like an
  // organisation or a technology never stands for it when the name is looked up.
  auto ensure = [&](const std::string& name, const char* type) -> errc {
    const auto norm = normalise_name(name);
    const auto id = "~doc:" + norm;
    stored_entity* e = nullptr;
    if (auto err = load_entity(tx, org, id, &e); err != errc::ok)
      return err;
    if (!e) {
      ++*new_entities;
      e = &(tx.entities[id] = new_entity(id, "entity", name, m.sent_at));
      e->entity_type = type;
      tx.batch.put(cf_entity_names, key(org, norm, id), "");
      tx.names[key(org, norm)] = id;
    }
    entity_of.push_back(id);
    return errc::ok;
  };
  const auto title = d.title.empty() ? d.id : d.title;
  if (normalise_name(title).empty())
    return errc::ok;
  if (auto e = ensure(title, "document"); e != errc::ok)
    return e;
  std::size_t holder = named;
  if (!d.section.empty() && !normalise_name(d.section).empty()) {
    if (auto e = ensure(title + ": " + d.section, "section"); e != errc::ok)
      return e;
    holder = named + 1;
    relations.push_back({named, holder, "contains", 1.0, std::nullopt, false, {}});
  }
  std::set<std::string> mentioned;
  for (std::size_t i = 0; i < named; ++i)
    if (!entity_of[i].empty() && mentioned.insert(entity_of[i]).second)
      relations.push_back({holder, i, "mentions", 1.0, std::nullopt, false, {}});
  return errc::ok;
}

/// The relations a message states, as edges of the entity graph (one graph with the
/// entity tools' edges). Bi-temporal: an edge holds from the sentAt of the message that
/// first stated it (validFrom); a message that ends it ("Mei left Contoso") sets validTo and
/// keeps it; one that states it again later opens it again. Evidence: the message (the
/// edge's eventId), the statement (attribute entry), confidence and, for works_at, role.
errc kv_graph_store::put_relations(write_txn& tx, const schemas::inbound_message& m,
                                   const std::vector<schemas::entity_relation>& relations,
                                   const std::vector<std::string>& entity_of,
                                   const std::vector<std::string>& entry_ids) {
  const auto& org = m.organization_id;
  std::map<std::string, entity_edge> written;  // this message's edges, by key
  for (const auto& rel : relations) {
    if (rel.subject >= entity_of.size() || rel.object >= entity_of.size())
      continue;
    const auto& from = entity_of[rel.subject];
    const auto& to = entity_of[rel.object];
    if (from.empty() || to.empty() || from == to || !schemas::is_relation_predicate(rel.predicate))
      continue;
    const auto k = key(org, from, rel.predicate, to);
    std::optional<entity_edge> edge;
    if (auto it = written.find(k); it != written.end()) {
      edge = it->second;
    } else {
      auto v = kv_->get(cf_entity_edges, k);
      if (!v && v.error() != errc::not_found)
        return v.error();
      if (v)
        edge = parse_edge(from, rel.predicate, to, *v);
    }
    const bool is_new = !edge;
    if (is_new) {
      edge = entity_edge{from, to, rel.predicate, rel.confidence, {}, m.sent_at};
      edge->attributes["source"] = "extracted";
      edge->attributes["message"] = m.event_id;
    }
    auto& a = edge->attributes;
    const auto before = a;
    const double weight_before = edge->weight;
    if (rel.ended) {
      a["validTo"] = m.sent_at;
    } else {
      if (is_new || a.count("validTo")) {
        a["validFrom"] = m.sent_at;
        a.erase("validTo");
      }
      edge->weight = std::max(edge->weight, rel.confidence);
      if (!rel.role.empty())
        a["role"] = rel.role;
    }
    if (rel.entry && *rel.entry < entry_ids.size() && (is_new || !a.count("entry")))
      a["entry"] = entry_ids[*rel.entry];
    if (!is_new && a == before && edge->weight == weight_before)
      continue;  // said again: the first statement stays its evidence
    tx.batch.put(cf_entity_edges, k, edge_value(*edge, m.event_id));
    tx.batch.put(cf_entity_edges_in, key(org, to, rel.predicate, from), "");
    tx.edges.push_back({true, from, rel.predicate, to, edge->weight});
    written[k] = *edge;
  }
  return errc::ok;
}

void kv_graph_store::put_entries(write_txn& tx, const std::string& org) {
  for (const auto& [id, doc] : tx.entries) {
    tx.batch.put(cf_entries, key(org, id), knowledge::encode(doc));
    const bool candidate = doc.status != knowledge::entry_status::superseded;
    if (auto it = tx.listed.find(id); it != tx.listed.end() && it->second != candidate) {
      candidate_rows(tx.batch, doc, candidate, &tx.group_deltas);
      it->second = candidate;
    }
  }
}

void kv_graph_store::shed_sources(kv_batch& b, std::string_view org, std::string_view id, stored_entry& d) {
  auto n = d.sources_moved;
  for (const auto& moved : knowledge::shed_sources(d))
    b.put(cf_entry_sources, key(org, id, encode_u64(n++)), knowledge::encode(moved));
}

void kv_graph_store::candidate_rows(kv_batch& b, const stored_entry& d, bool present,
                                    std::vector<group_delta>* deltas) {
  auto row = [&](cf family, const std::string& k) {
    if (present)
      b.put(family, k, "");
    else
      b.del(family, k);
    if (deltas)
      deltas->push_back({family, std::string(group_of(family, k)), present ? 1 : -1});
  };
  const auto& org = d.organization_id;
  if (!d.sig.key.empty())
    row(cf_titles, key(org, std::string(schemas::to_string(d.type)), d.sig.key,
                       knowledge::values_key_hex(knowledge::values_key(d.positive, d.title, d.sig)),
                       time_key(d.created_at), d.id));
  if (!d.subject.empty() && !d.slot.empty())
    row(cf_by_slot, key(org, schemas::normal_form(d.subject), d.slot, time_key(d.created_at), d.id));
}

void kv_graph_store::drop_due_row(write_txn& tx, const stored_entry& e) {
  if (!e.due_at.empty())
    if (auto ms = due_ms(e.due_at))
      tx.batch.del(cf_due, key(e.organization_id, encode_u64(static_cast<std::uint64_t>(*ms)), e.id));
}

/// Loads an entry for update: from this batch if written in it, else from the store.
/// The pointer stays valid until the batch is written (std::map nodes do not move).
errc kv_graph_store::load_if_present(write_txn& tx, const std::string& org, const std::string& id, stored_entry** out) {
  *out = nullptr;
  const auto e = load_entry(tx, org, id, out);
  return e == errc::not_found ? errc::ok : e;
}

errc kv_graph_store::load_entry(write_txn& tx, const std::string& org, const std::string& id, stored_entry** out) {
  if (auto it = tx.entries.find(id); it != tx.entries.end()) {
    *out = &it->second;
    return errc::ok;
  }
  auto v = kv_->get(cf_entries, key(org, id));
  if (!v)
    return v.error();
  stored_entry doc;
  if (knowledge::decode(*v, doc))
    return errc::corruption;
  tx.listed[id] = doc.status != knowledge::entry_status::superseded;
  *out = &(tx.entries[id] = std::move(doc));
  return errc::ok;
}

errc kv_graph_store::moved_rows(const std::string& org, const std::string& id, std::uint64_t first,
                                const std::function<bool(std::string_view, std::string_view)>& row) const {
  const auto prefix = key(org, id, "");
  auto it = kv_->iterate(cf_entry_sources);
  for (it->seek(key(org, id, encode_u64(first))); it->valid() && it->key().starts_with(prefix); it->next())
    if (!row(it->key(), it->value()))
      break;
  return it->status();
}

errc kv_graph_store::visit_moved(
    const std::string& org, const std::string& id,
    const std::function<void(std::string_view, const knowledge::source_ref&)>& visit) const {
  bool corrupt = false;
  auto e = moved_rows(org, id, 0, [&](std::string_view k, std::string_view v) {
    knowledge::source_ref src;
    corrupt = knowledge::decode(v, src).has_value();
    if (!corrupt)
      visit(k, src);
    return !corrupt;
  });
  return corrupt ? errc::corruption : e;
}

errc kv_graph_store::source_threads(const std::string& org, const std::string& id, const stored_entry& d,
                                    std::set<std::string>& threads) const {
  threads.insert(d.thread_id);
  std::vector<std::string> keys;
  for (const auto& s : d.sources)
    keys.push_back(key(org, s.event_id));
  if (d.sources_moved)
    if (auto e = visit_moved(
            org, id,
            [&](std::string_view, const knowledge::source_ref& src) { keys.push_back(key(org, src.event_id)); });
        e != errc::ok)
      return e;
  for (const auto& raw : read_keys(cf_messages, std::move(keys))) {
    if (!raw)
      continue;  // removed by retention (or a save's source with no stored message)
    auto m = json::parse(*raw, nullptr, false);
    if (!m.is_object())
      return errc::corruption;
    const auto thread = m.value("threadId", std::string());
    threads.insert(thread.empty() ? m.value("eventId", std::string()) : thread);
  }
  return errc::ok;
}

/// Deletes an entry and every row that indexes it; other entries' references to it go too.
errc kv_graph_store::remove_entry(write_txn& tx, const std::string& org, const std::string& id, std::uint64_t* seq,
                                  std::uint64_t* relation_count) {
  stored_entry* doc = nullptr;
  if (auto e = load_entry(tx, org, id, &doc); e != errc::ok)
    return e == errc::not_found ? errc::ok : e;  // gone already
  const stored_entry d = *doc;
  const auto listed = tx.listed.find(id);
  const bool had_rows = listed != tx.listed.end() && listed->second;
  tx.entries.erase(id);
  tx.listed.erase(id);
  tx.removed.insert(id);
  tx.batch.del(cf_entries, key(org, id));
  for (std::uint64_t n = 0; n < d.sources_moved; ++n)
    tx.batch.del(cf_entry_sources, key(org, id, encode_u64(n)));
  tx.batch.del(cf_by_type, key(org, std::string(schemas::to_string(d.type)), d.created_at, id));
  candidate_rows(tx.batch, d, false, had_rows ? &tx.group_deltas : nullptr);
  std::set<std::string> threads;
  if (auto e = source_threads(org, id, d, threads); e != errc::ok)
    return e;
  for (const auto& thread : threads)
    tx.batch.del(cf_by_thread, key(org, thread, "entry", id));
  for (const auto& contact : d.contact_ids)
    tx.batch.del(cf_by_contact, key(org, contact, "entry", id));
  for (const auto& e : d.entities)
    if (!e.entity_id.empty())
      tx.batch.del(cf_links, key(org, e.entity_id, "entry", id));
  tx.batch.del(cf_review, key(org, id));
  drop_due_row(tx, d);
  // Relations both ways, and the other ends' references.
  std::set<std::string> others;
  for (auto [family, reverse] : {std::pair{cf_relations, cf_relations_in}, {cf_relations_in, cf_relations}}) {
    const auto prefix = key(org, id, "");
    auto it = kv_->iterate(family);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      auto rest = it->key().substr(prefix.size());  // type \0 other
      auto sep = rest.find('\0');
      const std::string rtype(rest.substr(0, sep)), other(rest.substr(sep + 1));
      tx.batch.del(family, it->key());
      tx.batch.del(reverse, key(org, other, rtype, id));
      others.insert(other);
      ++*relation_count;
    }
  }
  for (const auto& other : others) {
    if (tx.removed.count(other))
      continue;
    stored_entry* o = nullptr;
    if (auto e = load_if_present(tx, org, other, &o); e != errc::ok)
      return e;
    if (o)
      knowledge::forget_relations_with(*o, id);
  }
  // Full text: the postings (the in-memory index follows once the batch is written).
  auto indexed = index_words(d.sig.key + " " + d.sig.words);  // put_text's words
  for (const auto& [term, n] : indexed.tf)
    tx.batch.del(cf_text, key(org, term, id));
  if (!indexed.tf.empty())
    tx.text.push_back({false, org, id, std::move(indexed)});
  // The vector.
  if (auto v = kv_->get(cf_vectors, key(org, "e", id))) {
    *seq = decode_u64(*v);
    tx.removed_vectors.push_back(*seq);
    tx.batch.del(cf_vectors, key(org, "e", id));
    tx.batch.del(cf_vectors, key(org, "q", *v));
  } else if (v.error() != errc::not_found) {
    return v.error();
  }
  return errc::ok;
}

/// An RFC 3339 time or a YYYY-MM-DD date (its start, UTC) as milliseconds.
std::optional<std::int64_t> kv_graph_store::due_ms(const std::string& s) {
  return schemas::parse_rfc3339(s.size() == 10 ? s + "T00:00:00Z" : s);
}

}  // namespace engram::storage::detail
