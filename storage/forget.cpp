// Forget commands (docs/forgetting.md): the store becomes what it would be had the forgotten
// records never been applied. Applied in log order like every command, so a replay of the
// log forgets the same.
#include "storage/internal/graph_store_impl.hpp"

#include "base/hex.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <set>

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

/// A forget's audit row: who asked, when, what kind and which id; never content.
std::string audit_json(const schemas::knowledge_command& c) {
  return nlohmann::json{
      {"eventId", c.event_id}, {"issuedAt", c.issued_at}, {"issuedBy", c.issued_by}, {"what", c.what}, {"id", c.id}}
      .dump();
}

}  // namespace

std::map<std::string, std::uint64_t> kv_graph_store::drop_organization(write_txn& tx, const std::string& org) {
  std::map<std::string, std::uint64_t> counts;
  // Every row under the organisation's prefix, in every family; in meta, the rows whose
  // second part is the organisation (seen events, branch state, document chunks, counters,
  // its index journal).
  const auto prefix = key(org, "");
  {  // counted before they go
    std::uint64_t n = 0;
    const auto p = key(org, "p", "");
    auto it = kv_->iterate(cf_passages);
    for (it->seek(p); it->valid() && it->key().starts_with(p); it->next())
      ++n;
    counts["passages"] = n;
  }
  for (std::size_t f = cf_messages; f < cf_count; ++f) {
    if (f == cf_meta)
      continue;
    const auto n = delete_prefix(*kv_, tx, static_cast<cf>(f), prefix);
    if (f == cf_messages)
      counts["messages"] = n;
    else if (f == cf_entries)
      counts["entries"] = n;
    else if (f == cf_entities)
      counts["entities"] = n;
    else if (f == cf_entity_edges)
      counts["entityRelations"] = n;
  }
  for (const char* part : meta_tag::organisation_state)
    delete_prefix(*kv_, tx, cf_meta, key(part, org, ""));
  tx.dropped_org = true;
  return counts;
}

errc kv_graph_store::drop_held(const std::string& org) {
  if (org.empty() || org.find('\0') != std::string::npos)
    return errc::invalid_argument;
  write_txn tx;
  tx.org = org;
  // Range tombstones: a handful whatever the organisation's size (a forget deletes row by
  // row, then compacts, for the erasure; a drop need not erase, the log holds it all).
  organization_ranges(org, org, meta_tag::organisation_held,
                      [&](std::size_t f, const std::string& b, const std::string& e) { tx.batch.del_range(f, b, e); });
  tx.batch.del(cf_meta, key(meta_tag::rebuild, org));
  tx.dropped_org = true;
  return commit(tx);
}

errc kv_graph_store::compact_dropped(std::vector<std::string> orgs, const std::atomic<bool>* cancel) {
  std::erase_if(orgs, [](const std::string& o) { return o.empty() || o.find('\0') != std::string::npos; });
  if (orgs.empty())
    return errc::ok;
  std::sort(orgs.begin(), orgs.end());
  // One manual compaction per range, from the first organisation to the last: the
  // organisations between are rewritten too, and far fewer compactions run than one per
  // organisation and range.
  return compact_ranges(orgs.front(), orgs.back(), meta_tag::organisation_held, cancel);
}

namespace {

/// The counts a forget of messages reports, from the organisation's counters.
nlohmann::json counts_of(const std::vector<organization_stats>& all, const std::string& org) {
  for (const auto& s : all)
    if (s.organization_id == org)
      return {{"messages", s.events},   {"entries", s.entries},     {"entities", s.entities},
              {"contacts", s.contacts}, {"relations", s.relations}, {"passages", s.passages}};
  return {{"messages", 0}, {"entries", 0}, {"entities", 0}, {"contacts", 0}, {"relations", 0}, {"passages", 0}};
}

bool is_address(const std::string& id) { return id.find('@') != std::string::npos; }

}  // namespace

}  // namespace engram::storage::detail

namespace engram::storage {

std::string person_key(const std::string& org, std::string_view kind, std::string_view value) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  for (std::string_view part : {std::string_view(org), kind, value}) {
    EVP_DigestUpdate(ctx.get(), part.data(), part.size());
    EVP_DigestUpdate(ctx.get(), "", 1);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  return to_hex(md, len);
}

}  // namespace engram::storage

