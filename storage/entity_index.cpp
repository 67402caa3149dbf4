#include "storage/internal/entity_index.hpp"
#include "base/text.hpp"

#include "knowledge/write_rules.hpp"

#include <algorithm>
#include <mutex>

namespace engram::storage::detail {

namespace {}  // namespace

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
  r.normalised.push_back(normalise_name(e.name));
  for (const auto& a : e.aliases)
    r.normalised.push_back(normalise_name(a));
  std::unique_lock lock(mutex_);
  auto& slot = orgs_[std::string(org)][e.id];
  r.out = std::move(slot.out);  // the edges stay: only the entity's own fields change
  r.in = std::move(slot.in);
  slot = std::move(r);
}

void entity_index::remove(std::string_view org, const std::string& id) {
  std::unique_lock lock(mutex_);
  auto o = orgs_.find(std::string(org));
  if (o == orgs_.end())
    return;
  auto it = o->second.find(id);
  if (it == o->second.end())
    return;
  // The store deletes an entity's edges with it; any left would point at a freed key.
  for (const auto* list : {&it->second.out, &it->second.in})
    for (const auto& a : *list)
      if (auto other = o->second.find(*a.other); other != o->second.end())
        for (auto* back : {&other->second.out, &other->second.in})
          std::erase_if(*back, [&](const adjacent& b) { return b.other == &it->first; });
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
    if (a.other == &t->first && a.label == l) {
      a.weight = weight;
      for (auto& b : t->second.in)  // the same edge seen from its other end
        if (b.other == &f->first && b.label == l)
          b.weight = weight;
      return;
    }
  f->second.out.push_back({&t->first, l, weight});
  t->second.in.push_back({&f->first, l, weight});
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
  std::erase_if(f->second.out, [&](const adjacent& a) { return a.other == &t->first && a.label == &*l; });
  std::erase_if(t->second.in, [&](const adjacent& a) { return a.other == &f->first && a.label == &*l; });
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
      fn(*a.other, *a.label, a.weight, true);
  if (incoming)
    for (const auto& a : it->second.in)
      fn(*a.other, *a.label, a.weight, false);
}

void entity_index::scan(const std::string& org, const std::function<void(const entity_summary&)>& fn) const {
  std::shared_lock lock(mutex_);
  auto it = orgs_.find(org);
  if (it == orgs_.end())
    return;
  for (const auto& [id, r] : it->second)
    fn(entity_summary{id, r.name, r.type, r.names_lc, r.type_lc, r.observations_lc, r.normalised});
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

std::size_t entity_index::size() const {
  std::shared_lock lock(mutex_);
  std::size_t n = 0;
  for (const auto& [org, rows] : orgs_)
    n += rows.size();
  return n;
}

}  // namespace engram::storage::detail
