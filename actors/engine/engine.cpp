#include "actors/engine/engine.hpp"
#include "schemas/tools.hpp"
#include "config/log.hpp"

#include "actors/engine/cluster.hpp"
#include "actors/engine/janitor.hpp"
#include "actors/ingest/key_ring.hpp"
#include "actors/ingest/members.hpp"
#include "actors/ingest/log_source.hpp"
#include "actors/store/store_writer.hpp"
#include "reading/read.hpp"
#include "reading/parse.hpp"
#include "reading/name_tagger.hpp"
#include "reading/relation_model.hpp"
#include "embedding/query_head.hpp"
#include "embedding/type_model.hpp"
#include "actors/ingest/broker_watch.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/log_consumer.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"
#include "net/router.hpp"
#include "query/query.hpp"
#include "mcp/mcp.hpp"
#include "console/console.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <shared_mutex>

namespace engram::engine {
namespace {

using json = nlohmann::json;

/// Partitions of each topic the embedded broker creates.
constexpr int embedded_partitions = 4;

reading::extractor_options extractor_options_of(const config::engram_config& cfg,
                                                std::shared_ptr<const embedding::type_model> types,
                                                std::shared_ptr<const reading::relation_model> relations,
                                                std::shared_ptr<const reading::sentence_parser> parser) {
  reading::extractor_options o;
  o.validator.types = std::move(types);
  o.validator.relations = std::move(relations);
  o.validator.parser = std::move(parser);
  if (!cfg.extraction.name_model)
    o.validator.names = nullptr;
  if (!cfg.extraction.relation_classifier)
    o.validator.classifier = nullptr;
  o.validator.confidence_threshold = cfg.extraction.confidence_threshold;
  o.validator.max_entries = cfg.extraction.max_entries_per_message;
  o.validator.passages = cfg.extraction.passages;
  o.validator.bulk = cfg.extraction.bulk == "keep"             ? reading::bulk_policy::keep
                     : cfg.extraction.bulk == "low_confidence" ? reading::bulk_policy::low_confidence
                                                               : reading::bulk_policy::skip;
  o.kind = cfg.extractor.kind == "llm" ? reading::extractor_kind::llm : reading::extractor_kind::rules;
  o.llm.base_url = cfg.extractor.llm.base_url;
  o.llm.model = cfg.extractor.llm.model;
  o.llm.api_key = cfg.extractor.llm.api_key;
  o.llm.timeout = std::chrono::milliseconds(cfg.extractor.llm.timeout_ms);
  return o;
}

/// On a real broker: engram-log must keep every record (topics.hpp, judge_retention); an
/// error refuses the start. A broker that cannot describe configurations (the test broker)
/// or a topic not there yet is a warning: nothing to check.
engram::result<void> check_retention(const config::engram_config& cfg) {
  auto& log = logging::get(logging::module::engine);
  const auto& t = cfg.kafka.topics;
  auto described = ingest::describe_topics(cfg.kafka.brokers, cfg.kafka.rdkafka, {t.log, t.inbound});
  if (!described || !described->count(t.log)) {
    log.warn("retention of {} not checked: {}", t.log,
             described ? "the topic is not there yet (create it with retention.ms=-1, retention.bytes=-1, "
                         "cleanup.policy=delete: a broker's default deletes records after 7 days)"
                       : described.error());
    return {};
  }
  auto inbound = described->find(t.inbound);
  auto verdict = ingest::judge_retention(t.log, described->at(t.log), t.inbound,
                                         inbound == described->end() ? nullptr : &inbound->second,
                                         cfg.kafka.min_inbound_retention_ms);
  for (const auto& w : verdict.warnings)
    log.warn("{}", w);
  if (!verdict.errors.empty()) {
    std::string all;
    for (const auto& e : verdict.errors)
      all += (all.empty() ? "" : "; ") + e;
    return engram::fail("refusing to start: " + all);
  }
  log.info("{} keeps every record (retention.ms=-1, retention.bytes=-1, cleanup.policy=delete)", t.log);
  return {};
}

}  // namespace

struct engine::impl {
  config::engram_config cfg;
  std::string brokers;
  std::unique_ptr<ingest::embedded_broker> broker;
  /// Whether Kafka answers, for /readyz (not in a replay).
  std::unique_ptr<ingest::broker_watch> watch;
  std::shared_ptr<storage::graph_store> store;
  services::metrics metrics;
  actors::ingest_status status;
  actors::gap_registry gaps;
  services::apply_notifier notifier;
  std::unique_ptr<ingest::kafka_producer> log_producer;
  std::unique_ptr<mcp::service> mcp;
  std::shared_ptr<const embedding::embedder> embedder;
  /// The same embedder's cache, when embedder.cache_size (its figures in /metrics).
  std::shared_ptr<const embedding::cached_embedder> embedding_cache;
  /// extraction.type_model (null when off).
  std::shared_ptr<const embedding::type_model> types;
  /// Recall's query head (recall.query_head), or null.
  std::shared_ptr<const embedding::query_head> query_head;
  std::shared_ptr<const reading::relation_model> relations;
  /// The sentence parser that picks the relation model's pairs (with the model only).
  std::shared_ptr<const reading::sentence_parser> parser;
  std::shared_ptr<actors::resolver> resolve;
  /// The data keys of sealed engram-log records (kafka.topics.keys).
  std::shared_ptr<ingest::key_ring> keys;
  caf::actor_system_config caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  /// The store actor: the consumer sends it each batch of engram-log.
  actors::stage_actor store_actor;
  std::unique_ptr<ingest::log_consumer> consumer;
  /// store.standby_replicas: follows partitions other members own.
  std::unique_ptr<ingest::log_follower> follower;
  std::unique_ptr<ingest::sequencer> sequencer;
  std::unique_ptr<http::server> http;
  std::shared_ptr<const services::clock> clock;
  std::unique_ptr<actors::timers> timers;
  actors::timers::append_fn append;
  /// store.cluster: this member's front door (null when not clustered).
  std::unique_ptr<cluster> members;
  /// store.cluster: drops the partitions this member let go.
  std::unique_ptr<janitor> drops;
  /// Held shared by the timers while they act for an owned organisation; taken exclusively
  /// when partitions are revoked (ingest::ownership_hooks).
  std::shared_mutex ownership;
  bool stopped = false;