namespace engram::storage::detail {

forget_targets kv_graph_store::find_forget_targets(const std::string& org, const std::string& what,
                                                   const std::string& id) const {
  forget_targets out;
  std::set<std::string> events;
  std::map<std::string, std::set<std::string>> people;  // kind -> values
  auto fail = [&](errc e) {
    out.error = "the store cannot be read: " + to_string(e);
    return out;
  };
  if (what == "message") {
    auto v = kv_->get(cf_messages, key(org, id));
    if (!v && v.error() != errc::not_found)
      return fail(v.error());
    if (v)
      events.insert(id);
  } else if (what == "thread") {
    for (auto& event : ids_under(cf_by_thread, key(org, id, "message", "")))
      events.insert(std::move(event));
  } else if (what == "document") {
    const auto prefix = key(meta_tag::chunk, org, id, "");
    auto it = kv_->iterate(cf_meta);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      auto status = nlohmann::json::parse(it->value(), nullptr, false);
      if (status.is_object() && status.contains("eventId") && status["eventId"].is_string())
        events.insert(status["eventId"].get<std::string>());
    }
  } else {  // contact: by contactId or address
    const std::string wanted = is_address(id) ? lower_ascii(id) : id;
    auto is_them = [&](const schemas::participant& p) {
      return (!p.address.empty() && lower_ascii(p.address) == wanted) ||
             (!p.contact_id.empty() && p.contact_id == wanted);
    };
    auto note = [&](const schemas::participant& p) {
      if (!p.address.empty())
        people["address"].insert(lower_ascii(p.address));
      if (!p.contact_id.empty())
        people["contact"].insert(p.contact_id);
      if (auto n = normalise_name(p.name); !n.empty())
        people["name"].insert(n);
    };
    schemas::decode_limits limits{std::numeric_limits<std::size_t>::max()};
    const auto prefix = key(org, "");
    auto it = kv_->iterate(cf_messages);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      schemas::inbound_message m;
      if (schemas::decode(it->value(), limits, m))
        continue;  // stored by this store: never undecodable
      const bool mail = m.source != schemas::source_type::manual && m.source != schemas::source_type::file;
      const bool sent = mail && is_them(m.from);
      bool only_them = !(m.to.empty() && m.cc.empty());
      for (const auto* list : {&m.to, &m.cc})
        for (const auto& p : *list) {
          only_them = only_them && is_them(p);
          if (is_them(p))
            note(p);
        }
      if (sent)
        note(m.from);
      if (sent || only_them)
        events.insert(m.event_id);
    }
    people[is_address(id) ? "address" : "contact"].insert(wanted);
    // The contact's entities: their names and aliases are forgotten as mentions too.
    for (const auto& address : people["address"]) {
      auto v = kv_->get(cf_entities, key(org, person_id(address)));
      if (!v)
        continue;
      stored_entity e;
      if (knowledge::decode(*v, e))
        return fail(errc::corruption);
      for (const auto& name : e.aliases)
        if (auto n = normalise_name(name); !n.empty())
          people["name"].insert(n);
      if (auto n = normalise_name(e.name); !n.empty())
        people["name"].insert(n);
      if (!e.contact_id.empty())
        people["contact"].insert(e.contact_id);
    }
    if (events.empty() && people["name"].empty()) {
      out.error = "id: no contact '" + id + "' in this organisation";
      return out;
    }
  }
  if (events.empty() && what != "contact") {
    out.error = "id: no " + what + " '" + id + "' in this organisation";
    return out;
  }
  out.events.assign(events.begin(), events.end());
  for (const auto& [kind, values] : people)
    for (const auto& v : values)
      out.people.push_back(kind + ":" + person_key(org, kind, v));
  return out;
}

errc kv_graph_store::record_forget(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  const auto& org = c.organization_id;
  if (c.events.empty() && c.people.empty()) {
    r.error = "events: this forget names no message (forget_knowledge finds them)";
    return errc::ok;
  }
  for (const auto& id : c.events)
    tx.batch.put(cf_meta, key(meta_tag::forgotten_message, org, id), c.event_id);
  for (const auto& p : c.people)
    if (auto colon = p.find(':'); colon != std::string::npos)
      tx.batch.put(cf_meta, key(meta_tag::forgotten_person, org, p.substr(0, colon), p.substr(colon + 1)), c.event_id);
  tx.batch.put(cf_meta, key(meta_tag::forget_audit, org, c.issued_at, c.event_id), audit_json(c));
  const nlohmann::json pending{{"eventId", c.event_id}, {"before", counts_of(stats(), org)}};
  tx.batch.put(cf_meta, key(meta_tag::rebuild, org), pending.dump());
  return errc::ok;
}

