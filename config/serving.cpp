#include "config/serving.hpp"

#include "config/internal/yaml_read.hpp"

#include <algorithm>
#include <cctype>

namespace engram::config {

namespace detail {

namespace {

/// Reads auth.tokens[i] (`at` is its key) and checks its token and organisation.
token_config read_token(const YAML::Node& n, const std::string& at) {
  token_config t;
  each_key(n, at,
           {
               {"token", [&](auto& x, auto& k) { t.token = as_string(x, k); }},
               {"token_sha256", [&](auto& x, auto& k) { t.token_sha256 = as_string(x, k); }},
               {"organization_id", [&](auto& x, auto& k) { t.organization_id = as_string(x, k); }},
               {"name", [&](auto& x, auto& k) { t.name = as_string(x, k); }},
               {"scopes",
                [&](const YAML::Node& x, const std::string& k) {
                  if (!x.IsSequence())
                    reject(k, "must be a list of read, write, admin");
                  for (const auto& sc : x) {
                    auto scope = as_string(sc, k);
                    if (scope != "read" && scope != "write" && scope != "admin")
                      reject(k, "unknown scope '" + scope + "' (read, write, admin)");
                    t.scopes.push_back(scope);
                  }
                }},
               {"bundles",
                [&](const YAML::Node& x, const std::string& k) {
                  if (!x.IsSequence())
                    reject(k, "must be a list of bundle names");
                  for (const auto& b : x)
                    t.bundles.push_back(as_string(b, k));
                }},
           });
  if (t.token.empty() == t.token_sha256.empty())
    reject(at + ".token", "give either token or token_sha256 (the token's SHA-256), not both, not neither");
  if (!t.token.empty() && t.token.size() < 16)
    reject(at + ".token", "must be at least 16 characters");
  if (!t.token_sha256.empty() &&
      (t.token_sha256.size() != 64 || t.token_sha256.find_first_not_of("0123456789abcdef") != std::string::npos))
    reject(at + ".token_sha256", "must be 64 lower-case hex digits (printf %s \"$TOKEN\" | sha256sum)");
  if (t.organization_id.empty())
    reject(at + ".organization_id", "required");
  return t;
}

}  // namespace

void read_http(const YAML::Node& n, const std::string& key, http_config& out) {
  each_key(
      n, key,
      {
          {"listen", [&](auto& v, auto& k) { out.listen = as_string(v, k); }},
          {"max_connections",
           [&](auto& v, auto& k) { out.max_connections = static_cast<std::uint32_t>(as_uint(v, k, 1, 1000000)); }},
          {"max_event_streams",
           [&](auto& v, auto& k) { out.max_event_streams = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000)); }},
      });
}

void read_auth(const YAML::Node& n, const std::string& key, auth_config& out) {
  each_key(n, key,
           {
               {"tokens",
                [&](const YAML::Node& v, const std::string& k) {
                  if (v.IsNull())
                    return;
                  if (!v.IsSequence())
                    reject(k, "must be a list of {token or token_sha256, organization_id, scopes, name, bundles}");
                  for (std::size_t i = 0; i < v.size(); ++i)
                    out.tokens.push_back(read_token(v[i], k + "[" + std::to_string(i) + "]"));
                }},
               {"anonymous_organization",
                [&](const YAML::Node& v, const std::string& k) {
                  out.anonymous_organization = v.IsNull() ? std::string() : as_string(v, k);
                }},
               {"dev_organization", [&](auto& v, auto& k) { out.dev_organization = as_string(v, k); }},
           });
}

void read_samples(const YAML::Node& n, const std::string& key, samples_config& out) {
  each_key(n, key,
           {
               {"load", [&](auto& v, auto& k) { out.load = as_bool(v, k); }},
               {"path", [&](auto& v, auto& k) { out.path = as_string(v, k); }},
           });
}

void read_recall(const YAML::Node& n, const std::string& key, recall_config& out) {
  each_key(n, key,
           {
               {"graph_expansion", [&](auto& v, auto& k) { out.graph_expansion = as_bool(v, k); }},
               {"answer_floor", [&](auto& v, auto& k) { out.answer_floor = as_double(v, k, 0.0, 1.0); }},
               {"query_head",
                [&](auto& v, auto& k) {
                  out.query_head = as_string(v, k);
                  if (out.query_head.empty())
                    reject(k, "empty; give builtin, none or the path of a query head file");
                }},
           });
}

void read_entities(const YAML::Node& n, const std::string& key, entities_config& out) {
  each_key(n, key, {{"type_parents", [&](const YAML::Node& v, const std::string& k) {
                       if (v.IsNull())
                         return;
                       if (!v.IsMap())
                         return reject(k, "must be a map of type: parent type");
                       for (const auto& kv : v) {
                         const auto child = kv.first.as<std::string>();
                         const auto kk = k + "." + child;
                         auto parent = as_string(kv.second, kk);
                         if (child.empty() || parent.empty() || child.size() > 64 || parent.size() > 64)
                           return reject(kk, "type names must be 1..64 characters");
                         out.type_parents[child] = std::move(parent);
                       }
                     }}});
}

}  // namespace detail

std::optional<std::string> validate(const http_config& http) {
  const auto& listen = http.listen;
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size())
    return "config key 'http.listen': expected host:port, got '" + listen + "'";
  auto port = listen.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }) ||
      std::stoul(port) > 65535)
    return "config key 'http.listen': port must be a number 0..65535, got '" + port + "'";
  return std::nullopt;
}

std::optional<std::string> validate(const auth_config& auth, const http_config& http) {
  if (auth.anonymous_organization.empty())
    return std::nullopt;
  const auto& listen = http.listen;
  auto host = listen.substr(0, listen.rfind(':'));
  if (host != "127.0.0.1" && host != "localhost" && host != "[::1]" && host != "::1")
    return "config key 'auth.anonymous_organization': only allowed when http.listen is a loopback address, got '" +
           listen + "'";
  return std::nullopt;
}

}  // namespace engram::config
