// engramd's endpoints: each area adds its own (MCP and the console's API: mcp::service;
// the console's files: console/); the engine adds health, metrics, /v1/stats and /v1/cluster.
#include "actors/engine/internal/engine_impl.hpp"
#include "console/console.hpp"
#include "query/query.hpp"

#include <algorithm>
#include <map>

namespace engram::engine {

using json = nlohmann::json;

namespace {

const std::vector<std::string> get{"GET", "HEAD"};

void json_reply(const net::responder& respond, int status, const json& body) {
  respond(net::response{status, "application/json", body.dump(), {}});
}

}  // namespace

net::router engine::impl::routes() {
  net::router r;
  add_health_routes(r);
  if (!mcp)  // the store role serves MCP, the console and /v1; a process with the extract role alone does not
    return r;
  // store.cluster: a request for an organisation goes through the member's front door
  // (served here, answered "retry", or forwarded to its owner); the token says which.
  mcp::front_door door;
  if (members)
    door = [gate = members.get()](const mcp::grant& g, const net::request& req, const net::responder& respond,
                                  const net::handler& serve,
                                  bool is_mcp) { gate->route(g.organization_id, req, respond, serve, is_mcp); };
  mcp->add_routes(r, std::move(door));
  console::add_routes(r);
  add_admin_routes(r);
  return r;
}

void engine::impl::add_health_routes(net::router& r) {
  r.add("/healthz", get, [](const net::request&, net::responder respond) {
    json_reply(respond, 200, {{"status", "ok"}});
  });
  r.add("/readyz", get, [this](const net::request&, net::responder respond) {
    auto [ready, reason] = readiness();
    metrics.set_ready(ready);
    if (ready)
      return json_reply(respond, 200, {{"ready", true}});
    json_reply(respond, 503, {{"ready", false}, {"reason", reason}});
  });
  r.add("/metrics", get, [this](const net::request&, net::responder respond) {
    refresh_metrics();
    respond(net::response{200, "text/plain; version=0.0.4", metrics.render(), {}});
  });
}

void engine::impl::add_admin_routes(net::router& r) {
  // Clustered: an organisation's token is answered by its owner; the admin scope gets this
  // member's view (its organisations, its partitions; GET /v1/cluster has the group's).
  r.add("/v1/stats", get, [this](const net::request& req, net::responder respond) {
    auto who = mcp->who(req);
    if (auto* refused = std::get_if<net::response>(&who))
      return respond(std::move(*refused));
    const auto& g = std::get<mcp::grant>(who);
    auto serve = [this](const net::request& asked, net::responder answer) {
      auto again = mcp->who(asked);
      answer(net::response{200, "application/json", stats(std::get<mcp::grant>(again)), {}});
    };
    if (!members || g.allows("admin"))
      return serve(req, std::move(respond));
    members->route(g.organization_id, req, respond, serve, false);
  });
  // Who owns which engram-log partition, as this member sees it (docs/scaling-out.md).
  r.add("/v1/cluster", get, [this](const net::request& req, net::responder respond) {
    auto who = mcp->who(req);
    if (auto* refused = std::get_if<net::response>(&who))
      return respond(std::move(*refused));
    if (!std::get<mcp::grant>(who).allows("admin"))
      return json_reply(respond, 403, {{"error", "GET /v1/cluster needs a token with the admin scope"}});
    if (!members)
      return json_reply(respond, 200, {{"clustered", false}});
    auto view = members->view();
    view["clustered"] = true;
    view["waitingToDrop"] = drops ? drops->waiting() : std::vector<std::int32_t>{};
    view["dropped"] = drops ? drops->dropped() : 0;
    view["dropsCompacted"] = drops ? drops->compacted() : 0;
    json_reply(respond, 200, view);
  });
}

std::pair<bool, std::string> engine::impl::readiness() {
  if (store)
    if (auto failure = store->write_failure())
      return {false, *failure + "; applying stopped, reads go on; it goes on by itself once there is space"};
  if (watch)
    if (auto down = watch->unreachable())
      return {false, *down};
  if (auto open = gaps.open(); !open.empty()) {
    std::string reason;
    for (const auto& g : open)
      reason += (reason.empty() ? "" : "; ") + g.describe() +
                ": that partition is stopped (to go on without them: "
                "--set ingest.accept_gaps=" +
                g.topic + ":" + std::to_string(g.partition) + ")";
    return {false, reason};
  }
  if (resolve && resolve->dedup && !resolve->dedup->opened())
    return {false, "opening the vector indexes of dedup"};
  if (store && members) {
    // A member taking over partitions stays in the load balancer: it answers "retry" for
    // what it restores and forwards the rest.
    if (status.joined())
      return {true, {}};
    return {false, "waiting to join the consumer group of engram-log"};
  }
  if (store) {
    if (status.ready())
      return {true, {}};
    return {false, status.not_ready_reason()};
  }
  if (sequencer && sequencer->running())
    return {true, {}};
  return {false, "the extract stage is not running"};
}

void engine::impl::refresh_metrics() {
  metrics.set_ready(readiness().first);
  for (const auto& g : gaps.accepted())
    metrics.set_gap(g.topic, g.partition, 0);
  for (const auto& g : gaps.open())
    metrics.set_gap(g.topic, g.partition, g.lost());
  if (store) {
    metrics.set_rocksdb(store->engine_stats());
    auto parts = store->memory_stats();
    if (resolve && resolve->dedup) {
      parts["entry_vectors"] = resolve->dedup->memory_bytes();
      parts["dedup_facts"] = resolve->dedup->facts_bytes();
    }
    metrics.set_memory(parts);
  }
  metrics.set_heap();
  if (embedding_cache) {
    const auto [hits, misses] = embedding_cache->hits_and_misses();
    metrics.set_embedding_cache(embedding_cache->size(), hits, misses);
  }
  if (mcp) {
    metrics.set_event_streams(mcp->open_streams());
    std::map<std::string, double> stages;
    const auto seconds = mcp->queries().recall_stage_seconds();
    for (std::size_t i = 0; i < seconds.size(); ++i)
      stages[query::recall_stage_name(static_cast<query::recall_stage>(i))] = seconds[i];
    metrics.set_recall_stages(stages);
  }
  for (const auto& [p, s] : status.partitions())
    metrics.set_lag(p, std::max<std::int64_t>(0, s.high_watermark - s.next_offset));
  if (members) {
    auto figures = members->figures();
    if (drops)
      figures.dropped = drops->dropped();
    metrics.set_cluster(figures);
  }
}

}  // namespace engram::engine