errc kv_graph_store::begin_rebuild(const log_position& pos, const schemas::knowledge_command& c, command_result* result,
                                   apply_outcome* outcome, bool* rebuild) {
  *rebuild = false;
  const auto& org = c.organization_id;
  auto pending = kv_->get(cf_meta, key(meta_tag::rebuild, org));
  if (!pending && pending.error() != errc::not_found)
    return pending.error();
  bool resuming = false;
  if (pending) {
    auto p = nlohmann::json::parse(*pending, nullptr, false);
    resuming = p.is_object() && p.value("eventId", "") == c.event_id;
  }
  if (!resuming) {
    write_txn tx;
    tx.org = org;
    const auto seen = key(meta_tag::seen, org, c.event_id);
    bool first = false;
    if (auto e = mark_seen(tx, seen, pos, &first); e != errc::ok)
      return e;
    if (!first) {
      put_offset(tx, pos);
      *outcome = apply_outcome::duplicate;
      return commit(tx);
    }
    command_result r;
    if (auto e = record_forget(tx, c, r); e != errc::ok)
      return e;
    *outcome = apply_outcome::applied;
    if (!r.error.empty()) {  // nothing changes but the seen eventId and the offset
      reject(tx, seen);
      put_offset(tx, pos);
      result->error = std::move(r.error);
      return commit(tx);
    }
    tx.batch.del(cf_meta, seen);  // written by finish_rebuild
    if (auto e = commit(tx); e != errc::ok)
      return e;
  }
  write_txn tx;
  tx.org = org;
  drop_organization(tx, org);
  if (auto e = commit(tx); e != errc::ok)
    return e;
  // What every forget of messages so far recorded (each undone where the log passes it).
  rebuild_filter f;
  {
    const auto prefix = key(meta_tag::forgotten_message, org, "");
    auto it = kv_->iterate(cf_meta);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
      f.events.emplace(it->key().substr(prefix.size()), it->value());
  }
  {
    const auto prefix = key(meta_tag::forgotten_person, org, "");
    auto it = kv_->iterate(cf_meta);
    for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
      auto parts = split_key(it->key().substr(prefix.size()));
      if (parts.size() == 2)
        f.people[parts[0]].emplace(parts[1], it->value());
    }
  }
  {
    std::lock_guard lock(rebuilds_mutex_);
    rebuilds_[org] = std::move(f);
  }
  *outcome = apply_outcome::applied;
  *rebuild = true;
  return errc::ok;
}

const kv_graph_store::rebuild_filter* kv_graph_store::rebuild_of(const std::string& org) const {
  std::lock_guard lock(rebuilds_mutex_);
  auto it = rebuilds_.find(org);
  return it == rebuilds_.end() ? nullptr : &it->second;
}

kv_graph_store::rebuild_filter* kv_graph_store::rebuild_of(const std::string& org) {
  std::lock_guard lock(rebuilds_mutex_);
  auto it = rebuilds_.find(org);
  return it == rebuilds_.end() ? nullptr : &it->second;
}

bool kv_graph_store::rebuild_skips(const std::string& org, const std::string& event_id) const {
  const auto* f = rebuild_of(org);
  return f && f->events.count(event_id);
}

errc kv_graph_store::rebuild_passed(const schemas::knowledge_command& earlier) {
  auto* f = rebuild_of(earlier.organization_id);
  if (!f)
    return errc::ok;
  std::erase_if(f->events, [&](const auto& kv) { return kv.second == earlier.event_id; });
  for (auto& [_, values] : f->people)
    std::erase_if(values, [&](const auto& kv) { return kv.second == earlier.event_id; });
  write_txn tx;  // it was applied: a redelivery of it is a duplicate
  tx.org = earlier.organization_id;
  tx.batch.put(cf_meta, key(meta_tag::seen, earlier.organization_id, earlier.event_id), "");
  return commit(tx);
}

errc kv_graph_store::finish_rebuild(const log_position& pos, const schemas::knowledge_command& c,
                                    command_result* result) {
  const auto& org = c.organization_id;
  nlohmann::json before;
  if (auto pending = kv_->get(cf_meta, key(meta_tag::rebuild, org)); pending) {
    auto p = nlohmann::json::parse(*pending, nullptr, false);
    if (p.is_object())
      before = p.value("before", nlohmann::json::object());
  }
  {
    std::lock_guard lock(rebuilds_mutex_);
    rebuilds_.erase(org);
  }
  write_txn tx;
  tx.org = org;
  tx.batch.put(cf_meta, key(meta_tag::seen, org, c.event_id), "");
  tx.batch.del(cf_meta, key(meta_tag::rebuild, org));
  put_offset(tx, pos);
  if (auto e = commit(tx); e != errc::ok)
    return e;
  const auto after = counts_of(stats(), org);
  for (auto& [k, v] : after.items()) {
    const auto b = before.value(k, std::uint64_t{0});
    const auto a = v.get<std::uint64_t>();
    result->forgotten[k] = b > a ? b - a : 0;
  }
  return compact_organization(org);
}