  /// store.cluster: engram-log's partition count, the members topic, the front door.
  engram::result<void> join_cluster(const config::engram_config& cfg);
  /// True when this process acts for `org` now: not clustered, or its partition is owned
  /// and caught up here.
  [[nodiscard]] bool owns(const std::string& org);

  /// How this engramd reads messages: the extract stage, and the consumer for records that
  /// carry no reading.
  reading::reader_context reader(const config::engram_config& cfg) {
    return {extractor_options_of(cfg, types, relations, parser), embedder, &metrics, cfg.embedder.max_per_message};
  }

  /// Steps of engine::start, in the order it takes them.
  engram::result<void> open_store(const config::engram_config& cfg);
  /// The embedded broker when asked, else the configured one (its retention checked unless
  /// replaying).
  engram::result<void> connect_kafka(const config::engram_config& cfg, const engine_options& opts);
  /// The embedder (cached when embedder.cache_size) and the type model when on.
  engram::result<void> make_embedders(const config::engram_config& cfg);
  engram::result<void> start_http(const config::engram_config& cfg);
  engram::result<void> start_sequencer(const config::engram_config& cfg, ingest::sequencer_options so);

  /// engramd's endpoints (docs/architecture.md).
  http::router routes();
  /// The /v1/stats document as `g` sees it: its organisation's rows (every organisation's
  /// for the admin scope), and the log's partitions, gaps and counters.
  std::string stats(const mcp::grant& g);
  /// Parts of the /v1/stats document.
  /// `only`: that organisation's row alone (empty: every organisation's).
  json organization_rows(const std::string& only);
  json partition_rows();
  json gap_rows();
  /// Ready for /readyz and /metrics: caught up (or the extract stage running) and no
  /// partition stopped at a gap; else why not.
  std::pair<bool, std::string> readiness();
  /// What each consumer does with a gap: accepted when the replay accepts a partial
  /// rebuild or ingest.accept_gaps names the partition.
  ingest::gap_handling gap_handling(bool accept_partial);
};

std::pair<bool, std::string> engine::impl::readiness() {
  if (store)
    if (auto failure = store->write_failure())
      return {false, *failure + "; applying stopped, reads go on; free space and restart engramd"};
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

engram::result<void> engine::impl::join_cluster(const config::engram_config& cfg) {
  auto& log = logging::get(logging::module::engine);
  const auto& topic = cfg.kafka.topics.log;
  auto ranges = ingest::partition_ranges(brokers, {topic});
  if (!ranges || ranges->empty())
    return engram::fail("store.cluster: cannot learn " + topic + "'s partitions (create it with its final " +
                        "partition count before the members start: an organisation's partition depends on it)" +
                        (ranges ? std::string() : ": " + ranges.error()));
  // An organisation's partition depends on the count: a store built with another count would
  // hold organisations another member now owns, and the history of one would split.
  const auto count_file = std::filesystem::path(cfg.storage.path) / "cluster-partitions";
  const auto count = std::to_string(ranges->size());
  if (std::ifstream in(count_file); in) {
    std::string topic_was, count_was;
    in >> topic_was >> count_was;
    if (topic_was == topic && count_was != count)
      return engram::fail("store.cluster: " + topic + " has " + count +
                          " partitions, but this store was built when it had " + count_was + " (" +
                          count_file.string() +
                          "): organisations would move between partitions and their history split between two "
                          "owners; give the topic its count back, or start this member on an empty store");
  } else {
    const auto tmp = count_file.string() + ".tmp";
    std::ofstream(tmp) << topic << " " << count << "\n";
    std::filesystem::rename(tmp, count_file);
  }
  cluster_options o;
  o.name = cfg.store.name();
  o.url = cfg.store.advertised_url;
  o.partitions = static_cast<std::int32_t>(ranges->size());
  o.forward_timeout = std::chrono::milliseconds(cfg.store.forward_timeout_ms);
  o.standby_replicas = cfg.store.standby_replicas;
  status.set_clustered(true);
  members = std::make_unique<cluster>(o, status);
  auto topic_open = ingest::members_topic::open(brokers, cfg.kafka.rdkafka, cfg.kafka.topics.members,
                                                std::chrono::milliseconds(cfg.store.heartbeat_ms),
                                                [gate = members.get()] { return gate->self(); });
  if (!topic_open)
    return engram::fail(topic_open.error());
  members->attach(std::move(*topic_open));  // before the follower, which reads the members
  if (cfg.store.standby_replicas > 0) {
    auto started = ingest::log_follower::start(cfg, brokers, store, store_actor, reader(cfg), keys,
                                               [gate = members.get()] { return gate->standby_wanted(); });
    if (!started)
      return engram::fail(started.error());
    follower = std::move(*started);
    members->standby_positions([f = follower.get()] { return f->positions(); });
  }
  janitor_options jo;
  jo.topic = topic;
  jo.after = std::chrono::milliseconds(cfg.store.drop_after_ms);
  jo.partition_of = [gate = members.get()](const std::string& org) { return gate->partition_of(org); };
  jo.standby_wanted = [gate = members.get()] { return gate->standby_wanted(); };
  drops = std::make_unique<janitor>(std::move(jo), store, store_actor, status, follower.get());
  if (auto finished = drops->finish_interrupted(); !finished)
    return engram::fail("store.cluster: cannot finish an interrupted drop: " + finished.error());
  log.info("clustered store member '{}' at {}: {} has {} partitions; members on {}", o.name, o.url, topic, o.partitions,
           cfg.kafka.topics.members);
  return {};
}

bool engine::impl::owns(const std::string& org) {
  if (!members)
    return true;
  return status.state(members->partition_of(org)).first == actors::partition_state::ready;
}

ingest::gap_handling engine::impl::gap_handling(bool accept_partial) {
  ingest::gap_handling h;
  h.registry = &gaps;
  h.accept = [accept_partial, this](const actors::log_gap& g) {
    return accept_partial || cfg.ingest.accepts_gap(g.topic, g.partition);
  };
  return h;
}

http::router engine::impl::routes() {
  const std::vector<std::string> get{"GET", "HEAD"};
  auto json_reply = [](const http::responder& respond, int status, const json& body) {
    respond(http::response{status, "application/json", body.dump(), {}});
  };
  // store.cluster: a request for an organisation goes through the member's front door
  // (served here, answered "retry", or forwarded to its owner); the token says which.
  auto gated = [this, json_reply](bool is_mcp, http::handler serve) -> http::handler {
    if (!members)
      return serve;
    return [this, json_reply, is_mcp, serve = std::move(serve)](const http::request& req, http::responder respond) {
      if (!mcp)
        return json_reply(respond, 503, {{"error", "MCP is not ready"}});
      auto who = mcp->who(req);
      if (auto* refused = std::get_if<http::response>(&who))
        return respond(std::move(*refused));
      members->route(std::get<mcp::grant>(who).organization_id, req, respond, serve, is_mcp);
    };
  };
  http::router r;
  if (store)  // the store role serves MCP; a process with the extract role alone does not
    r.add("/mcp", {}, gated(true, [this, json_reply](const http::request& req, http::responder respond) {
            if (!mcp)
              return json_reply(respond, 503, {{"error", "MCP is not ready"}});
            mcp->handle(req, std::move(respond));
          }));
  r.add("/healthz", get, [json_reply](const http::request&, http::responder respond) {
    json_reply(respond, 200, {{"status", "ok"}});
  });
  r.add("/readyz", get, [this, json_reply](const http::request&, http::responder respond) {
    auto [ready, reason] = readiness();
    metrics.set_ready(ready);
    if (ready)
      return json_reply(respond, 200, {{"ready", true}});
    json_reply(respond, 503, {{"ready", false}, {"reason", reason}});
  });
  r.add("/metrics", get, [this](const http::request&, http::responder respond) {
    metrics.set_ready(readiness().first);
    for (const auto& g : gaps.accepted())
      metrics.set_gap(g.topic, g.partition, 0);
    for (const auto& g : gaps.open())
      metrics.set_gap(g.topic, g.partition, g.lost());
    if (store) {
      metrics.set_rocksdb(store->engine_stats());
      auto parts = store->memory_stats();
      if (resolve && resolve->dedup)
        parts["entry_vectors"] = resolve->dedup->memory_bytes();
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
    respond(http::response{200, "text/plain; version=0.0.4", metrics.render(), {}});
  });
  if (store)
    r.add("/v1/kg/bundles", get, gated(false, [this, json_reply](const http::request& req, http::responder respond) {
            if (!mcp)
              return json_reply(respond, 503, {{"error", "MCP is not ready"}});
            mcp->handle_bundles(req, std::move(respond));
          }));
  if (store) {
    // Clustered: an organisation's token is answered by its owner; the admin scope gets this
    // member's view (its organisations, its partitions; GET /v1/cluster has the group's).
    r.add("/v1/stats", get, [this, json_reply](const http::request& req, http::responder respond) {
      if (!mcp)
        return json_reply(respond, 503, {{"error", "MCP is not ready"}});
      auto who = mcp->who(req);
      if (auto* refused = std::get_if<http::response>(&who))
        return respond(std::move(*refused));
      const auto& g = std::get<mcp::grant>(who);
      auto serve = [this](const http::request& r, http::responder answer) {
        auto again = mcp->who(r);
        answer(http::response{200, "application/json", stats(std::get<mcp::grant>(again)), {}});
      };
      if (!members || g.allows("admin"))
        return serve(req, std::move(respond));
      members->route(g.organization_id, req, respond, serve, false);
    });
    // Who owns which engram-log partition, as this member sees it (docs/scaling-out.md).
    r.add("/v1/cluster", get, [this, json_reply](const http::request& req, http::responder respond) {
      if (!mcp)
        return json_reply(respond, 503, {{"error", "MCP is not ready"}});
      auto who = mcp->who(req);
      if (auto* refused = std::get_if<http::response>(&who))
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
    // The web console (docs/console.md): its files, compiled in; it calls /v1/ with the token pasted.
    r.add("/ui", get, [](const http::request&, http::responder respond) {
      respond(http::response{302, "text/plain", "see /ui/", {{"Location", "/ui/"}}});
    });
    r.add("/ui/*", get, [](const http::request& req, http::responder respond) {
      auto path = req.target.substr(
          4, req.target.find('?') == std::string::npos ? std::string::npos : req.target.find('?') - 4);
      const auto* a = console::find(path);
      if (!a)
        return respond(
            http::response{404, "application/json", json{{"error", "no such file: /ui/" + path}}.dump(), {}});
      const std::string etag = "\"" + std::string(a->sha256.substr(0, 32)) + "\"";
      std::vector<std::pair<std::string, std::string>> headers{
          {"ETag", etag},
          {"Cache-Control", "no-cache"},
          {"X-Content-Type-Options", "nosniff"},
          {"Content-Security-Policy",
           "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"}};
      if (auto m = req.headers.find("if-none-match"); m != req.headers.end() && m->second == etag)
        return respond(http::response{304, std::string(a->content_type()), "", std::move(headers)});
      respond(http::response{200, std::string(a->content_type()), std::string(a->content()), std::move(headers)});
    });
    r.add("/v1/*", {}, gated(false, [this, json_reply](const http::request& req, http::responder respond) {
            if (!mcp)
              return json_reply(respond, 503, {{"error", "MCP is not ready"}});
            mcp->handle_api(req, std::move(respond));
          }));
  }
  return r;
}

namespace {

/// The dev token: made once into the data directory (mode 0600) when no token is configured.
engram::result<std::string> dev_token(const std::string& dir) {
  auto path = std::filesystem::path(dir) / "dev-token";
  std::ifstream in(path);
  std::string token;
  if (in >> token && token.size() >= 32)
    return token;
  std::random_device rd;
  static constexpr char hex[] = "0123456789abcdef";
  token.clear();
  for (int i = 0; i < 40; ++i)
    token += hex[rd() & 15];
  std::string tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ::write(fd, token.data(), token.size()) != static_cast<ssize_t>(token.size()) || ::close(fd) != 0)
    return engram::fail("cannot write the dev token to " + tmp);
  std::filesystem::rename(tmp, path);
  return token;
}

}  // namespace

engram::result<void> engine::start_mcp(impl& m, const config::engram_config& cfg) {
  mcp::mcp_options o;
  for (const auto& t : cfg.auth.tokens)
    o.auth.tokens[t.token_sha256.empty() ? mcp::token_digest(t.token) : t.token_sha256] = {
        t.organization_id, std::set<std::string>(t.scopes.begin(), t.scopes.end()), t.name,
        std::set<std::string>(t.bundles.begin(), t.bundles.end())};
  o.auth.anonymous_organization = cfg.auth.anonymous_organization;
  o.policy.decay = cfg.decay;
  o.policy.branch_ttl_ms = static_cast<std::int64_t>(cfg.branches.ttl_ms);
  o.policy.graph_expansion = cfg.recall.graph_expansion;
  o.policy.answer_floor = cfg.recall.answer_floor;
  o.type_parents = cfg.entities.type_parents;
  if (o.auth.tokens.empty() && o.auth.anonymous_organization.empty()) {
    auto token = dev_token(cfg.storage.path);
    if (!token)
      return engram::fail(token.error());
    o.auth.tokens[mcp::token_digest(*token)] = {cfg.auth.dev_organization, {"read", "write", "admin"}, "dev", {}};
    // The token itself is never logged: logs are shipped and kept where secrets must not be.
    logging::get(logging::module::mcp)
        .info("no auth.tokens configured; the dev token of organisation '{}' is in {}/dev-token (mode 0600)",
              cfg.auth.dev_organization, cfg.storage.path);
  }
  if (!o.auth.anonymous_organization.empty())
    logging::get(logging::module::mcp)
        .warn("requests without a token are served as organisation '{}' (auth.anonymous_organization)",
              o.auth.anonymous_organization);
  // A record that engram-log has not taken within this fails for good (message.timeout.ms),
  // before MCP stops waiting for it: an agent told "not saved" is never saved later.
  const auto delivery_timeout = o.save_timeout - std::chrono::seconds(2);
  auto log_producer = ingest::kafka_producer::create(m.brokers, cfg.kafka.rdkafka, delivery_timeout);
  if (!log_producer)
    return engram::fail(log_producer.error());
  m.log_producer = std::move(*log_producer);
  if (!m.log_producer->prepare(cfg.kafka.topics.log, std::chrono::seconds(5)))
    logging::get(logging::module::mcp).warn("{} (the first save will look it up)", m.log_producer->last_error());
  mcp::mcp_dependencies d;
  d.store = m.store;
  d.index = std::shared_ptr<const dedup::deduplicator>(m.resolve, m.resolve->dedup.get());
  d.embedder = m.embedder;
  d.query_head = m.query_head;
  d.notifier = &m.notifier;
  d.clock = m.clock;
  d.metrics = &m.metrics;
  auto* producer = m.log_producer.get();
  auto topic = cfg.kafka.topics.log;
  d.append = [producer, topic, delivery_timeout](const schemas::encoded_record& r) -> engram::result<void> {
    auto sent = producer->deliver(topic, r.key, r.value, {{schemas::kind_header, r.kind}});
    if (sent.delivered)
      return {};
    if (sent.possibly_written)
      return engram::fail("the broker did not confirm the record (" + sent.error + "): " + topic +
                          " may hold it all the same, and then it will be applied");
    return engram::fail(topic + " did not take the record within " + std::to_string(delivery_timeout.count()) +
                        " ms (" + sent.error + "); nothing was written");
  };
  m.append = d.append;
  m.mcp = std::make_unique<mcp::service>(std::move(d), std::move(o));
  return {};
}

engram::result<void> engine::impl::open_store(const config::engram_config& cfg) {
  storage::open_options so;
  so.path = cfg.storage.path;
  so.memory_mb = cfg.storage.memory_mb;
  so.reserved_tool_names = schemas::server_tool_names();
  auto opened = storage::open_graph_store(so);
  if (!opened)
    return engram::fail(opened.error());
  store = std::move(*opened);
  logging::get(logging::module::store).info("opened {} ({} organisations)", cfg.storage.path, store->stats().size());
  return {};
}

engram::result<void> engine::impl::connect_kafka(const config::engram_config& cfg, const engine_options& opts) {
  const bool replay = opts.replay;
  if (cfg.kafka.embedded()) {
    const auto& t = cfg.kafka.topics;
    auto started =
        ingest::embedded_broker::start({t.inbound, t.log, t.reminders, t.dead_letter, t.keys}, embedded_partitions);
    if (!started)
      return engram::fail(started.error());
    broker = std::move(*started);
    brokers = broker->bootstrap();
    logging::get(logging::module::engine)
        .info(
            "embedded Kafka (librdkafka mock cluster, in memory, starts empty) at {}: topics {}, {}, {}, {}, {} "
            "with {} partitions each; produce to it with engramctl produce --brokers {} or kcat -b {}",
            brokers, t.inbound, t.log, t.reminders, t.dead_letter, t.keys, embedded_partitions, brokers, brokers);
  } else {
    brokers = cfg.kafka.brokers;
  }
  if (!replay) {  // engramd waits for Kafka to answer, then watches it
    auto made = ingest::broker_watch::create(brokers, cfg.kafka.rdkafka);
    if (!made)
      return engram::fail(made.error());
    watch = std::move(*made);
    if (!watch->wait_until_answered(opts.stopping))
      return engram::fail("stopped while waiting for Kafka at " + brokers);
    watch->watch(std::chrono::seconds(1));
  }
  if (!cfg.kafka.embedded()) {
    if (!replay)  // a replay only reads: it refuses a partial rebuild instead
      if (auto checked = check_retention(cfg); !checked)
        return engram::fail(checked.error());
  }
  // The data keys of sealed records, on a compacted topic engramd creates when it is missing
  // (kafka.create_key_topic; docker-compose's kafka-init creates it too, docs/forgetting.md).
  // A replay only reads: it never creates it.
  auto ring =
      ingest::key_ring::open(brokers, cfg.kafka.rdkafka, cfg.kafka.topics.keys, cfg.kafka.create_key_topic && !replay);
  if (!ring)
    return engram::fail(ring.error());
  keys = std::move(*ring);
  return {};
}

engram::result<void> engine::impl::make_embedders(const config::engram_config& cfg) {
  auto made_embedder = embedding::make_embedder(cfg.embedder);
  if (!made_embedder)
    return engram::fail(made_embedder.error());
  std::shared_ptr<const embedding::embedder> made = std::move(*made_embedder);
  if (cfg.embedder.cache_size > 0) {
    embedding_cache = std::make_shared<embedding::cached_embedder>(std::move(made), cfg.embedder.cache_size);
    made = embedding_cache;
  }
  embedder = made;
  if (cfg.recall.query_head != "none") {
    if (cfg.embedder.kind != "use-lite-int8" && cfg.embedder.kind != "use-lite") {
      logging::get(logging::module::mcp)
          .info("recall.query_head not applied: it was trained for the USE Lite encoders, not {}", cfg.embedder.kind);
    } else if (cfg.recall.query_head == "builtin") {
      query_head = embedding::query_head::builtin();
    } else {
      auto loaded = embedding::query_head::load(cfg.recall.query_head);
      if (!loaded)
        return engram::fail("recall.query_head: " + loaded.error());
      query_head = std::move(*loaded);
    }
    if (query_head && query_head->encoder() != "use-lite-int8" && query_head->encoder() != "use-lite")
      return engram::fail("recall.query_head: the head was trained for the encoder '" + query_head->encoder() +
                          "', not USE Lite");
    if (query_head && query_head->dim() != made->dim())
      return engram::fail("recall.query_head: the head maps " + std::to_string(query_head->dim()) +
                          "-d vectors, the embedder gives " + std::to_string(made->dim()));
  }
  if (cfg.extraction.type_model || cfg.extraction.relation_model) {
    // Both models run the int8 encoder the type model is bound to.
    auto made_types = embedding::make_type_model(cfg.embedder, made);
    if (!made_types)
      return engram::fail(made_types.error());
    if (cfg.extraction.relation_model) {
      auto made_relations = reading::relation_model::make(
          std::shared_ptr<const embedding::embedder>(*made_types, &(*made_types)->encoder()));
      if (!made_relations)
        return engram::fail(made_relations.error());
      relations = std::move(*made_relations);
      auto opened = reading::sentence_parser::open();
      if (!opened)
        return engram::fail(opened.error());
      parser = std::move(*opened);
    }
    if (cfg.extraction.type_model)
      types = std::move(*made_types);
  }
  return {};
}

engram::result<void> engine::impl::start_http(const config::engram_config& cfg) {
  http::server_options ho;
  ho.listen = cfg.http.listen;
  ho.max_connections = cfg.http.max_connections;
  ho.max_event_streams = cfg.http.max_event_streams;
  auto served = std::make_shared<const http::router>(routes());
  auto listening = http::server::start(
      ho, [served](const http::request& r, http::responder respond) { (*served)(r, std::move(respond)); });
  if (!listening)
    return engram::fail(listening.error());
  http = std::move(*listening);
  std::string paths;
  for (const auto& p : served->paths())
    paths += " " + p;
  logging::get(logging::module::http).info("listening on {} (port {}):{}", cfg.http.listen, http->port(), paths);
  return {};
}

engram::result<void> engine::impl::start_sequencer(const config::engram_config& cfg, ingest::sequencer_options so) {
  if (!so.extract) {
    auto rc = reader(cfg);
    const unsigned threads =
        cfg.ingest.extract_threads ? cfg.ingest.extract_threads : std::max(1u, std::thread::hardware_concurrency());
    so.extract = [rc, threads](std::span<const schemas::inbound_message> ms) {
      return reading::read_messages(ms, rc, threads);
    };
    so.embedder = embedder->name();
  }
  so.gaps = gap_handling(false);
  so.keys = keys;
  if (store)  // an accepted inbound gap is shown in /v1/stats beside engram-log's
    so.gaps.record = [store = store](const actors::log_gap& g) {
      return store->record_gap({g.topic, g.partition, g.from, g.to}, /*advance=*/false, {}) == storage::errc::ok;
    };
  auto started = ingest::sequencer::start(cfg, brokers, metrics, std::move(so));
  if (!started)
    return engram::fail(started.error());
  sequencer = std::move(*started);
  return {};
}

namespace {

/// samples.load: produces the sample events to the inbound topic; on a failure stops `e`
/// first, as engine::start does for every step after the store.
engram::result<void> produce_samples(engine& e, const std::string& brokers, const config::engram_config& cfg) {
  std::ifstream in(cfg.samples.path);
  if (!in) {
    e.stop();
    return engram::fail("samples.load: cannot read '" + cfg.samples.path +
                        "' (relative paths start at the working directory)");
  }
  auto samples_producer = ingest::kafka_producer::create(brokers, cfg.kafka.rdkafka);
  if (!samples_producer) {
    e.stop();
    return engram::fail(samples_producer.error());
  }
  auto& producer = *samples_producer;
  auto report = ingest::produce_events(*producer, cfg.kafka.topics.inbound, in, cfg.ingest.max_event_bytes);
  for (const auto& p : report.problems)
    logging::get(logging::module::engine).warn("samples: {}: {}", cfg.samples.path, p);
  if (!report.error.empty()) {
    e.stop();
    return engram::fail("samples.load: " + report.error);
  }
  logging::get(logging::module::engine)
      .info("samples: produced {} events from {} to {}", report.produced, cfg.samples.path, cfg.kafka.topics.inbound);
  return {};
}

}  // namespace

engram::result<std::unique_ptr<engine>> engine::start(const config::engram_config& cfg, engine_options opts) {
  std::unique_ptr<engine> e(new engine());
  e->impl_ = std::make_unique<impl>();
  auto& m = *e->impl_;
  m.cfg = cfg;
  m.clock = opts.clock ? opts.clock : std::make_shared<services::system_clock>();
  // A replay is the store role alone, whatever the configuration says.
  const bool store_role = cfg.roles.store || opts.replay;
  const bool extract_role = cfg.roles.extract && !opts.replay;

  if (store_role)
    if (auto opened = m.open_store(cfg); !opened)
      return engram::fail(opened.error());
  if (auto connected = m.connect_kafka(cfg, opts); !connected)
    return engram::fail(connected.error());
  if (auto made = m.make_embedders(cfg); !made)
    return engram::fail(made.error());
  if (store_role) {
    auto started = start_store(m, cfg, opts);
    if (!started) {
      e->stop();
      return engram::fail(started.error());
    }
    if (opts.replay)
      return e;
  }

  if (store_role && cfg.store.cluster)
    if (auto joined = m.join_cluster(cfg); !joined) {
      e->stop();
      return engram::fail(joined.error());
    }
  if (auto listening = m.start_http(cfg); !listening) {
    e->stop();
    return engram::fail(listening.error());
  }

  if (store_role) {
    ingest::ownership_hooks hooks;
    if (m.members) {
      hooks.changed = [gate = m.members.get(), j = m.drops.get()] {
        j->assigned();
        gate->publish();
      };
      hooks.guard = &m.ownership;
      // An assignment waits for a drop under way; a standby's reading of what comes reaches
      // the store first.
      hooks.assigning = [j = m.drops.get(), f = m.follower.get()](const std::set<std::int32_t>& p) {
        j->assigning();
        if (f)
          f->release(p);
      };
    }
    if (m.follower)
      hooks.revoked = [f = m.follower.get()](const std::set<std::int32_t>& p) { f->unblock(p); };
    auto consumer = ingest::log_consumer::start(cfg, m.brokers, m.store, m.store_actor, m.metrics, m.status,
                                                m.gap_handling(false), m.reader(cfg), false, m.keys, std::move(hooks));
    if (!consumer) {
      e->stop();
      return engram::fail(consumer.error());
    }
    m.consumer = std::move(*consumer);
    if (m.drops)
      m.drops->start();
  }
  if (extract_role) {
    if (auto started = m.start_sequencer(cfg, std::move(opts.sequencer)); !started) {
      e->stop();
      return engram::fail(started.error());
    }
  }

  if (store_role) {
    auto started = start_timers(m, cfg, opts);
    if (!started) {
      e->stop();
      return engram::fail(started.error());
    }
  }
  if (cfg.samples.load)
    if (auto produced = produce_samples(*e, m.brokers, cfg); !produced)
      return engram::fail(produced.error());
  return e;
}

engram::result<void> engine::start_store(impl& m, const config::engram_config& cfg, const engine_options& opts) {
  auto embedder = m.embedder;
  auto resolve = std::make_shared<actors::resolver>();
  {
    dedup::dedup_options dopts;
    dopts.threshold = cfg.dedup.threshold;
    dopts.dim = embedder->dim();
    resolve->dedup = std::make_unique<dedup::deduplicator>(m.store, dopts);
    resolve->contradiction = std::make_unique<contradiction::contradiction_finder>(m.store);
    resolve->snapshot_dir = cfg.storage.path + "/vector-index";
    resolve->log = ingest::make_log_source(cfg, m.brokers, m.reader(cfg), opts.replay && opts.re_extract, m.keys);
    // A forget deletes the data keys of what it forgot (crypto-shredding): the records stay on
    // engram-log, unreadable. A failure leaves them readable, never the store wrong (the
    // forget is on the log: a rebuild or replay leaves them out anyway).
    resolve->shred = [keys = m.keys](const std::string& org, const std::vector<std::string>& events) {
      auto shredded = keys->shred(org, events);
      if (!shredded)
        logging::get(logging::module::store).error("data keys of '{}' not deleted: {}", org, shredded.error());
      else
        logging::get(logging::module::store).info("{} data keys of '{}' deleted", *shredded, org);
    };
    auto t0 = std::chrono::steady_clock::now();
    auto opened = resolve->dedup->open(resolve->snapshot_dir);
    if (!opened)
      return engram::fail(opened.error());
    const auto& st = *opened;
    logging::get(logging::module::engine)
        .info(
            "embedder: {} ({} dimensions); vector index: {} organisations, {} vectors ({} loaded from "
            "snapshots, {} rebuilt) in {} ms",
            embedder->name(), embedder->dim(), st.organizations, st.vectors, st.loaded, st.rebuilt,
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
    m.metrics.set_index_size(st.vectors);
  }

  m.caf_cfg.set("scheduler.max-threads", std::size_t{2});
  m.sys = std::make_unique<caf::actor_system>(m.caf_cfg);
  m.resolve = resolve;
  // RocksDB writes block: the store gets its own thread. Dedup and contradiction run in it,
  // just before each record is applied, so every decision sees every earlier record.
  m.store_actor =
      m.sys->spawn<caf::detached>(actors::store_writer, m.store, resolve, &m.metrics, &m.status, &m.notifier);
  if (opts.replay) {
    auto consumer =
        ingest::log_consumer::start(cfg, m.brokers, m.store, m.store_actor, m.metrics, m.status,
                                    m.gap_handling(opts.accept_partial), m.reader(cfg), opts.re_extract, m.keys);
    if (!consumer)
      return engram::fail(consumer.error());
    m.consumer = std::move(*consumer);
    return {};
  }
  return start_mcp(m, cfg);
}

engram::result<void> engine::start_timers(impl& m, const config::engram_config& cfg, const engine_options& opts) {
  {
    auto channel = ingest::reminder_channel::create(m.brokers, cfg.kafka.rdkafka, cfg.kafka.topics.reminders);
    if (!channel)
      return engram::fail(channel.error());
    actors::timers_options to;
    to.interval = std::chrono::milliseconds(cfg.timers.interval_ms);
    to.expiry_batch = cfg.timers.expiry_batch;
    to.counters = &m.metrics;
    to.branch_ttl_ms = static_cast<std::int64_t>(cfg.branches.ttl_ms);
    to.reminder_lead_ms = static_cast<std::int64_t>(cfg.reminders.lead_ms);
    to.reminder_batch = cfg.reminders.batch;
    to.retention = cfg.retention;
    if (m.members) {
      to.owns = [raw = &m](const std::string& org) { return raw->owns(org); };
      to.ownership = [raw = &m] {  // the partitions ready here
        std::string ready;
        for (const auto& [p, s] : raw->status.partitions())
          if (s.caught_up())
            ready += std::to_string(p) + ",";
        return ready;
      };
      to.guard = &m.ownership;
    }
    m.timers = std::make_unique<actors::timers>(
        to, m.store, m.clock, &m.notifier, m.append,
        [raw = &m] { return raw->members ? raw->status.joined() : raw->status.ready(); }, std::move(*channel));
    if (opts.timers_thread)
      m.timers->start();
  }
  return {};
}

actors::timers_round engine::tick_timers() {
  if (!impl_ || !impl_->timers)
    return {.problem = "the timers are not running"};
  return impl_->timers->tick();
}

engine::~engine() { stop(); }

void engine::stop() {
  if (!impl_ || impl_->stopped)
    return;
  auto& m = *impl_;
  m.stopped = true;
  if (m.timers)
    m.timers->stop();  // its commands need the pipeline: first
  if (m.drops)
    m.drops->stop();  // a drop under way needs the store stage
  if (m.sequencer)
    m.sequencer->stop();
  if (m.consumer)
    m.consumer->stop();  // waits until the batches in flight are durable
  if (m.follower)
    m.follower->stop();
  if (m.members)
    m.members->stop();  // a tombstone: the others stop forwarding here
  if (m.http)
    m.http->stop();
  m.members.reset();  // waits for forwarded requests
  m.mcp.reset();      // waits for saves still waiting for the store
  m.timers.reset();
  m.log_producer.reset();
  // Every handle to an actor must be gone before the actor system joins its detached
  // threads: the consumer holds the store actor's.
  m.sequencer.reset();
  m.consumer.reset();
  m.drops.reset();
  m.follower.reset();
  if (m.store_actor)
    caf::anon_send_exit(m.store_actor, caf::exit_reason::user_shutdown);
  m.store_actor = nullptr;
  m.sys.reset();  // joins the actors
  m.broker.reset();
  m.store.reset();
  logging::get(logging::module::engine).info("stopped");
}

bool engine::failed() const { return impl_->consumer && impl_->consumer->failed(); }
const std::string& engine::brokers() const { return impl_->brokers; }
std::uint16_t engine::http_port() const { return impl_->http ? impl_->http->port() : 0; }
const storage::graph_store& engine::store() const { return *impl_->store; }
services::metrics& engine::metrics() { return impl_->metrics; }
actors::ingest_status& engine::status() { return impl_->status; }
const actors::gap_registry& engine::gaps() const { return impl_->gaps; }

std::string engine::stats_json() { return impl_->stats(mcp::grant{"", {"admin"}, "engine", {}}); }

json engine::impl::organization_rows(const std::string& only) {
  auto& m = *this;
  // Documents (ingest-docs) per organisation: how many, their chunks applied, refused and
  // pending, and what extraction read from them.
  std::map<std::string, json> documents;
  for (const auto& d : m.store->documents(only)) {
    auto& j = documents[d.organization_id];
    if (j.is_null())
      j = {{"documents", 0},    {"chunks", 0},   {"chunksDone", 0}, {"chunksPending", 0},
           {"chunksFailed", 0}, {"entities", 0}, {"relations", 0}};
    j["documents"] = j["documents"].get<std::uint64_t>() + 1;
    j["chunks"] = j["chunks"].get<std::uint64_t>() + d.chunks;
    j["chunksDone"] = j["chunksDone"].get<std::uint64_t>() + d.done;
    j["chunksFailed"] = j["chunksFailed"].get<std::uint64_t>() + d.failed;
    j["chunksPending"] = j["chunksPending"].get<std::uint64_t>() + d.pending();
    j["entities"] = j["entities"].get<std::uint64_t>() + d.entities;
    j["relations"] = j["relations"].get<std::uint64_t>() + d.relations;
  }
  json orgs = json::array();
  for (const auto& s : m.store->stats()) {
    if (!only.empty() && s.organization_id != only)
      continue;
    // Clustered: the organisations of the partitions assigned here (the store may keep
    // others, from partitions it held before, until they come back).
    if (m.members &&
        m.status.state(m.members->partition_of(s.organization_id)).first == actors::partition_state::not_owned)
      continue;
    json by_type = json::object();
    for (auto t : schemas::all_entry_types)
      if (auto n = m.store->entries_of_type(s.organization_id, t).size())
        by_type[std::string(schemas::to_string(t))] = n;
    json row{{"organizationId", s.organization_id},
             {"events", s.events},
             {"contacts", s.contacts},
             {"entities", s.entities},
             {"entries", s.entries},
             {"entriesByType", std::move(by_type)},
             {"relations", s.relations},
             {"passages", s.passages},
             {"bundles", m.store->kg_bundles(s.organization_id).size()}};
    if (auto d = documents.find(s.organization_id); d != documents.end())
      row["documents"] = d->second;
    orgs.push_back(std::move(row));
  }
  return orgs;
}

json engine::impl::partition_rows() {
  auto& m = *this;
  // Every partition with a stored offset or assigned now.
  json parts = json::array();
  auto live = m.status.partitions();
  auto stored = m.store->offsets(m.cfg.kafka.topics.log);
  std::set<std::int32_t> ids;
  for (const auto& [p, _] : stored)
    ids.insert(p);
  for (const auto& [p, _] : live)
    ids.insert(p);
  for (auto p : ids) {
    // While assigned, the consumer's view is current (a stored offset may be from another
    // cluster); otherwise the stored one.
    auto st = stored.find(p);
    auto it = live.find(p);
    std::int64_t applied = it != live.end() ? it->second.next_offset : st != stored.end() ? st->second.next_offset : 0;
    json row{{"topic", m.cfg.kafka.topics.log}, {"partition", p}, {"appliedOffset", applied}};
    if (it != live.end()) {
      row["highWatermark"] = it->second.high_watermark;
      row["lag"] = std::max<std::int64_t>(0, it->second.high_watermark - applied);
      // Where reading started when it was assigned here, and the records read since (a
      // standby taking over reads only what it had not followed yet).
      row["assignedAt"] = it->second.assigned_at;
      std::uint64_t read = 0;
      for (const auto& [_, n] : it->second.kinds)
        read += n;
      row["readSinceAssignment"] = read;
    }
    parts.push_back(std::move(row));
  }
  return parts;
}

json engine::impl::gap_rows() {
  auto& m = *this;
  // Gaps: partitions stopped at records deleted before they were read, and gaps an operator
  // accepted (recorded in the store).
  json gaps_json = json::array();
  for (const auto& g : m.gaps.open())
    gaps_json.push_back({{"topic", g.topic},
                         {"partition", g.partition},
                         {"from", g.from},
                         {"to", g.to},
                         {"lost", g.lost()},
                         {"status", "stopped"}});
  for (const auto& g : m.store->gaps())
    gaps_json.push_back({{"topic", g.topic},
                         {"partition", g.partition},
                         {"from", g.from},
                         {"to", g.to},
                         {"lost", g.to - g.from},
                         {"status", "accepted"}});
  return gaps_json;
}

std::string engine::impl::stats(const mcp::grant& g) {
  auto& m = *this;
  json orgs = m.organization_rows(g.allows("admin") ? std::string() : g.organization_id);
  json parts = m.partition_rows();
  json gaps_json = m.gap_rows();
  auto [dups, skipped] = m.store->redelivery_counts();
  const auto by_class = m.metrics.messages_by_class();
  json doc{{"organizations", orgs},
           {"partitions", parts},
           {"duplicatesSkipped", dups},
           {"recordsSkipped", skipped},
           {"deadLettered", m.metrics.dead_lettered()},
           {"messagesByClass", {{"person", by_class[0]}, {"bulk", by_class[1]}, {"spam", by_class[2]}}},
           {"logGaps", gaps_json},
           {"ready", m.readiness().first}};
  return doc.dump();
}

}  // namespace engram::engine
