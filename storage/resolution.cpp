// Mentions resolved to the entities they name (knowledge/resolve.hpp): the keys a name is
// found by, and the lookup a mention goes through (as written; folded, without its legal
// form or as an alias; then by its words), in the apply batch, so a replay resolves the same.
#include "knowledge/resolve.hpp"
#include "storage/internal/graph_store_impl.hpp"

namespace engram::storage::detail {

namespace {

/// Candidates looked at for one mention at most (a very common first name in a large
/// organisation): beyond it the mention stays unresolved rather than slow the apply.
constexpr std::size_t max_candidates = 256;

bool is_kind(const std::string& id, std::string_view prefix) { return id.rfind(prefix, 0) == 0; }

/// The words an entity is compared by: a person's folded name without titles, an
/// organisation's name without its legal form.
std::vector<std::string> name_words(const std::string& name, bool people) {
  return knowledge::person_words(people ? knowledge::fold_name(name) : knowledge::organisation_key(name));
}

}  // namespace

void put_name_keys(write_txn& tx, const std::string& org, std::string_view name, const std::string& id) {
  std::set<std::string> keys{normalise_name(name), knowledge::fold_name(name)};
  if (is_kind(id, "org:"))
    keys.insert(knowledge::organisation_key(name));
  else if (!is_kind(id, "person:"))
    if (auto canonical = knowledge::canonical_alias(name))
      keys.insert(*canonical);
  for (const auto& k : keys)
    if (!k.empty()) {
      tx.batch.put(cf_entity_names, key(org, k, id), "");
      tx.names[key(org, k)] = id;
    }
}

std::vector<knowledge::resolution_candidate> kv_graph_store::resolution_candidates(
    const write_txn& tx, const schemas::inbound_message& m, const std::vector<std::string>& words, bool people) const {
  const auto& org = m.organization_id;
  const char* kind = people ? "person" : "organization";
  std::set<std::string> ids;
  for (const auto& w : words)
    if (w.size() >= 2)
      for (auto& id : entities_.with_word(org, w, people))
        ids.insert(std::move(id));
  for (const auto& [id, e] : tx.entities)  // written by this event: not in the index yet
    if (e.kind == kind)
      ids.insert(id);
  if (ids.size() > max_candidates)
    return {};
  std::set<std::string> in_message{person_id(m.from.address)};
  for (const auto* list : {&m.to, &m.cc})
    for (const auto& p : *list)
      in_message.insert(person_id(p.address));
  std::vector<knowledge::resolution_candidate> out;
  for (const auto& id : ids) {
    stored_entity loaded;
    const stored_entity* e = nullptr;
    if (auto it = tx.entities.find(id); it != tx.entities.end()) {
      e = &it->second;
    } else if (auto v = kv_->get(cf_entities, key(org, id)); v && !knowledge::decode(*v, loaded)) {
      e = &loaded;
    }
    if (!e || e->kind != kind || tx.deleted_entities.count(id))
      continue;
    knowledge::resolution_candidate c;
    c.id = id;
    c.names.push_back(name_words(e->name, people));
    for (const auto& a : e->aliases)
      c.names.push_back(name_words(a, people));
    c.in_message = in_message.count(id) > 0;
    c.in_thread = c.in_message || static_cast<bool>(kv_->get(cf_links, key(org, id, "thread", m.thread_or_event())));
    c.has_address = !e->address.empty();
    out.push_back(std::move(c));
  }
  return out;
}

std::string kv_graph_store::resolve_mention(const write_txn& tx, const schemas::inbound_message& m,
                                            const schemas::entity_mention& mention, std::string_view kind_prefix,
                                            knowledge::resolution_note* note, bool* by_words) const {
  const auto& org = m.organization_id;
  const bool person = kind_prefix == "person:", company = kind_prefix == "org:";
  *by_words = false;
  if (auto id = resolve_name(&tx, org, normalise_name(mention.value), kind_prefix); !id.empty())
    return id;
  auto joined = [&](std::string id, std::string why) {
    *note = {mention.text.empty() ? mention.value : mention.text, m.event_id, std::move(why)};
    return id;
  };
  // The same name folded, without its legal form, or as the alias of a known name.
  const auto folded = knowledge::fold_name(mention.value);
  if (auto id = resolve_name(&tx, org, folded, kind_prefix); !id.empty())
    return joined(id, "the same name without diacritics, case or punctuation");
  if (company) {
    if (auto id = resolve_name(&tx, org, knowledge::organisation_key(mention.value), kind_prefix); !id.empty())
      return joined(id, "the same organisation without its legal form");
    // Read as a company, but the name of a person known by it (a contact's full name).
    for (const auto* form : {&mention.value, &folded})
      if (auto id = resolve_name(&tx, org, normalise_name(*form), "person:"); !id.empty())
        if (knowledge::person_words(folded).size() > 1)
          return joined(id, "the name of a person, read as a company");
  }
  if (!person && !company) {
    if (auto canonical = knowledge::canonical_alias(mention.value); canonical && *canonical != folded)
      if (auto id = resolve_name(&tx, org, *canonical, kind_prefix); !id.empty())
        return joined(id, "an alias of " + *canonical);
    return {};
  }
  // By its words: a short form of a person or organisation known by a longer name.
  const auto candidates = resolution_candidates(tx, m, name_words(mention.value, person), person);
  auto r = person ? knowledge::resolve_person(mention.value, candidates)
                  : knowledge::resolve_organisation(mention.value, candidates);
  if (!r)
    return {};
  *by_words = r->short_form;
  return joined(r->id, r->reason);
}

}  // namespace engram::storage::detail
