#pragma once
// The MCP tools' definitions (name, description, inputSchema, outputSchema) as JSON:
// tools/list answers with them, and the server validates arguments against the same limits.

#include <set>
#include <string>
#include <string_view>

namespace engram::schemas {

/// A JSON array of tool definitions (MCP Tool objects).
[[nodiscard]] std::string_view tool_definitions();
/// The entity tools' definitions (docs/entity-graph.md).
[[nodiscard]] std::string_view entity_tool_definitions();
/// kag_query (docs/graph-queries.md).
[[nodiscard]] std::string_view kag_tool_definitions();
/// The reference MCP memory server's tools (npm @modelcontextprotocol/server-memory).
[[nodiscard]] std::string_view memory_tool_definitions();
/// The name of every tool the server itself serves (all the definitions above): a knowledge
/// bundle may not expose one of these (storage::open_options::reserved_tool_names).
[[nodiscard]] std::set<std::string> server_tool_names();

/// Limits the schemas state and the server enforces.
inline constexpr std::size_t max_title = 200, max_content = 8000, max_query = 2000, max_tags = 20, max_tag = 64,
                             max_id = 256, max_recall = 50, max_search = 25, max_expires_days = 36500;

}  // namespace engram::schemas