const schemas::inbound_message* kv_graph_store::redacted(const schemas::inbound_message* m,
                                                         std::optional<schemas::inbound_message>& copy) const {
  const auto* f = m ? rebuild_of(m->organization_id) : nullptr;
  if (!f || f->people.empty())
    return m;
  const auto& people = f->people;
  const auto& org = m->organization_id;
  auto has = [&](const char* kind, const std::string& v) {
    auto it = people.find(kind);
    return it != people.end() && it->second.count(person_key(org, kind, v));
  };
  auto gone = [&](const schemas::participant& p) {
    return (!p.address.empty() && has("address", lower_ascii(p.address))) ||
           (!p.contact_id.empty() && has("contact", p.contact_id));
  };
  copy = *m;
  std::erase_if(copy->to, gone);
  std::erase_if(copy->cc, gone);
  std::erase_if(copy->contact_ids, [&](const std::string& id) { return has("contact", id); });
  return &*copy;
}

bool kv_graph_store::forgotten_mention(const std::string& org, const schemas::entity_mention& m) const {
  const auto* f = rebuild_of(org);
  if (!f || f->people.empty())
    return false;
  auto has = [&](const char* kind, const std::string& v) {
    auto it = f->people.find(kind);
    return it != f->people.end() && it->second.count(person_key(org, kind, v));
  };
  return has("name", normalise_name(m.value)) || (!m.address.empty() && has("address", lower_ascii(m.address)));
}

std::vector<std::string> kv_graph_store::forget_audit(const std::string& org) const {
  std::vector<std::string> out;
  const auto prefix = key(meta_tag::forget_audit, org, "");
  auto it = kv_->iterate(cf_meta);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next())
    out.emplace_back(it->value());
  return out;
}

