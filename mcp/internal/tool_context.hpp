#pragma once
// What the knowledge tools use from the MCP service (internal to mcp/): the query
// service, the log append that answers once applied, ids and time.

#include "services/notifier.hpp"
#include "mcp/registry.hpp"
#include "query/entity_graph.hpp"
#include "query/query.hpp"
#include "schemas/log_record.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"

#include <memory>
#include <optional>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace engram::mcp {

class tool_context {
public:
  virtual ~tool_context() = default;
  [[nodiscard]] virtual const query::query_service& query() const = 0;
  [[nodiscard]] virtual const query::entity_reader& entities() const = 0;
  /// A new random event id with `prefix` ("save-", "cmd-").
  [[nodiscard]] virtual std::string new_event_id(const char* prefix) = 0;
  /// The embedding of the statement a save becomes (what the store stage would compute):
  /// saves travel on engram-log with their vector, so a replay never embeds. Empty without
  /// an embedder or when it failed (the store stage then embeds the save when applied).
  [[nodiscard]] virtual schemas::vector8 embed_save(const schemas::knowledge_save& s) const = 0;
  /// Keeps results while the answer stays under the size cap.
  [[nodiscard]] virtual json capped(std::vector<json> results) const = 0;
  /// The store, read only (what the tools read beyond the query service).
  [[nodiscard]] virtual const storage::graph_store& store() const = 0;
  /// Appends `record` to engram-log and replies once the store has applied it (read your
  /// writes) with `answer(what the store said)`; a tool error when the log refuses it, the
  /// store rejects it, or it is not applied in time (it stays on the log). `wait`: how long
  /// to wait for the store (0: mcp.save_timeout_ms; a forget that rebuilds waits longer).
  virtual void append_and_answer(const schemas::log_payload& record, tool_reply reply,
                                 std::function<json(const services::applied_event&)> answer,
                                 std::chrono::milliseconds wait = std::chrono::milliseconds(0)) = 0;
};

using tool_handler = void (*)(tool_context&, const grant&, const json&, tool_reply);

/// Makes a command (knowledge or entity) the agent's: its organisation, a new event id with
/// `prefix`, now, and who issued it.
inline void stamp(tool_context& ctx, const grant& g, schemas::command_envelope& c, const char* prefix) {
  c.organization_id = g.organization_id;
  c.event_id = ctx.new_event_id(prefix);
  c.issued_at_ms = ctx.query().now();
  c.issued_at = schemas::format_rfc3339(c.issued_at_ms);
  c.issued_by = g.name;
}

/// What a command's tool answers once the store applied it: `answer(the store's JSON)`, or a
/// tool error when the store failed or the record was a duplicate.
/// The tool error for a record the store failed to apply or had applied before; nullopt otherwise.
std::optional<json> refused_answer(const services::applied_event& what);
std::function<json(const services::applied_event&)> answer_applied(std::function<json(const json& result)> answer);

/// Registers handlers (name, scope, handler) against a JSON array of definitions: every
/// definition must have a handler and every handler a definition (a programmer's error
/// otherwise, thrown at start).
void add_tools(registry& r, tool_context& ctx, std::string_view definitions_json,
               const std::vector<std::tuple<const char*, const char*, tool_handler>>& table);

/// Registers save, recall, get, search, validate, merge/discard branch, review queue and
/// resolve (definitions from schemas/tools.cpp).
void add_knowledge_tools(registry& r, tool_context& ctx);

/// Makes the tools of the visible bundles of `organization_id` ("" = every organisation)
/// again from the store (kg_tools.cpp), replacing that organisation's bundle tools at once.
void refresh_bundle_tools(registry& r, const std::shared_ptr<const storage::graph_store>& store,
                          const std::string& organization_id);
/// prompts/list's "prompts" for `g`: the workflow prompt of each bundle it is bound to.
[[nodiscard]] json bundle_prompts(const storage::graph_store& store, const grant& g);
/// prompts/get's result for `name`, or nullopt when `g` has no such prompt.
[[nodiscard]] std::optional<json> bundle_prompt(const storage::graph_store& store, const grant& g,
                                                const std::string& name);

/// GET /v1/kg/bundles: the organisation's visible bundles (their types, tools, counts and last
/// apply's status); `name` non-empty: that bundle only, or its last apply when none is visible.
[[nodiscard]] json bundles_json(const storage::graph_store& store, const std::string& organization_id,
                                const std::string& name);

/// Registers the entity tools (entity_* and the traversal graph_*; definitions from
/// schemas/entity_tools.cpp) and the reference memory server's tools (memory_tools.cpp).
void add_entity_tools(registry& r, tool_context& ctx);

}  // namespace engram::mcp
