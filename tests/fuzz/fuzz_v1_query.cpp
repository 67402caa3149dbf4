// libFuzzer: the /v1 API's request targets (mcp/internal/query_string.hpp): the path cut into
// percent-decoded segments, the query string into parameters, and the parameters typed into a
// tool's arguments by its inputSchema, then checked as a tool call's are. The first byte picks
// the tool, the rest is the target as sent ("/v1/recall?query=a+b&limit=5").
#include "mcp/internal/query_string.hpp"
#include "mcp/registry.hpp"
#include "schemas/tools.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::vector<engram::mcp::json> input_schemas() {
  std::vector<engram::mcp::json> out;
  for (auto defs : {engram::schemas::tool_definitions(), engram::schemas::entity_tool_definitions(),
                    engram::schemas::kag_tool_definitions(), engram::schemas::memory_tool_definitions()})
    for (const auto& d : engram::mcp::json::parse(defs))
      out.push_back(d["inputSchema"]);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto schemas = input_schemas();
  if (size == 0)
    return 0;
  const std::string target(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> segments;
  std::vector<std::pair<std::string, std::string>> query;
  engram::mcp::split_target(target, segments, query);
  for (const auto& s : segments)
    if (s.empty())
      std::abort();  // empty segments are dropped
  auto arguments = engram::mcp::json::object();
  const auto& schema = schemas[data[0] % schemas.size()];
  if (auto problem = engram::mcp::arguments_from_query(query, schema, arguments)) {
    if (problem->empty())
      std::abort();
    return 0;
  }
  (void)engram::mcp::check_arguments(schema, arguments);
  return 0;
}
