#pragma once
// The JSON-RPC 2.0 envelope of MCP over HTTP: results, errors, tool results, and the one
// function that maps a failure to its HTTP status and JSON-RPC code. No Beast here.

#include "net/http.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace engram::mcp {

using json = nlohmann::json;

/// What can go wrong with a request, from the transport to the tool. A tool's own failure
/// (bad argument, unknown id) is not here: it is a result with isError (tool_error).
enum class failure {
  parse_error,       ///< the body is not JSON
  invalid_request,   ///< not a JSON-RPC 2.0 request, a batch, a bad id, a bad header
  method_not_found,  ///< no such method
  invalid_params,    ///< params or arguments not objects, an unknown tool
  unauthorized,      ///< no token, or an unknown one
  forbidden,         ///< a foreign Origin, or a token without the tool's scope
  wrong_method,      ///< not POST
};

/// The HTTP status and JSON-RPC code of a failure (the only place they are chosen).
struct failure_code {
  int http_status;
  int rpc_code;
};
[[nodiscard]] failure_code code_of(failure f);

/// A JSON response (invalid UTF-8 replaced, never thrown on).
[[nodiscard]] net::response json_response(int status, const json& body,
                                          std::vector<std::pair<std::string, std::string>> headers = {});

/// The response for a failure: its status, {"jsonrpc", "id", "error": {code, message}}.
[[nodiscard]] net::response error_response(failure f, const json& id, const std::string& message,
                                           std::vector<std::pair<std::string, std::string>> headers = {});

/// A 200 response with {"jsonrpc", "id", "result"}.
[[nodiscard]] net::response result_response(const json& id, json result);

/// A JSON-RPC request read from the body of a POST to /mcp.
struct envelope {
  std::string method;
  /// A string or an integer; null for a notification.
  json id;
  /// An object (empty when the request has none).
  json params = json::object();
  /// No id: a notification, accepted and not answered.
  bool notification = false;
};

/// Reads a POST body as one JSON-RPC 2.0 request: the envelope, or the error response to send
/// (parse error, a batch, not JSON-RPC 2.0, a bad id, params not an object). Never throws:
/// every field is type-checked before it is read (fuzz_jsonrpc).
[[nodiscard]] std::variant<envelope, net::response> read_envelope(const std::string& body);

/// A tool's answer: structured content plus the same as a text block.
[[nodiscard]] json tool_result(json structured);

/// A tool-level failure (validation, unknown id, timeout): a result with isError.
[[nodiscard]] json tool_error(const std::string& message);

}  // namespace engram::mcp
