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
/// A candidate's messages looked at for one shared with the message's participants.
constexpr std::size_t max_messages_looked_at = 64;

bool is_kind(const std::string& id, std::string_view prefix) { return id.rfind(prefix, 0) == 0; }

/// The words an entity is compared by: a person's folded name without titles, an
/// organisation's name without its legal form.
std::vector<std::string> name_words(const std::string& name, bool people) {
  return knowledge::person_words(people ? knowledge::fold_name(name) : knowledge::organisation_key(name));
}

}  // namespace

void kv_graph_store::put_name_keys(write_txn& tx, const std::string& org, std::string_view name,
                                   const std::string& id) const {
  std::set<std::string> keys{normalise_name(name), knowledge::fold_name(name)};
  if (is_kind(id, "org:")) {
    keys.insert(knowledge::organisation_key(name));
  } else if (!is_kind(id, "person:")) {
    if (auto canonical = knowledge::canonical_alias(name))
      keys.insert(*canonical);
    // "Cambridge, MA", "Portland, Oregon": also the place before its region, unless a
    // place of that name is known already ("Cambridge, UK" after "Cambridge, MA").
    if (auto comma = name.find(','); comma != std::string_view::npos && comma > 0)
      if (auto head = knowledge::fold_name(name.substr(0, comma)); resolve_name(&tx, org, head, "entity:").empty())
        keys.insert(head);
    // "Globex Relay": also "Relay", when Globex is a known organisation and no other
    // thing is known by "Relay" yet.
    const auto words = names::split_words(knowledge::fold_name(name));
    if (words.size() >= 2 && !resolve_name(&tx, org, words.front(), "org:").empty()) {
      std::string rest;
      for (std::size_t i = 1; i < words.size(); ++i)
        rest += (rest.empty() ? "" : " ") + words[i];
      if (rest.size() >= 3 && resolve_name(&tx, org, rest, "entity:").empty())
        keys.insert(rest);
    }
  }
  for (const auto& k : keys)
    if (!k.empty()) {
      tx.batch.put(cf_entity_names, key(org, k, id), "");
      tx.names[key(org, k)] = id;
    }
}

namespace {

/// The ids of the people taking part in a message (from, to, cc).
std::set<std::string> participants(const schemas::inbound_message& m) {
  std::set<std::string> ids{person_id(m.from.address)};
  for (const auto* list : {&m.to, &m.cc})
    for (const auto& p : *list)
      ids.insert(person_id(p.address));
  return ids;
}

}  // namespace

const stored_entity* kv_graph_store::peek_entity(const write_txn& tx, const std::string& org, const std::string& id,
                                                 stored_entity& buffer) const {
  if (auto it = tx.entities.find(id); it != tx.entities.end())
    return &it->second;
  if (auto v = kv_->get(cf_entities, key(org, id)); v && !knowledge::decode(*v, buffer))
    return &buffer;
  return nullptr;
}

bool kv_graph_store::has_a_region(const write_txn& tx, const std::string& org, const std::string& id) const {
  stored_entity loaded;
  const stored_entity* e = peek_entity(tx, org, id, loaded);
  if (!e)
    return false;
  auto with_comma = [](const std::string& n) { return n.find(',') != std::string::npos; };
  return with_comma(e->name) || std::any_of(e->aliases.begin(), e->aliases.end(), with_comma);
}

void kv_graph_store::note_acquaintances(const schemas::inbound_message& m,
                                        std::vector<knowledge::resolution_candidate>& candidates) const {
  const auto& org = m.organization_id;
  const auto people = participants(m);
  for (auto& c : candidates) {
    auto prefix = key(org, c.id, "message", "");
    auto it = kv_->iterate(cf_links);
    std::size_t seen = 0;
    for (it->seek(prefix);
         it->valid() && it->key().starts_with(prefix) && !c.acquainted && seen < max_messages_looked_at;
         it->next(), ++seen) {
      const std::string event(it->key().substr(prefix.size()));
      for (const auto& p : people)
        if (p != c.id && kv_->get(cf_links, key(org, p, "message", event))) {
          c.acquainted = true;
          break;
        }
    }
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
  const auto in_message = participants(m);
  std::vector<knowledge::resolution_candidate> out;
  for (const auto& id : ids) {
    stored_entity loaded;
    const stored_entity* e = peek_entity(tx, org, id, loaded);
    if (!e || e->kind != kind || tx.deleted_entities.count(id))
      continue;
    knowledge::resolution_candidate c;
    c.id = id;
    c.names.push_back(name_words(e->name, people));
    for (const auto& a : e->aliases)
      c.names.push_back(name_words(a, people));
    if (auto words = knowledge::address_words(e->address); people && !words.empty())
      c.names.push_back(std::move(words));
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
  auto joined = [&](std::string id, std::string why) {
    *note = {mention.text.empty() ? mention.value : mention.text, m.event_id, std::move(why)};
    return id;
  };
  // By its words: a short form of a person or organisation known by a longer name.
  auto by_its_words = [&]() -> std::string {
    auto candidates = resolution_candidates(tx, m, name_words(mention.value, person), person);
    auto resolve = [&] {
      return person ? knowledge::resolve_person(mention.value, candidates)
                    : knowledge::resolve_organisation(mention.value, candidates);
    };
    auto r = resolve();
    if (!r && candidates.size() > 1) {  // several: the one the participants know, if any
      note_acquaintances(m, candidates);
      r = resolve();
    }
    if (!r)
      return {};
    *by_words = r->short_form;
    return joined(r->id, r->reason);
  };
  // A first name known only as itself (read in text before anyone of that name was known,
  // or while two were) yields to a person with that name the message points to.
  auto or_better = [&](std::string id) {
    if (!person || id.rfind("person:~", 0) != 0 || id.find(' ') != std::string::npos)
      return id;
    auto other = by_its_words();
    return other.empty() ? id : other;
  };
  if (auto id = resolve_name(&tx, org, normalise_name(mention.value), kind_prefix); !id.empty())
    return or_better(id);
  // The same name folded, without its legal form, or as the alias of a known name.
  const auto folded = knowledge::fold_name(mention.value);
  if (auto id = resolve_name(&tx, org, folded, kind_prefix); !id.empty()) {
    auto better = or_better(id);
    return better != id ? better : joined(id, "the same name without diacritics, case or punctuation");
  }
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
    // "Cambridge, MA" is the "Cambridge" known without a region, never another region's.
    if (auto comma = mention.value.find(','); comma != std::string::npos && comma > 0)
      if (auto id = resolve_name(&tx, org, knowledge::fold_name(mention.value.substr(0, comma)), kind_prefix);
          !id.empty() && !has_a_region(tx, org, id))
        return joined(id, "the same place without its region");
    if (auto canonical = knowledge::canonical_alias(mention.value); canonical && *canonical != folded)
      if (auto id = resolve_name(&tx, org, *canonical, kind_prefix); !id.empty())
        return joined(id, "an alias of " + *canonical);
    return {};
  }
  return by_its_words();
}

}  // namespace engram::storage::detail
