#pragma once
// The entities of every organisation in memory, for search: names, aliases, types and
// observations, as shown and lower-cased. Derived from the entities column family (the
// truth) when the store opens, then kept up to date by the writer after each batch it
// commits. A search (the entity tools' fuzzy search, the memory server's search_nodes) scans
// these instead of reading and parsing every entity from RocksDB.

#include "knowledge/entry.hpp"
#include "storage/graph_store.hpp"

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace engram::storage::detail {

class entity_index {
public:
  /// Adds or replaces an entity (from its stored JSON's decoded form).
  void put(std::string_view org, const knowledge::stored_entity& e);
  void remove(std::string_view org, const std::string& id);
  /// Calls `fn` for each entity of the organisation, in id order, under a shared lock.
  void scan(const std::string& org, const std::function<void(const entity_summary&)>& fn) const;
  /// An entity's name and shown type; false when the organisation has no such entity.
  bool find(const std::string& org, const std::string& id, std::string* name, std::string* type) const;
  /// Entities held, over all organisations.
  [[nodiscard]] std::size_t size() const;

private:
  struct row {
    std::string name, type, names_lc, type_lc, observations_lc;
    std::vector<std::string> normalised;
  };
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::map<std::string, row>> orgs_;
};

}  // namespace engram::storage::detail
