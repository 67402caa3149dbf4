#include "storage/internal/entity_index.hpp"
#include "base/text.hpp"

#include "knowledge/resolve.hpp"
#include "knowledge/write_rules.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>

namespace engram::storage::detail {

namespace {

/// The words a person or an organisation is found by ("p"/"o" + folded word); none for other
/// entities.
std::vector<std::string> words_of(const knowledge::stored_entity& e) {
  const bool person = e.kind == "person", org = e.kind == "organization";
  std::set<std::string> out;
  if (!person && !org)
    return {};
  auto add = [&](const std::string& name) {
    const auto folded = person ? knowledge::fold_name(name) : knowledge::organisation_key(name);
    for (auto& w : knowledge::person_words(folded))
      out.insert((person ? "p" : "o") + w);
  };
  add(e.name);
  for (const auto& a : e.aliases)
    add(a);
  if (person)
    for (const auto& w : knowledge::address_words(e.address))
      out.insert("p" + w);
  return {out.begin(), out.end()};
}

/// The distinct 3-byte sequences of `texts`, each packed in the low 24 bits, ascending.
std::vector<std::uint32_t> trigrams(std::initializer_list<std::string_view> texts) {
  std::vector<std::uint32_t> out;
  for (auto t : texts)
    for (std::size_t i = 0; i + 3 <= t.size(); ++i)
      out.push_back(std::uint32_t(static_cast<unsigned char>(t[i])) << 16 |
                    std::uint32_t(static_cast<unsigned char>(t[i + 1])) << 8 | static_cast<unsigned char>(t[i + 2]));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

void entity_index::index_grams(grams& g, const std::vector<std::uint32_t>& trigrams, std::uint32_t ordinal, bool add) {
  for (auto t : trigrams) {
    auto& list = g.lists[t];
    if (add) {
      if (list.empty() || list.back() < ordinal)
        list.push_back(ordinal);  // the usual case: a new entity has the largest ordinal
      else if (auto at = std::lower_bound(list.begin(), list.end(), ordinal); at == list.end() || *at != ordinal)
        list.insert(at, ordinal);
    } else {
      if (auto at = std::lower_bound(list.begin(), list.end(), ordinal); at != list.end() && *at == ordinal)
        list.erase(at);
      if (list.empty())
        g.lists.erase(t);
    }
  }
}

void entity_index::drop_words(std::map<std::string, std::set<std::string>>& words, const std::string& id,
                              const row& r) {
  for (const auto& w : r.words)
    if (auto it = words.find(w); it != words.end()) {
      it->second.erase(id);
      if (it->second.empty())
        words.erase(it);
    }
}

std::vector<std::string> entity_index::with_word(const std::string& org, const std::string& word, bool people) const {
  std::shared_lock lock(mutex_);
  auto o = words_.find(org);
  if (o == words_.end())
    return {};
  auto it = o->second.find((people ? "p" : "o") + word);
  if (it == o->second.end())
    return {};
  return {it->second.begin(), it->second.end()};
}

void entity_index::put(std::string_view org, const knowledge::stored_entity& e) {
  row r;
  r.name = e.name;
  r.type = e.entity_type.empty() ? e.kind : e.entity_type;
  r.names_lc = lower_ascii(e.name);
  r.type_lc = lower_ascii(r.type);
  for (const auto& o : e.observations) {
    r.observations_lc += lower_ascii(o);
    r.observations_lc += '\n';
  }
  r.observations = e.observations;
  r.normalised.push_back(normalise_name(e.name));
  for (const auto& a : e.aliases)
    r.normalised.push_back(normalise_name(a));
  r.words = words_of(e);
  const auto fresh = trigrams({r.names_lc, r.type_lc, r.observations_lc});  // outside the lock
  std::unique_lock lock(mutex_);
  auto& entities = orgs_[std::string(org)];
  auto& g = grams_[std::string(org)];
  auto [it, created] = entities.try_emplace(e.id);
  auto& slot = it->second;
  auto& words = words_[std::string(org)];
  drop_words(words, e.id, slot);
  for (const auto& w : r.words)
    words[w].insert(e.id);
  // Ingest puts a person again for every message that names them: the index changes only
  // when the searched text does.
  const bool same_text =
      !created && slot.names_lc == r.names_lc && slot.type_lc == r.type_lc && slot.observations_lc == r.observations_lc;
  if (created) {
    slot.ordinal = static_cast<std::uint32_t>(g.rows.size());
    g.rows.push_back(&*it);
  } else if (!same_text) {
    index_grams(g, trigrams({slot.names_lc, slot.type_lc, slot.observations_lc}), slot.ordinal, false);
  }
  r.ordinal = slot.ordinal;
  r.out = std::move(slot.out);  // the edges stay: only the entity's own fields change
  r.in = std::move(slot.in);
  slot = std::move(r);
  if (!same_text)
    index_grams(g, fresh, slot.ordinal, true);
}

void entity_index::drop(const std::string& org) {
  std::unique_lock lock(mutex_);
  orgs_.erase(org);
  words_.erase(org);
  grams_.erase(org);
}

void entity_index::remove(std::string_view org, const std::string& id) {
  std::unique_lock lock(mutex_);
  auto o = orgs_.find(std::string(org));
  if (o == orgs_.end())
    return;
  auto it = o->second.find(id);
  if (it == o->second.end())
    return;
  // The store deletes an entity's edges with it; any left would point at a freed node. (An
  // edge to itself goes with its own lists: erasing from them here would pull the list being
  // walked from under the loop.)
  for (const auto* list : {&it->second.out, &it->second.in})
    for (const auto& a : *list)
      if (a.other != &*it)
        for (auto* back : {&a.other->second.out, &a.other->second.in})
          std::erase_if(*back, [&](const adjacent& b) { return b.other == &*it; });
  drop_words(words_[std::string(org)], id, it->second);
  auto& g = grams_[std::string(org)];
  const auto& r = it->second;
  index_grams(g, trigrams({r.names_lc, r.type_lc, r.observations_lc}), r.ordinal, false);
  g.rows[r.ordinal] = nullptr;
  o->second.erase(it);
}

void entity_index::add_edge(std::string_view org, const std::string& from, const std::string& label,
                            const std::string& to, double weight) {
  std::unique_lock lock(mutex_);
  auto o = orgs_.find(std::string(org));
  if (o == orgs_.end())
    return;
  auto f = o->second.find(from), t = o->second.find(to);
  if (f == o->second.end() || t == o->second.end())
    return;
  const std::string* l = &*labels_.insert(label).first;
  for (auto& a : f->second.out)
    if (a.other == &*t && a.label == l) {
      a.weight = weight;
      for (auto& b : t->second.in)  // the same edge seen from its other end
        if (b.other == &*f && b.label == l)
          b.weight = weight;
      return;
    }
  f->second.out.push_back({&*t, l, weight});
  t->second.in.push_back({&*f, l, weight});
}

void entity_index::remove_edge(std::string_view org, const std::string& from, const std::string& label,
                               const std::string& to) {
  std::unique_lock lock(mutex_);
  auto o = orgs_.find(std::string(org));
  auto l = labels_.find(label);
  if (o == orgs_.end() || l == labels_.end())
    return;
  auto f = o->second.find(from), t = o->second.find(to);
  if (f == o->second.end() || t == o->second.end())
    return;
  std::erase_if(f->second.out, [&](const adjacent& a) { return a.other == &*t && a.label == &*l; });
  std::erase_if(t->second.in, [&](const adjacent& a) { return a.other == &*f && a.label == &*l; });
}

void entity_index::neighbours(
    const std::string& org, const std::string& id, bool outgoing, bool incoming,
    const std::function<void(const std::string&, const std::string&, double, bool)>& fn) const {
  std::shared_lock lock(mutex_);
  auto o = orgs_.find(org);
  if (o == orgs_.end())
    return;
  auto it = o->second.find(id);
  if (it == o->second.end())
    return;
  if (outgoing)
    for (const auto& a : it->second.out)
      fn(a.other->first, *a.label, a.weight, true);
  if (incoming)
    for (const auto& a : it->second.in)
      fn(a.other->first, *a.label, a.weight, false);
}

void entity_index::scan(const std::string& org, const std::function<void(const entity_summary&)>& fn) const {
  std::shared_lock lock(mutex_);
  auto it = orgs_.find(org);
  if (it == orgs_.end())
    return;
  for (const auto& [id, r] : it->second)
    fn(entity_summary{id, r.name, r.type, r.names_lc, r.type_lc, r.observations_lc, r.normalised});
}

void entity_index::scan_containing(const std::string& org, std::string_view needle,
                                   const std::function<void(const entity_summary&)>& fn) const {
  if (needle.size() < 3)
    return scan(org, fn);
  std::shared_lock lock(mutex_);
  auto g = grams_.find(org);
  if (g == grams_.end())
    return;
  // Every sequence of the needle must be held; the fewest holders are the candidates.
  const std::vector<std::uint32_t>* fewest = nullptr;
  for (auto t : trigrams({needle})) {
    auto list = g->second.lists.find(t);
    if (list == g->second.lists.end())
      return;
    if (!fewest || list->second.size() < fewest->size())
      fewest = &list->second;
  }
  for (auto ordinal : *fewest)
    if (const auto* e = g->second.rows[ordinal]) {
      const auto& r = e->second;
      fn(entity_summary{e->first, r.name, r.type, r.names_lc, r.type_lc, r.observations_lc, r.normalised});
    }
}

std::vector<entity_card> entity_index::cards(const std::string& org, const std::vector<std::string>& ids,
                                             bool incoming) const {
  std::vector<entity_card> out;
  std::shared_lock lock(mutex_);
  auto o = orgs_.find(org);
  if (o == orgs_.end())
    return out;
  out.reserve(ids.size());
  for (const auto& id : ids) {
    auto it = o->second.find(id);
    if (it == o->second.end())
      continue;
    const auto& r = it->second;
    auto& c = out.emplace_back(entity_card{id, r.name, r.type, r.observations, {}});
    auto add = [&](const std::vector<adjacent>& list, bool outgoing) {
      const auto first = c.edges.size();
      for (const auto& a : list)
        c.edges.push_back({a.other->first, a.other->second.name, *a.label, outgoing});
      std::sort(c.edges.begin() + static_cast<std::ptrdiff_t>(first), c.edges.end(),
                [](const entity_card::edge& x, const entity_card::edge& y) {
                  return std::tie(x.label, x.other_id) < std::tie(y.label, y.other_id);
                });
    };
    add(r.out, true);
    if (incoming)
      add(r.in, false);
  }
  return out;
}

bool entity_index::find(const std::string& org, const std::string& id, std::string* name, std::string* type) const {
  std::shared_lock lock(mutex_);
  auto o = orgs_.find(org);
  if (o == orgs_.end())
    return false;
  auto it = o->second.find(id);
  if (it == o->second.end())
    return false;
  *name = it->second.name;
  *type = it->second.type;
  return true;
}

std::size_t entity_index::memory_bytes() const {
  auto heap = [](const std::string& x) { return x.size() > 15 ? x.capacity() + 1 : 0; };
  constexpr std::size_t tree_node = 4 * sizeof(void*), hash_node = 2 * sizeof(void*);
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [_, entities] : orgs_)
    for (const auto& [id, r] : entities) {
      n += tree_node + sizeof(node) + heap(id);
      for (const auto* x : {&r.name, &r.type, &r.names_lc, &r.type_lc, &r.observations_lc})
        n += heap(*x);
      for (const auto* list : {&r.observations, &r.normalised, &r.words}) {
        n += list->capacity() * sizeof(std::string);
        for (const auto& x : *list)
          n += heap(x);
      }
      n += (r.out.capacity() + r.in.capacity()) * sizeof(adjacent);
    }
  for (const auto& [_, g] : grams_) {
    n += g.rows.capacity() * sizeof(void*) + g.lists.bucket_count() * sizeof(void*);
    for (const auto& [__, list] : g.lists)
      n += hash_node + sizeof(std::uint32_t) + sizeof(list) + list.capacity() * sizeof(std::uint32_t);
  }
  for (const auto& [_, words] : words_)
    for (const auto& [word, ids] : words)
      n += tree_node + sizeof(word) + sizeof(ids) + heap(word) + ids.size() * (tree_node + sizeof(std::string));
  return n;
}

std::size_t entity_index::size() const {
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [org, rows] : orgs_)
    n += rows.size();
  return n;
}

}  // namespace engram::storage::detail
