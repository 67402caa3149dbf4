#pragma once
// The tool registry: each MCP tool is one entry {definition (name, description,
// inputSchema, outputSchema), scope, handler, who sees it}. tools/list, the scope check,
// argument validation (against the tool's own inputSchema) and the metric labels all come
// from it, so a tool's name lives in one place. Tools can be listed per grant (organisation,
// bound agent) and added or removed while serving; each change is announced to the
// subscribers as a notifications/tools/list_changed message. Thread-safe.

#include "kg/json_schema.hpp"
#include "mcp/auth.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace engram::mcp {

using json = nlohmann::json;

/// Answers one tool call, exactly once, from any thread: tool_result(...) or tool_error(...).
using tool_reply = std::function<void(json result)>;

struct tool {
  /// The MCP Tool object: name, description, inputSchema, outputSchema.
  json definition;
  /// "read" or "write": what the caller's grant must hold.
  std::string scope;
  /// Called with arguments that passed the inputSchema check.
  std::function<void(const grant&, const json& arguments, tool_reply)> handler;
  /// Who sees the tool (null: every grant).
  std::function<bool(const grant&)> visible_to;
  /// Generated tools: who made them ("kg\0<org>\0<bundle>"); "" for the server's own. Two
  /// tools may share a name when their owners differ (list_category of two organisations);
  /// the caller's grant picks the one it sees.
  std::string owner;
  /// Runs before the inputSchema check, on the arguments as sent: may repair them (a JSON
  /// string where an object belongs) or refuse them with the tool's own message.
  std::function<std::optional<std::string>(json& arguments)> prepare;
  /// The inputSchema, compiled when the registry takes the tool (null, with `schema_error`
  /// saying why, when it does not compile: every call of the tool is then refused).
  std::shared_ptr<const kg::json_schema> input_schema{};
  std::string schema_error{};

  [[nodiscard]] std::string name() const { return definition.value("name", ""); }
};

class registry {
public:
  /// Adds a tool, replacing one of the same name and owner; announces the change.
  void add(tool t);
  /// Replaces every tool whose owner starts with `owner_prefix` by `tools`, at once;
  /// announces the change.
  void replace_owned(const std::string& owner_prefix, std::vector<tool> tools);
  /// Removes a tool; false when there is none of that name. Announces the change.
  bool remove(const std::string& name);
  /// The tool `name` as `g` sees it, or null (absent, or not visible to `g`).
  [[nodiscard]] std::shared_ptr<const tool> find(const std::string& name, const grant& g) const;
  /// tools/list's "tools" for `g`, in the order tools were added.
  [[nodiscard]] json list(const grant& g) const;
  /// Every tool's name, once each (metric labels: a set the server defines, never the client).
  [[nodiscard]] std::vector<std::string> names() const;
  /// Calls `fn` with the notifications/tools/list_changed message after each change.
  void on_list_changed(std::function<void(const json& notification)> fn);

private:
  void announce();

  mutable std::shared_mutex mutex_;
  std::vector<std::shared_ptr<const tool>> tools_;
  std::vector<std::function<void(const json&)>> listeners_;
};

/// Checks a tool's arguments against its inputSchema with the one JSON Schema validator
/// (kg/json_schema.hpp); an optional argument sent as null counts as absent. The first
/// problem as "field: reason" ("limit: must be within 1..50", "tags[1]: must be a string",
/// "organizationId: unknown argument", "confidence: required"), a wrong field before a
/// missing one; nullopt when the arguments are valid.
[[nodiscard]] std::optional<std::string> check_arguments(const kg::json_schema& schema, const json& arguments);
/// The same against a schema not compiled yet (tests; the registry compiles each tool's once).
[[nodiscard]] std::optional<std::string> check_arguments(const json& schema, const json& arguments);

}  // namespace engram::mcp
