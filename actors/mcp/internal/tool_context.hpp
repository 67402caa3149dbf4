#pragma once
// What the knowledge tools use from the MCP service (internal to actors/mcp): the query
// service, the log append that answers once applied, ids and time.

#include "actors/common/notifier.hpp"
#include "actors/mcp/registry.hpp"
#include "knowledge/query.hpp"
#include "schemas/log_record.hpp"

#include <functional>
#include <string>

namespace engram::mcp {

class tool_context {
public:
  virtual ~tool_context() = default;
  [[nodiscard]] virtual const knowledge::query_service& query() const = 0;
  /// A new random event id with `prefix` ("save-", "cmd-").
  [[nodiscard]] virtual std::string new_event_id(const char* prefix) = 0;
  /// The embedding of the statement a save becomes (what the store stage would compute):
  /// saves travel on engram-log with their vector, so a replay never embeds. Empty without
  /// an embedder or when it failed (the store stage then embeds the save when applied).
  [[nodiscard]] virtual schemas::vector8 embed_save(const schemas::knowledge_save& s) const = 0;
  /// Keeps results while the answer stays under the size cap.
  [[nodiscard]] virtual json capped(std::vector<json> results) const = 0;
  /// Appends `record` to engram-log and replies once the store has applied it (read your
  /// writes) with `answer(what the store said)`; a tool error when the log refuses it, the
  /// store rejects it, or it is not applied in time (it stays on the log).
  virtual void append_and_answer(const schemas::log_payload& record, tool_reply reply,
                                 std::function<json(const actors::applied_event&)> answer) = 0;
};

/// Registers save, recall, get, search, validate, merge/discard branch, review queue and
/// resolve (definitions from schemas/tools.cpp).
void add_knowledge_tools(registry& r, tool_context& ctx);

}  // namespace engram::mcp
