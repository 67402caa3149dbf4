#include "mcp/jsonrpc.hpp"

namespace engram::mcp {

failure_code code_of(failure f) {
  switch (f) {
    case failure::parse_error: return {400, -32700};
    case failure::invalid_request: return {400, -32600};
    case failure::method_not_found: return {200, -32601};
    case failure::invalid_params: return {200, -32602};
    case failure::unauthorized: return {401, -32600};
    case failure::forbidden: return {403, -32600};
    case failure::wrong_method: return {405, -32600};
  }
  return {500, -32603};
}

net::response json_response(int status, const json& body, std::vector<std::pair<std::string, std::string>> headers) {
  return {status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace), std::move(headers)};
}

net::response error_response(failure f, const json& id, const std::string& message,
                             std::vector<std::pair<std::string, std::string>> headers) {
  const auto c = code_of(f);
  return json_response(c.http_status,
                       {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", c.rpc_code}, {"message", message}}}},
                       std::move(headers));
}

std::variant<envelope, net::response> read_envelope(const std::string& body) {
  auto msg = json::parse(body, nullptr, false);
  if (msg.is_discarded())
    return error_response(failure::parse_error, nullptr, "parse error: the body is not JSON");
  if (msg.is_array())
    return error_response(failure::invalid_request, nullptr, "batches are not supported: send one message");
  if (!msg.is_object())
    return error_response(failure::invalid_request, nullptr, "not a JSON-RPC 2.0 request");
  // The id is only echoed back when it is one JSON-RPC allows.
  const auto id = msg.find("id");
  const bool id_ok = id != msg.end() && (id->is_string() || id->is_number_integer());
  const auto version = msg.find("jsonrpc");
  const auto method = msg.find("method");
  if (version == msg.end() || *version != "2.0" || method == msg.end() || !method->is_string())
    return error_response(failure::invalid_request, id_ok ? *id : json(nullptr), "not a JSON-RPC 2.0 request");
  envelope e;
  e.method = method->get<std::string>();
  if (id == msg.end()) {  // a notification (initialized, cancelled, ...)
    e.notification = true;
    return e;
  }
  if (!id_ok)
    return error_response(failure::invalid_request, nullptr, "id: must be a string or an integer");
  e.id = *id;
  if (auto p = msg.find("params"); p != msg.end()) {
    if (!p->is_object())
      return error_response(failure::invalid_params, e.id, "params: must be an object");
    e.params = *p;
  }
  return e;
}

net::response result_response(const json& id, json result) {
  return json_response(200, {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

json tool_result(json structured) {
  auto text = structured.dump(-1, ' ', false, json::error_handler_t::replace);
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})},
          {"structuredContent", std::move(structured)},
          {"isError", false}};
}

json tool_error(const std::string& message) {
  return {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
}

}  // namespace engram::mcp
