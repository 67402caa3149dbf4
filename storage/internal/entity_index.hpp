#pragma once
// The entities of every organisation in memory, for search and walks: names, aliases, types
// and observations, as shown and lower-cased, and each entity's edges both ways (the other
// end, the label, the weight). Derived from the entities and entity_edges column families
// (the truth) when the store opens, then kept up to date by the writer after each batch it
// commits. A search (the entity tools' fuzzy search, the memory server's search_nodes) scans
// these, and a walk (graph_traverse, graph_path) follows them, instead of reading RocksDB.

#include "knowledge/entry.hpp"
#include "storage/graph_store.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
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
  /// Forgets every entity and edge of an organisation.
  void drop(const std::string& org);
  /// Calls `fn` for each entity of the organisation, in id order, under a shared lock.
  void scan(const std::string& org, const std::function<void(const entity_summary&)>& fn) const;
  /// Calls `fn` under a shared lock for each entity of the organisation whose lower-case name,
  /// type or observations may hold `needle`: those with every 3-byte sequence of the needle
  /// in one of them (all when the needle is shorter). In order of creation (in id order when
  /// the needle is shorter).
  void scan_containing(const std::string& org, std::string_view needle,
                       const std::function<void(const entity_summary&)>& fn) const;
  /// The cards of `ids` (those held, in the order given), under one shared lock.
  [[nodiscard]] std::vector<entity_card> cards(const std::string& org, const std::vector<std::string>& ids,
                                               bool incoming) const;
  /// An entity's name and shown type; false when the organisation has no such entity.
  bool find(const std::string& org, const std::string& id, std::string* name, std::string* type) const;
  /// Adds or removes the edge from -> to with `label` (both ends must be held; no-op otherwise).
  void add_edge(std::string_view org, const std::string& from, const std::string& label, const std::string& to,
                double weight);
  void remove_edge(std::string_view org, const std::string& from, const std::string& label, const std::string& to);
  /// Calls `fn(other end's id, label, weight, outgoing)` for the edges at `id`, under a shared lock.
  void neighbours(const std::string& org, const std::string& id, bool outgoing, bool incoming,
                  const std::function<void(const std::string&, const std::string&, double, bool)>& fn) const;
  /// Heap bytes held (an estimate from sizes and capacities): the rows with their strings,
  /// observations and edges, the trigram lists and the word maps.
  [[nodiscard]] std::size_t memory_bytes() const;
  /// Entities held, over all organisations.
  [[nodiscard]] std::size_t size() const;
  /// Ids of the people (or organisations) one of whose names has the folded word `word`
  /// (knowledge::person_words, knowledge::organisation_key): resolution's candidates.
  [[nodiscard]] std::vector<std::string> with_word(const std::string& org, const std::string& word, bool people) const;

private:
  struct row;
  /// An entity as its organisation's map holds it (map nodes do not move).
  using node = std::pair<const std::string, row>;
  /// An edge seen from one end: pointers to the other end's node and to the interned label.
  struct adjacent {
    node* other;
    const std::string* label;
    double weight;
  };
  struct row {
    std::string name, type, names_lc, type_lc, observations_lc;
    std::vector<std::string> observations;
    std::vector<std::string> normalised;
    std::vector<adjacent> out, in;
    /// The words it is found by in `words_` ("p" or "o" then the word), to drop them again.
    std::vector<std::string> words;
    /// Its place in its organisation's `grams::rows` (given at creation, never reused).
    std::uint32_t ordinal = 0;
  };
  using entity_map = std::map<std::string, row>;
  /// An organisation's substring index: each 3-byte sequence of a lower-case name, type or
  /// observation (packed in 24 bits) -> the ordinals of the entities holding it, ascending.
  struct grams {
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> lists;
    /// By ordinal: the entity (its id and row), or null once removed.
    std::vector<const entity_map::value_type*> rows;
  };
  void drop_words(std::map<std::string, std::set<std::string>>& words, const std::string& id, const row& r);
  /// Adds (or removes) `ordinal` to (from) the lists of `trigrams`.
  static void index_grams(grams& g, const std::vector<std::uint32_t>& trigrams, std::uint32_t ordinal, bool add);
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, entity_map> orgs_;
  std::unordered_map<std::string, grams> grams_;
  /// Per organisation: "p" or "o" + folded word -> ids of the people or organisations.
  std::unordered_map<std::string, std::map<std::string, std::set<std::string>>> words_;
  std::set<std::string> labels_;
};

}  // namespace engram::storage::detail
