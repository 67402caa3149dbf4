// libFuzzer: every MCP tool's arguments through the registry's validation (mcp/registry.hpp
// check_arguments against the tool's inputSchema, the one JSON Schema validator). The first
// byte picks the tool (every tool the server defines), the rest is the arguments' JSON. A
// refusal names the argument ("field: reason"); what passes is an object.
#include "mcp/registry.hpp"
#include "schemas/tools.hpp"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

namespace {

using engram::mcp::json;

struct compiled_tool {
  std::string name;
  std::shared_ptr<const engram::kg::json_schema> schema;
};

std::vector<compiled_tool> all_tools() {
  std::vector<compiled_tool> out;
  for (auto defs : {engram::schemas::tool_definitions(), engram::schemas::entity_tool_definitions(),
                    engram::schemas::kag_tool_definitions(), engram::schemas::memory_tool_definitions()})
    for (const auto& d : json::parse(defs)) {
      auto s = engram::kg::json_schema::compile(d["inputSchema"]);
      if (!s)
        std::abort();  // the server's own schemas compile
      out.push_back({d["name"].get<std::string>(), std::make_shared<const engram::kg::json_schema>(std::move(*s))});
    }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto tools = all_tools();
  if (size == 0)
    return 0;
  const auto& tool = tools[data[0] % tools.size()];
  auto arguments = json::parse(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), nullptr, false);
  if (arguments.is_discarded())
    return 0;
  auto problem = engram::mcp::check_arguments(*tool.schema, arguments);
  if (problem ? problem->empty() : !arguments.is_object())
    std::abort();
  return 0;
}
