#include "mcp/auth.hpp"

#include "mcp/jsonrpc.hpp"

#include <algorithm>
#include <cctype>

namespace engram::mcp {

bool local_origin(const std::string& origin) {
  for (const char* prefix : {"http://localhost", "http://127.0.0.1", "http://[::1]", "https://localhost",
                             "https://127.0.0.1", "https://[::1]"}) {
    std::string p(prefix);
    if (origin.rfind(p, 0) == 0 && (origin.size() == p.size() || origin[p.size()] == ':' || origin[p.size()] == '/'))
      return true;
  }
  return false;
}

std::variant<grant, http::response> authenticate(const http::request& req, const auth_options& opts) {
  auto header = [&](const char* k) {
    auto it = req.headers.find(k);
    return it == req.headers.end() ? std::string() : it->second;
  };
  if (auto origin = header("origin"); !origin.empty() && !local_origin(origin))
    return error_response(failure::forbidden, nullptr, "origin not allowed: " + origin);
  auto auth = header("authorization");
  if (auth.empty() && !opts.anonymous_organization.empty())
    return grant{opts.anonymous_organization, {"read", "write"}, "anonymous", {}};
  const std::string bearer = "Bearer ";
  if (auth.size() > bearer.size() && std::equal(bearer.begin(), bearer.end(), auth.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
      }))
    if (auto it = opts.tokens.find(auth.substr(bearer.size())); it != opts.tokens.end())
      return it->second;
  return error_response(failure::unauthorized, nullptr, auth.empty() ? "authorization required" : "invalid token",
                        {{"WWW-Authenticate", auth.empty() ? "Bearer realm=\"engram\""
                                                           : "Bearer realm=\"engram\", error=\"invalid_token\""}});
}

}  // namespace engram::mcp
