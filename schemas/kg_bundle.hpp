#pragma once
// A knowledge bundle (docs/bundles.md) as it travels on engram-log: record kind
// "kg-bundle", key = organizationId. Written by `engramctl kg apply` after it has checked the
// bundle locally (kg/bundle.hpp), in chunks of bounded size, so a bundle of 10,000 entities
// fits Kafka's message limits; applied by the store, which keeps the chunks of one apply
// apart until the last has arrived and then makes the whole version visible in one batch
// (agents never see half a bundle). Everything the store needs is in the records: the types'
// ids, indexed fields and references, and each entity with its derived values computed.
//
//   {"eventId": "kg-<applyId>-0", "organizationId": "acme", "issuedAt": "2026-03-05T10:00:00.000Z",
//    "issuedBy": "engramctl", "op": "apply", "bundle": "legal-kb", "applyId": "…",
//    "chunk": 0, "chunks": 3,
//    "version": "1.0.0", "description": "…",                      (chunk 0 only)
//    "types": [{"name": "statute", "idField": "code", "description": "…",
//               "expose": ["list", "get"], "indexed": ["topic"], "refs": {"topic": "topic"},
//               "schema": {…the type's JSON Schema…}}],           (chunk 0 only)
//    "entities": [{"type": "statute", "id": "s-1", "data": {…}}]}
//
//   op       fields
//   apply    bundle, applyId, chunk, chunks, entities; version, description, types on chunk 0
//   delete   bundle: the bundle and its tools are gone (no bundle of that name: a no-op)

#include "schemas/command_envelope.hpp"
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::schemas {

inline constexpr const char* kind_kg_bundle = "kg-bundle";

enum class kg_op : std::uint8_t { apply, remove };

[[nodiscard]] std::string_view to_string(kg_op op);

/// What the store and the generated tools need of one entity type.
struct kg_type_spec {
  std::string name;
  /// x-id-field.
  std::string id_field;
  /// x-tool-description, else the schema's description.
  std::string description;
  /// Which tools to generate: list, get, list_ids.
  std::vector<std::string> expose;
  /// x-index fields (sorted): the only filter keys of list_<type>.
  std::vector<std::string> indexed;
  /// x-ref fields -> the type they refer to.
  std::map<std::string, std::string> refs;
  /// The type's JSON Schema (compact JSON): the generated tools' filters come from it.
  std::string schema;
  friend bool operator==(const kg_type_spec&, const kg_type_spec&) = default;
};

struct kg_item {
  std::string type;
  /// The value of the type's id field.
  std::string id;
  /// The instance as compact JSON, with its derived values.
  std::string data;
  friend bool operator==(const kg_item&, const kg_item&) = default;
};

/// After its envelope (eventId, organizationId, issuedAt, issuedBy).
struct kg_command : command_envelope {
  kg_op op = kg_op::apply;
  std::string bundle;
  /// The same for every chunk of one apply (a new one per apply).
  std::string apply_id;
  std::uint32_t chunk = 0, chunks = 1;
  std::string version, description;
  std::vector<kg_type_spec> types;
  std::vector<kg_item> items;
  friend bool operator==(const kg_command&, const kg_command&) = default;
};

/// The record's JSON: the op's fields only, in a fixed order.
[[nodiscard]] std::string to_json(const kg_command& c);

/// Decodes and checks a record (fields present and well typed, names and sizes within
/// kg_limits); "/field: reason" on failure.
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, kg_command& out);

struct kg_limits {
  static constexpr std::size_t bundle_name = 64;
  static constexpr std::size_t type_name = 64;
  static constexpr std::size_t id = 256;
  static constexpr std::size_t types = 100;
  static constexpr std::size_t chunks = 100000;
  /// A chunk's entities' JSON, in bytes (engramctl cuts chunks below it).
  static constexpr std::size_t chunk_bytes = 512 * 1024;
};

/// True for a bundle name: [a-z0-9-]+, at most kg_limits::bundle_name.
[[nodiscard]] bool valid_bundle_name(std::string_view name);

/// The tools a type exposes: list_<type>, get_<type>, list_<type>_ids as asked.
[[nodiscard]] std::vector<std::string> kg_tool_names(const kg_type_spec& t);

/// An indexed field's value (given as JSON text) as the index stores it and filters compare
/// it: a string as it is, any other scalar as its compact JSON ("3", "true").
[[nodiscard]] std::string kg_index_value(std::string_view json_text);

}  // namespace engram::schemas
