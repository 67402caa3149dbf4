// libFuzzer: the JSON Schema validator (kg/json_schema.hpp) that bundles' entity types and every
// MCP tool's arguments go through. The input is a schema and an instance, split at the first
// NUL byte (no NUL: the instance is the schema itself).
#include "kg/json_schema.hpp"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using engram::kg::json;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nul = input.find('\0');
  const auto schema_text = input.substr(0, nul);
  const auto instance_text = nul == std::string_view::npos ? schema_text : input.substr(nul + 1);
  auto schema = json::parse(schema_text, nullptr, false);
  if (schema.is_discarded())
    return 0;
  auto compiled = engram::kg::json_schema::compile(std::move(schema));
  if (!compiled)
    return 0;
  auto instance = json::parse(instance_text, nullptr, false);
  if (!instance.is_discarded())
    (void)compiled->validate(instance);
  return 0;
}
