#pragma once
// A knowledge bundle on disk (docs/bundles.md): manifest.yaml, schemas/<type>.schema.json
// (draft 2020-12 with the x-* annotations below) and entities/*.yaml|json (arrays of one
// type's instances). load_bundle reads and checks all of it locally, before anything is
// written anywhere, and reports every problem with its file, entity index, JSON pointer and
// reason.
//
// Annotations (on the type's schema unless said):
//   x-id-field          required: the property holding each entity's id, unique in the type
//   x-index             (on a property) true: filterable by list_<type>
//   x-ref, x-ref-field  (on a property) the property names an entity of another type of the
//                       bundle, by that type's id field or by x-ref-field; checked to exist
//   x-tool-expose       which tools to generate: list, get (default both), list_ids
//   x-tool-description  the generated tools' description
//   x-derived           (on a property) computed, never imported. The one rule: an integer
//                       property "<type>_count" counts the <type> entities whose x-ref
//                       points at this entity
// Cycles between types (A refers to B, B to A) are allowed and reported as a warning.

#include "kg/json_schema.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace engram::kg {

/// One problem: where (file, entity index or -1, JSON pointer) and why.
struct bundle_error {
  std::string file;
  /// The entity's position in its file (0 = the first), or -1 for a problem of the file itself.
  long entity = -1;
  std::string pointer;
  std::string reason;
  /// The entity's id (the value of its type's x-id-field) when it has one: how a person knows
  /// it ("entities/statutes.yaml entity 'gdpr-art-17' (#117) /jurisdiction: ...").
  std::string entity_id = {};
  [[nodiscard]] std::string to_string() const;
};

struct entity_type {
  std::string name;
  std::string id_field;
  std::string description;  // x-tool-description, else the schema's description
  std::vector<std::string> expose{"list", "get"};
  /// x-index fields with their property schemas (for the generated filters).
  std::map<std::string, json> indexed;
  struct reference {
    std::string type, field;  // the target type and the field of it the value names
  };
  std::map<std::string, reference> refs;
  /// x-derived properties: "<type>_count" -> the counted type.
  std::map<std::string, std::string> derived;
  json schema;
  std::vector<json> entities;
};

struct bundle {
  std::string name, version, description;
  std::map<std::string, entity_type> types;
  std::vector<std::string> warnings;
};

/// The annotations a schema may carry (anything else starting "x-" is an error listing these).
[[nodiscard]] const std::vector<std::string>& known_annotations();

/// Reads and checks a bundle directory: the bundle, or every problem found.
[[nodiscard]] std::variant<bundle, std::vector<bundle_error>> load_bundle(const std::filesystem::path& dir);

/// The derived properties' values of one entity (computed over the whole bundle).
[[nodiscard]] json derived_values(const bundle& b, const std::string& type, const json& entity);

}  // namespace engram::kg
