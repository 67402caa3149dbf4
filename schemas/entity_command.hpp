#pragma once
// A change to the entity graph, as it travels on engram-log: record kind "entity-command",
// key = organizationId. Made by the entity tools (entity_add, entity_relate,
// entity_merge and the memory server's create/delete tools); applied by the store in log
// order, so a replay rebuilds the graph exactly. Everything the store needs is in the
// record (names as given, issuedAt as the time); which names exist is decided when applied.
//
//   {"eventId": "ent-…", "organizationId": "acme", "issuedAt": "2026-03-05T10:00:00.000Z",
//    "issuedBy": "agent-1", "op": "relate",
//    "relations": [{"from": "Stripe", "to": "Rust", "relationType": "uses", "weight": 1}]}
//
//   op                   fields
//   add_entities         entities [{name, entityType, attributes?, observations?}], onExisting
//                        (merge: attributes merged into an existing name, entity_add; skip:
//                        an existing name is left alone, create_entities)
//   relate               relations [{from, to, relationType, weight?, attributes?}]: both ends
//                        must exist; an existing (from, type, to) is left alone
//   add_observations     observations [{entityName, contents}]: the entity must exist
//   delete_entities      names: with every relation touching them; missing names: no-op
//   delete_observations  observations [{entityName, contents}]; missing: no-op
//   delete_relations     relations [{from, to, relationType}]; missing: no-op
//   merge_entities       nameA (kept), nameB (merged into A and deleted)

#include "schemas/command_envelope.hpp"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::schemas {

inline constexpr const char* kind_entity_command = "entity-command";

enum class entity_op : std::uint8_t {
  add_entities,
  relate,
  add_observations,
  delete_entities,
  delete_observations,
  delete_relations,
  merge_entities
};

[[nodiscard]] std::string_view to_string(entity_op op);
[[nodiscard]] std::optional<entity_op> parse_entity_op(std::string_view s);

using attribute_map = std::map<std::string, std::string>;

struct entity_spec {
  std::string name;
  std::string entity_type;
  attribute_map attributes;
  std::vector<std::string> observations;
  friend bool operator==(const entity_spec&, const entity_spec&) = default;
};

struct relation_spec {
  std::string from, to;
  /// As given; the store normalises it (relation_label).
  std::string relation_type;
  double weight = 1.0;
  attribute_map attributes;
  friend bool operator==(const relation_spec&, const relation_spec&) = default;
};

struct observation_spec {
  std::string entity_name;
  std::vector<std::string> contents;
  friend bool operator==(const observation_spec&, const observation_spec&) = default;
};

/// After its envelope (eventId, organizationId, issuedAt, issuedBy).
struct entity_command : command_envelope {
  entity_op op = entity_op::add_entities;
  /// add_entities: merge into an existing name (true) or skip it (false).
  bool merge_existing = false;
  std::vector<entity_spec> entities;
  std::vector<relation_spec> relations;
  std::vector<observation_spec> observations;
  std::vector<std::string> names;
  std::string name_a, name_b;
  friend bool operator==(const entity_command&, const entity_command&) = default;
};

/// The record's JSON: the op's fields only, in a fixed order.
[[nodiscard]] std::string to_json(const entity_command& c);

/// Decodes and checks a record (the op's fields present and well typed, lengths within
/// the limits below); "/field: reason" on failure.
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, entity_command& out);

/// Limits on what an entity command carries (bytes of UTF-8). The tools check them first, so
/// an agent gets the error before anything is appended; decode checks them again.
struct entity_limits {
  static constexpr std::size_t name = 256;
  static constexpr std::size_t entity_type = 64;
  static constexpr std::size_t label = 64;
  static constexpr std::size_t attribute_key = 64;
  static constexpr std::size_t attribute_value = 1024;
  static constexpr std::size_t attributes = 64;
  static constexpr std::size_t observation = 2048;
  static constexpr std::size_t observations = 256;
  static constexpr std::size_t items = 1000;
};

/// A relationship label as stored: trimmed, lower snake case ("Works At", "worksAt" ->
/// "works_at"); empty when nothing is left.
[[nodiscard]] std::string relation_label(std::string_view given);
/// An entity type as compared (the given one is kept for display): the same normalisation.
[[nodiscard]] std::string type_key(std::string_view given);

}  // namespace engram::schemas
