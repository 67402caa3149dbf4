#pragma once
// What engramd serves and to whom: the http, auth (tokens), samples, recall and entities
// sections of engram.yaml.

#include <map>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

namespace engram::config {

struct http_config {
  /// Address the HTTP server binds, "host:port". Default: "127.0.0.1:8700" (loopback only).
  std::string listen = "127.0.0.1:8700";
  /// Connections served at once; one more is answered 503 and closed. Default: 1024.
  std::uint32_t max_connections = 1024;
  /// Event streams (GET /mcp, /v1/events) open at once; one more is answered 503. Default: 256.
  std::uint32_t max_event_streams = 256;
};

struct token_config {
  /// The bearer token; never logged.
  std::string token;
  std::string organization_id;
  /// Any of read, write, admin.
  std::vector<std::string> scopes;
  /// Who saves with it (recorded as the author of saved knowledge). Default: "agent".
  std::string name = "agent";
  /// The knowledge bundles of its organisation it is bound to: only these bundles' tools
  /// (list_<type>, get_<type>, ...) and prompts are shown to it. Default: none.
  std::vector<std::string> bundles;
  /// The token's SHA-256 (64 lower-case hex digits) instead of `token`, so the configuration
  /// holds no secret (`printf %s "$TOKEN" | sha256sum`). Exactly one of the two is given.
  std::string token_sha256;
};

struct auth_config {
  /// Tokens and the one organisation each may see. Default: none (a dev token is made at
  /// first start, see engine).
  std::vector<token_config> tokens;
  /// Serves requests without a token as this organisation (read, write); only allowed when
  /// http.listen is a loopback address. Default: off.
  std::string anonymous_organization;
  /// The organisation of the dev token generated when no tokens are configured. Default: acme.
  std::string dev_organization = "acme";
};

struct samples_config {
  /// Produce the demo stream into the inbound topic at start. Default: true (the embedded default).
  bool load = true;
  /// JSONL file of inbound events, relative to the working directory.
  /// Default: "tools/samples/demo-stream.jsonl".
  std::string path = "tools/samples/demo-stream.jsonl";
};

struct recall_config {
  /// Hybrid recall: entries that mention the entities a query names, then those
  /// of their neighbours in the entity graph, join recall's fusion as a third ranked list.
  /// Default: false (not yet measured on a multi-hop question set).
  bool graph_expansion = false;
  /// The query head (embedding/query_head.hpp) that maps a question's vector before it is
  /// searched: "builtin" (the head compiled in, trained for the USE Lite encoders), "none",
  /// or the path of a head file. With an embedder it was not trained for (kind openai) no head
  /// is applied. Default: "builtin".
  std::string query_head = "builtin";
  /// When a question's vector is this close (cosine, 0..1) to nothing stored, recall answers
  /// nothing, with a note. 0: always answer. Default: 0.25 (docs/recall.md).
  double answer_floor = 0.25;
};

struct entities_config {
  /// An entity type's parent type (type names as agents give them; compared as lower snake
  /// case), e.g. {saas_company: company}: a query for a type also finds its subtypes, with
  /// confidence 0.8 per level. Default: none.
  std::map<std::string, std::string> type_parents;
};

/// http.listen is host:port with a port 0..65535; or the problem.
[[nodiscard]] std::optional<std::string> validate(const http_config& http);
/// An anonymous organisation only with a loopback http.listen (`http` validated first); or
/// the problem.
[[nodiscard]] std::optional<std::string> validate(const auth_config& auth, const http_config& http);

}  // namespace engram::config
