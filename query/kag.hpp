#pragma once
// Graph queries for knowledge-augmented generation (docs/graph-queries.md): the
// entities a question names, the graph around them to max_hops, ranked, with the relations
// between them, the statements that support each relation and a Markdown context for an
// LLM. One organisation per call, by construction. What kag_query (MCP) and `engramctl kag
// query` answer.

#include "query/entity_graph.hpp"
#include "storage/graph_store.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace engram::query {

/// The seed's limits: what kag_query's inputSchema states and the server enforces.
struct kag_limits {
  static constexpr std::size_t query_bytes = 10240;
  static constexpr std::size_t hints = 50;
  static constexpr std::size_t max_hops = 3;
  static constexpr std::size_t max_limit = 100;
};

struct kag_request {
  std::string query;
  /// Entity names to start from besides those the query names (exact, alias, then fuzzy).
  std::vector<std::string> entities;
  bool include_relations = true;
  std::size_t max_hops = 2;
  std::size_t limit = 20;
  /// Only relations whose evidence is this message or document ("" = any).
  std::string source_id;
  /// The BM25 terms of a text (reading's stemmed content words). With it, a question no
  /// typed relation answers falls back to the statements that name its entities and share
  /// its words (the answer's note says so); without it (empty), the walk alone answers.
  std::function<std::vector<std::string>(std::string_view)> terms;
};

struct kag_entity {
  std::string id, name, type, description;
  double confidence = 0;
  /// Hops from the nearest entity the query named (0: named).
  std::size_t distance = 0;
  double score = 0;
  /// The message (or document) the entity was first read from, and its title; empty when
  /// it came from an agent's tool call.
  std::string source_document_id, source_document_title;
};

struct kag_relation {
  std::string subject, predicate, object;
  double confidence = 0;
  /// Bi-temporal validity (RFC 3339; empty: open) and the statement that says it.
  std::string valid_from, valid_to;
  std::string statement, source_document_id, source_document_title;
  /// The statement's entry id (empty when none): for hybrid recall; not in the tool's answer.
  std::string entry_id;
};

struct kag_answer {
  std::vector<kag_entity> entities;
  std::vector<kag_relation> relations;
  /// Markdown for an LLM: entities, relations, supporting statements with their sources.
  std::string context;
  /// Entities reachable within max_hops before `limit` (the seed's total_entities).
  std::size_t total_entities = 0;
  /// The entities the query names (entities_named), also those `limit` left out: for
  /// hybrid recall; not in the tool's answer.
  std::vector<std::string> named;
  /// Why the answer is empty ("the graph of this organisation is empty", "no entity ...").
  std::string note;
};

/// The entities `text` names by a name or an alias (its longest word n-grams first, up to
/// four words), in the order found: kag_query's seeds and hybrid recall's.
[[nodiscard]] std::vector<std::string> entities_named(const storage::graph_store& store, const std::string& org,
                                                      std::string_view text);

/// Why a request is out of the seed's limits ("max_hops: at most 3"), or nullopt.
[[nodiscard]] std::optional<std::string> check(const kag_request& r);

/// Answers `r` from organisation `org`'s graph.
[[nodiscard]] kag_answer kag_query(const entity_reader& entities, const std::string& org, const kag_request& r);

}  // namespace engram::query
