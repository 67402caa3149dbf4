// libFuzzer: the JSON-RPC envelope of a POST to /mcp (mcp/jsonrpc.hpp read_envelope), the
// first reader of every agent's request. What it accepts has an id of a type JSON-RPC allows
// (or none, a notification) and object params; what it refuses is a JSON-RPC error response
// with a code and a message.
#include "mcp/jsonrpc.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using engram::mcp::json;
  const std::string body(reinterpret_cast<const char*>(data), size);
  auto read = engram::mcp::read_envelope(body);
  if (const auto* e = std::get_if<engram::mcp::envelope>(&read)) {
    if (!e->params.is_object())
      std::abort();
    if (e->notification != e->id.is_null() || (!e->notification && !e->id.is_string() && !e->id.is_number_integer()))
      std::abort();
    return 0;
  }
  const auto& r = std::get<engram::net::response>(read);
  if (r.status != 200 && r.status != 400)
    std::abort();
  const auto answer = json::parse(r.body, nullptr, false);
  if (!answer.is_object() || answer.value("jsonrpc", json()) != "2.0" || !answer.contains("error") ||
      !answer["error"].is_object() || !answer["error"].contains("code") ||
      !answer["error"]["code"].is_number_integer() || !answer["error"].contains("message") ||
      !answer["error"]["message"].is_string())
    std::abort();
  return 0;
}
