#pragma once
// What the entity tools and the memory-server tools share (internal to mcp/).

#include "mcp/internal/tool_context.hpp"
#include "schemas/entity_command.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace engram::mcp {

/// An entity command from an agent: checked as the store will decode it, appended, answered
/// once applied with `answer(the store's JSON)`; a rejection (a missing entity) is a tool error.
void entity_command(tool_context& ctx, const grant& g, schemas::entity_command c, tool_reply reply,
                    std::function<json(const json& result)> answer);

/// The "attributes" argument (an object of strings within entity_limits); an error naming the
/// key otherwise.
[[nodiscard]] std::optional<std::string> read_attributes(const json& arguments, schemas::attribute_map& out);

/// How a mention was joined to an entity, as the tools and the API show it: {mention, eventId, reason}.
[[nodiscard]] json resolution_json(const knowledge::resolution_note& r);

/// The reference memory server's nine tools over the same graph (memory_tools.cpp).
void add_memory_tools(registry& r, tool_context& ctx);

}  // namespace engram::mcp
