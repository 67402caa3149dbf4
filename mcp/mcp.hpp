#pragma once
// MCP over Streamable HTTP on POST /mcp (protocol 2025-11-25; 2025-06-18 and 2025-03-26
// accepted): the JSON-RPC envelope (jsonrpc.hpp), Origin and bearer-token checks
// (auth.hpp), and the tools of the registry (registry.hpp; the knowledge tools in
// knowledge_tools.cpp). No Beast here: it answers net::request with net::response. Every
// tool call is scoped to the token's organisation: the organisation is a key prefix of
// every store read, the vector index is the organisation's own, and no tool takes an
// organisation argument.

#include "services/clock.hpp"
#include "services/metrics.hpp"
#include "services/notifier.hpp"
#include "services/saves.hpp"
#include "dedup/dedup.hpp"
#include "embedding/embedder.hpp"
#include "embedding/query_head.hpp"
#include "mcp/auth.hpp"
#include "mcp/registry.hpp"
#include "knowledge/read_rules.hpp"
#include "net/http.hpp"
#include "net/router.hpp"
#include "schemas/log_record.hpp"
#include "base/result.hpp"
#include "storage/graph_store.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>

namespace engram::query {
class query_service;
}

namespace engram::mcp {

struct mcp_options {
  auth_options auth;
  /// A save is answered once applied, or after this with isError (it stays on the log).
  std::chrono::milliseconds save_timeout{10000};
  /// Largest tool answer, in bytes of JSON; larger result lists are cut.
  std::size_t max_response_bytes = 256 * 1024;
  /// Decay, hide_below and the branches' time to live.
  knowledge::read_policy policy;
  /// Entity types' parents (config entities.type_parents).
  std::map<std::string, std::string> type_parents;
};

struct mcp_dependencies {
  std::shared_ptr<const storage::graph_store> store;
  std::shared_ptr<const dedup::deduplicator> index;
  std::shared_ptr<const embedding::embedder> embedder;
  /// Maps a recall query's vector before it is searched (may be null: the vector as it is).
  std::shared_ptr<const embedding::query_head> query_head;
  services::apply_notifier* notifier = nullptr;
  /// Requests by tool and outcome, with latency (may be null).
  services::metrics* metrics = nullptr;
  /// "Now" for savedAt, issuedAt, decay and expiry (null: the system clock).
  std::shared_ptr<const services::clock> clock;
  /// Takes a save on its way (the engine's save actor: appends it to engram-log without
  /// waiting and answers it when the store has applied it or its wait is over).
  std::function<void(services::pending_save)> submit;
};

/// How a request for an organisation reaches the member that owns it (store.cluster): calls
/// `serve` here, answers "retry", or forwards it to its owner. `mcp`: the answer is JSON-RPC.
using front_door = std::function<void(const grant& g, const net::request& req, const net::responder& respond,
                                      const net::handler& serve, bool mcp)>;

class service {
public:
  service(mcp_dependencies deps, mcp_options opts);
  ~service();
  /// Answers one request to /mcp (any method).
  void handle(const net::request& req, net::responder respond);
  /// Answers GET /v1/kg/bundles[?name=N] for the token's organisation (engramctl kg).
  void handle_bundles(const net::request& req, net::responder respond);
  /// Answers a request under /v1/ other than /v1/stats and /v1/kg/bundles: the console's
  /// JSON API (mcp/internal/api.hpp, docs/console.md), through the tools' own checks.
  void handle_api(const net::request& req, net::responder respond);
  /// The grant of a request (its bearer token), or the response refusing it (401, 403).
  [[nodiscard]] std::variant<grant, net::response> who(const net::request& req) const;
  /// GET /mcp event streams whose clients are still there.
  [[nodiscard]] std::size_t open_streams();
  /// The query service the tools read through (recall's stage times, for /metrics).
  [[nodiscard]] const query::query_service& queries() const;
  /// The tools served (the knowledge tools at start; more may be added).
  [[nodiscard]] registry& tools();

  /// Adds /mcp, GET /v1/kg/bundles and the console's JSON API (/v1/*) to `r`, each through
  /// `door` when set (the token says which organisation, and so which member, answers).
  void add_routes(net::router& r, front_door door);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Newest protocol first.
inline constexpr const char* protocol_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

}  // namespace engram::mcp
