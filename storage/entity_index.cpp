#include "storage/internal/entity_index.hpp"

#include "knowledge/write_rules.hpp"

#include <algorithm>
#include <mutex>

namespace engram::storage::detail {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

void entity_index::put(std::string_view org, const knowledge::stored_entity& e) {
  row r;
  r.name = e.name;
  r.type = e.entity_type.empty() ? e.kind : e.entity_type;
  r.names_lc = lower(e.name);
  r.type_lc = lower(r.type);
  for (const auto& o : e.observations) {
    r.observations_lc += lower(o);
    r.observations_lc += '\n';
  }
  r.normalised.push_back(knowledge::normalise_name(e.name));
  for (const auto& a : e.aliases)
    r.normalised.push_back(knowledge::normalise_name(a));
  std::unique_lock lock(mutex_);
  orgs_[std::string(org)][e.id] = std::move(r);
}

void entity_index::remove(std::string_view org, const std::string& id) {
  std::unique_lock lock(mutex_);
  if (auto it = orgs_.find(std::string(org)); it != orgs_.end())
    it->second.erase(id);
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
