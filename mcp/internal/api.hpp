#pragma once
// The JSON API under /v1/ that the web console and scripts share (docs/console.md). Internal
// to mcp/: it answers through the same tools the agents call (the registry's scope check,
// argument check and handler), and reads what no tool returns whole (an entity's page, a
// neighbourhood with its edges, documents, action items) from the same entity reader and
// store, always for the caller's organisation.

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
  virtual void open_events(const grant& g, http::responder respond) = 0;
};

/// Answers one request under /v1/ for an authenticated grant.
void serve_api(api_context& ctx, const grant& g, const http::request& req, http::responder respond);

/// The query string of `target` as (name, value) pairs, percent-decoded ('+' is a space), in
/// order; the path percent-decoded segment by segment into `segments` (empty ones dropped).
void split_target(const std::string& target, std::vector<std::string>& segments,
                  std::vector<std::pair<std::string, std::string>>& query);

/// Tool arguments from query parameters, typed by the tool's inputSchema: an integer,
/// number or boolean property is converted when the text is one (else left a string, so the
/// argument check names the field and the reason); an array of strings is split at commas.
/// A name given twice is an error naming it.
[[nodiscard]] std::optional<std::string> arguments_from_query(
    const std::vector<std::pair<std::string, std::string>>& query, const json& input_schema, json& arguments);

}  // namespace engram::mcp
