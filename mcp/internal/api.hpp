#pragma once
// The JSON API under /v1/ that the web console and scripts share (docs/console.md). Internal
// to mcp/: it answers through the same tools the agents call (the registry's scope check,
// argument check and handler), and reads what no tool returns whole (an entity's page, a
// neighbourhood with its edges, documents, action items) from the same entity reader and
// store, always for the caller's organisation.

#include "mcp/internal/query_string.hpp"
#include "mcp/internal/tool_context.hpp"

#include <functional>
#include <string>

namespace engram::mcp {

/// How a tool call ended, before any transport wraps it.
struct call_outcome {
  enum kind_t { unknown_tool, forbidden, answered };
  kind_t kind = answered;
  /// answered: the tool's result (tool_result or tool_error).
  json result;
  /// unknown_tool, forbidden: why.
  std::string message;
};

class api_context : public tool_context {
public:
  /// Calls tool `name` for `g` as tools/call does (visibility, scope, argument check, handler);
  /// `done` once, from any thread.
  virtual void invoke(const grant& g, const std::string& name, json arguments,
                      std::function<void(call_outcome)> done) = 0;
  [[nodiscard]] virtual const registry& tool_registry() const = 0;
  /// GET /v1/events: an event stream that says "applied" (at most every 250 ms) while events
  /// of `g`'s organisation are applied.
  virtual void open_events(const grant& g, net::responder respond) = 0;
};

/// Answers one request under /v1/ for an authenticated grant.
void serve_api(api_context& ctx, const grant& g, const net::request& req, net::responder respond);

}  // namespace engram::mcp
