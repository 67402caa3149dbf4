#pragma once
// A JSON Schema validator for a declared subset of draft 2020-12 (docs/bundles.md: the
// entity types of knowledge bundles). A schema is compiled once: every keyword it uses must be
// in supported_keywords() (or an extension the caller allows, such as the bundles' x-*
// annotations), else compiling fails naming the keyword and where it is; nothing is silently
// ignored. $ref resolves within the schema document: JSON pointers ("#/$defs/x") and
// anchors ("#name"). Checked against the official JSON-Schema-Test-Suite
// (tests/unit/kg/json_schema_suite_test.cpp lists what it excludes and why).
//
// Thread-safe once compiled (validation only reads).

#include "base/result.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace engram::kg {

using json = nlohmann::json;

/// One reason an instance is invalid.
struct validation_error {
  /// JSON pointer into the instance ("" = the whole instance, "/tags/2").
  std::string instance_path;
  /// The keyword that failed and where it is in the schema ("/properties/name/maxLength").
  std::string keyword, schema_path;
  std::string message;
};

struct compile_options {
  /// Keywords beyond supported_keywords() to accept as annotations (e.g. the bundles' x-*);
  /// unset: none.
  std::function<bool(std::string_view keyword)> extension;
};

class json_schema {
public:
  /// Compiles `schema`; an error "<keyword> at <schema pointer>: <reason>".
  [[nodiscard]] static engram::result<json_schema> compile(json schema, const compile_options& opts = {});

  /// Every reason `instance` is invalid (at most `max_errors`); empty when valid.
  [[nodiscard]] std::vector<validation_error> validate(const json& instance, std::size_t max_errors = 100) const;
  [[nodiscard]] bool valid(const json& instance) const { return validate(instance, 1).empty(); }

  [[nodiscard]] const json& document() const;

  /// The keywords the validator implements (assertions, applicators, annotations).
  [[nodiscard]] static const std::vector<std::string_view>& supported_keywords();

  struct impl;

private:
  explicit json_schema(std::shared_ptr<const impl> p) : p_(std::move(p)) {}
  std::shared_ptr<const impl> p_;
};

}  // namespace engram::kg
