#pragma once
// Who is asking: Origin validation (DNS rebinding) and bearer tokens. A token maps to
// exactly one organisation and its scopes; every tool call is scoped to it.

#include "base/result.hpp"
#include "net/http.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>

namespace engram::mcp {

struct grant {
  std::string organization_id;
  std::set<std::string> scopes;
  /// Recorded as the author of what it saves.
  std::string name;
  /// The bundles of its organisation whose tools and prompts it sees (config auth.tokens[].bundles).
  std::set<std::string> bundles;

  /// True when the grant holds `scope` (admin holds every scope).
  [[nodiscard]] bool allows(const std::string& scope) const { return scopes.count(scope) || scopes.count("admin"); }
};

struct auth_options {
  /// The bearer token's SHA-256 (token_digest) -> grant. Only digests are kept: a request's
  /// token is hashed and compared with each in constant time.
  std::map<std::string, grant> tokens;
  /// Serves token-less requests as this organisation (read, write); empty: off.
  std::string anonymous_organization;
};

/// A token's SHA-256 as 64 lower-case hex digits (what auth_options::tokens is keyed by, and
/// what config auth.tokens[].token_sha256 holds).
[[nodiscard]] std::string token_digest(std::string_view token);

/// The dev token (docs/configuration.md, `auth`): read from `dir`/dev-token, or made there once (40 hex
/// digits from OpenSSL's random generator, the file readable by its owner alone) when no
/// token is configured. An error names the file.
[[nodiscard]] engram::result<std::string> dev_token(const std::string& dir);

/// True for the Origins a browser on this machine sends (localhost, 127.0.0.1, [::1]).
[[nodiscard]] bool local_origin(const std::string& origin);

/// The grant of a request, or the response refusing it: 403 for a foreign Origin (checked
/// first: a foreign page learns nothing, not even whether a token is valid), 401 with
/// WWW-Authenticate for a missing or unknown token.
[[nodiscard]] std::variant<grant, net::response> authenticate(const net::request& req, const auth_options& opts);

}  // namespace engram::mcp