errc kv_graph_store::forget(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  const auto& org = c.organization_id;
  // The audit row (meta "f", organisation, issuedAt, eventId): kept through any forget, the
  // organisation's own included; rejected forgets write none (reject() clears the batch).
  tx.batch.put(cf_meta, key(meta_tag::forget_audit, org, c.issued_at, c.event_id), audit_json(c));
  if (c.what == "organization") {
    if (c.id != org) {
      r.error = "id: an organisation forgets only itself ('" + org + "'), not '" + c.id + "'";
      return errc::ok;
    }
    r.forgotten = drop_organization(tx, org);
    // The command's own seen row stays (the batch wrote it before this ran), so a redelivery
    // of this forget is a duplicate.
    tx.batch.put(cf_meta, key(meta_tag::seen, org, c.event_id), "");
    r.organization_forgotten = true;
    return errc::ok;
  }
  if (c.what == schemas::retention_kind)
    return retain(tx, c, r);
  if (schemas::forgets_messages(c.what)) {
    // Applied by begin_rebuild .. finish_rebuild, which need engram-log read back: only the
    // store stage with a log source does that (actors/store/store_writer.cpp).
    r.error =
        "what: forgetting a " + c.what + " rebuilds the organisation from engram-log, which this process cannot read";
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
  if (auto e = drop(tx, key(meta_tag::counter, org, "entries"), 1); e != errc::ok)
    return e;
  if (relations)
    if (auto e = drop(tx, key(meta_tag::counter, org, "relations"), relations); e != errc::ok)
      return e;
  r.forgotten["entries"] = 1;
  r.forgotten["relations"] = relations;
  r.forgotten["restored"] = restored;
  return errc::ok;
}

namespace {

/// What an entry's source says once its message is no longer kept (retention).
constexpr const char* retained_no_longer = "retained no longer";

}  // namespace

errc kv_graph_store::messages_sent_before(
    const std::string& org, std::int64_t before_ms,
    const std::function<bool(const std::string&, const std::string&)>& visit) const {
  const auto prefix = key(org, "");
  auto it = kv_->iterate(cf_by_thread);
  for (it->seek(prefix); it->valid() && it->key().starts_with(prefix); it->next()) {
    auto parts = split_key(it->key());  // org, thread, "message" | "entry", id
    if (parts.size() != 4 || parts[2] != "message")
      continue;
    if (auto sent = due_ms(std::string(it->value())); sent && *sent < before_ms && !visit(parts[1], parts[3]))
      break;
  }
  return it->status();
}

bool kv_graph_store::has_retention_due(const std::string& org, std::int64_t before_ms) const {
  bool due = false;
  (void)messages_sent_before(org, before_ms, [&due](const std::string&, const std::string&) {
    due = true;
    return false;  // one is enough
  });
  return due;
}

errc kv_graph_store::mark_retained(write_txn& tx, const std::string& org, const std::string& id,
                                   const std::map<std::string, std::string>& events, bool* changed, bool* gone) {
  auto raw = kv_->get(cf_entries, key(org, id));
  if (!raw) {
    *gone = raw.error() == errc::not_found;
    return *gone ? errc::ok : raw.error();
  }
  stored_entry seen;
  if (knowledge::decode(*raw, seen))
    return errc::corruption;
  auto from_these = [&](const knowledge::source_ref& src) {
    return events.count(src.event_id) && src.source_id != retained_no_longer;
  };
  // The sources moved out of the record are marked in their own rows.
  bool moved_marked = false;
  if (seen.sources_moved)
    if (auto e = visit_moved(org, id,
                             [&](std::string_view row, const knowledge::source_ref& src) {
                               if (!from_these(src))
                                 return;
                               auto marked = src;
                               marked.source_id = retained_no_longer;
                               tx.batch.put(cf_entry_sources, std::string(row), knowledge::encode(marked));
                               moved_marked = true;
                             });
        e != errc::ok)
      return e;
  if (std::none_of(seen.sources.begin(), seen.sources.end(), from_these) && !moved_marked)
    return errc::ok;  // only changed entries are loaded (and written, and answered)
  stored_entry* doc = nullptr;
  if (auto e = load_entry(tx, org, id, &doc); e != errc::ok)
    return e;
  for (auto& src : doc->sources)
    if (from_these(src))
      src.source_id = retained_no_longer;
  doc->source_id = doc->sources.front().source_id;
  *changed = true;
  return errc::ok;
}

errc kv_graph_store::retain(write_txn& tx, const schemas::knowledge_command& c, command_result& r) {
  const auto& org = c.organization_id;
  const auto cutoff = due_ms(c.id);
  if (!cutoff) {
    r.error = "id: a retention forget names its cutoff as an RFC 3339 time, not '" + c.id + "'";
    return errc::ok;
  }
  const auto limit = c.limit > 0 ? static_cast<std::size_t>(c.limit) : std::numeric_limits<std::size_t>::max();
  // The messages sent before the cutoff, in key order (thread, eventId): at most `limit`.
  std::map<std::string, std::string> events;  // eventId -> thread
  if (auto e = messages_sent_before(org, *cutoff,
                                    [&](const std::string& thread, const std::string& event) {
                                      events.emplace(event, thread);
                                      return events.size() < limit;
                                    });
      e != errc::ok)
    return e;
  for (const auto& [event, thread] : events) {
    tx.batch.del(cf_messages, key(org, event));
    tx.batch.del(cf_by_thread, key(org, thread, "message", event));
  }
  std::uint64_t passages = 0;
  if (auto e = remove_passages(tx, org, events, &passages); e != errc::ok)
    return e;
  // Their entries stay; each source that was one of these messages says so. An entry is
  // found through its by_thread row under each thread its messages came from; a thread left
  // with no message needs its rows no more.
  std::map<std::string, bool> threads;  // thread -> no message of it stays
  for (const auto& [_, thread] : events)
    threads.emplace(thread, false);
  for (auto& [thread, emptied] : threads) {
    const auto left = ids_under(cf_by_thread, key(org, thread, "message", ""));
    emptied = std::all_of(left.begin(), left.end(), [&](const std::string& event) { return events.count(event) > 0; });
  }
  std::uint64_t marked = 0;
  // An entry merged from two of these threads is marked (and counted) once.
  std::map<std::string, bool> visited;  // entry id -> not stored
  for (const auto& [thread, emptied] : threads)
    for (const auto& id : ids_under(cf_by_thread, key(org, thread, "entry", ""))) {
      auto [at, first] = visited.emplace(id, false);
      bool changed = false;
      if (first)
        if (auto e = mark_retained(tx, org, id, events, &changed, &at->second); e != errc::ok)
          return e;
      const bool gone = at->second;
      marked += changed;
      // A forgotten entry finds the rows of the threads whose messages are still stored.
      if (emptied || gone)
        tx.batch.del(cf_by_thread, key(org, thread, "entry", id));
    }
  r.forgotten["messages"] = events.size();
  r.forgotten["passages"] = passages;
  r.forgotten["entriesMarked"] = marked;
  return errc::ok;
}

}  // namespace engram::storage::detail
