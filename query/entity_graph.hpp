#pragma once
// How the entity graph is read (docs/entity-graph.md), for every caller (the MCP entity
// tools, the memory-server tools, engramctl entities): an entity by name, fuzzy search over
// names and aliases, neighbours, breadth-first traversal, shortest paths, a question
// answered from the facts found, and Mermaid. Scoped to one organisation by construction:
// every method takes it and reads only under its key prefix. Thread-safe (reads only).

#include "knowledge/entry.hpp"
#include "storage/graph_store.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace engram::query {

/// An entity as the tools show it.
struct entity_view {
  std::string id, name, entity_type;
  std::vector<std::string> aliases;
  std::map<std::string, std::string> attributes;
  std::vector<std::string> observations;
  /// Mentions joined to it by resolution, with their evidence (knowledge/resolve.hpp).
  std::vector<knowledge::resolution_note> resolutions;
};

/// Which edges a walk follows, seen from the node it stands on.
enum class edge_direction : std::uint8_t { outgoing, incoming, both };

struct traversal_node {
  /// Its id, name and type (a walk reads no attributes or observations).
  entity_view entity;
  std::size_t distance = 0;
  /// 1 / (1 + distance).
  double similarity = 1;
  /// How it was reached (empty for the start): the entity before it and the edge's label.
  std::string via, relationship;
};

struct path_step {
  std::string from, to, relationship;  // names; from -> to as the edge is stored
  double weight = 1;
};

struct graph_path {
  std::vector<std::string> nodes;  // names, start to end
  std::vector<path_step> edges;
  double total_weight = 0;
};

class entity_reader {
public:
  /// `type_parents`: an entity type's parent type (type keys, schemas::type_key), so a query
  /// for "company" also finds a "saas_company" (confidence 0.8 per level).
  entity_reader(std::shared_ptr<const storage::graph_store> store, std::map<std::string, std::string> type_parents);

  [[nodiscard]] const storage::graph_store& store() const { return *store_; }
  [[nodiscard]] std::optional<entity_view> by_name(const std::string& org, const std::string& name) const;
  [[nodiscard]] std::optional<entity_view> by_id(const std::string& org, const std::string& id) const;
  /// Every entity of the organisation, in id order (paged: after `after`, at most `limit`).
  [[nodiscard]] std::vector<entity_view> list(const std::string& org, const std::string& after,
                                              std::size_t limit) const;

  /// Fuzzy name search (exact, prefix, word, substring, typo), scores in 0..1, best first.
  [[nodiscard]] std::vector<std::pair<entity_view, double>> search(const std::string& org, const std::string& query,
                                                                   std::size_t limit) const;
  /// 1 for the same type key, 0.8 per level when `type` is an ancestor of `candidate`, else 0.
  [[nodiscard]] double type_match(const std::string& type, const std::string& candidate) const;

  /// The edges at an entity, outgoing then incoming, as stored.
  [[nodiscard]] std::vector<storage::entity_edge> edges(const std::string& org, const std::string& id,
                                                        edge_direction d) const;
  /// Breadth-first from `start_id` to `max_depth` hops over edges whose label is in `labels`
  /// (empty: any); the start first, then by distance, then name. At most `limit` nodes;
  /// `truncated` says whether more were reachable.
  [[nodiscard]] std::vector<traversal_node> traverse(const std::string& org, const std::string& start_id,
                                                     std::size_t max_depth, const std::set<std::string>& labels,
                                                     edge_direction d, std::size_t limit, bool* truncated) const;
  /// The shortest path by hops (or by total weight) within `max_depth` hops; nullopt: none.
  [[nodiscard]] std::optional<graph_path> path(const std::string& org, const std::string& from_id,
                                               const std::string& to_id, std::size_t max_depth,
                                               const std::set<std::string>& labels, edge_direction d,
                                               bool by_weight) const;

  /// Mermaid `graph LR` of the graph around `center_id` (to `depth` hops) or of the whole
  /// organisation (center empty), at most `limit` nodes; `omitted` counts what was left out.
  [[nodiscard]] std::string mermaid(const std::string& org, const std::string& center_id, std::size_t depth,
                                    std::size_t limit, std::size_t* shown, std::size_t* omitted) const;

private:
  std::shared_ptr<const storage::graph_store> store_;
  std::map<std::string, std::string> parents_;
};

/// The type an entity shows: the type a tool gave, else its kind ("person", "organization").
[[nodiscard]] std::string shown_type(const knowledge::stored_entity& e);
[[nodiscard]] entity_view view_of(const knowledge::stored_entity& e);

/// Mermaid label text: quotes and the characters Mermaid reads as syntax written as entity
/// codes (#quot; #35; ...), so any name renders.
[[nodiscard]] std::string mermaid_text(std::string_view s);

/// Damerau–Levenshtein (optimal string alignment) distance of two byte strings.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace engram::query
