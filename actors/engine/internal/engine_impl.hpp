#pragma once
// What a running engramd holds (engine::impl) and the parts of engine.cpp's work, each in
// its own file: the start-up steps (startup.cpp), the HTTP routes and readiness
// (routes.cpp), the /v1/stats document (stats.cpp).

#include "actors/common/periodic.hpp"
#include "actors/common/supervisor.hpp"
#include "actors/engine/cluster.hpp"
#include "actors/engine/engine.hpp"
#include "actors/engine/janitor.hpp"
#include "actors/ingest/broker_watch.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/key_ring.hpp"
#include "actors/ingest/log_consumer.hpp"
#include "actors/ingest/producer.hpp"
#include "actors/mcp/saves.hpp"
#include "actors/store/store_writer.hpp"
#include "dedup/dedup.hpp"
#include "embedding/query_head.hpp"
#include "embedding/type_model.hpp"
#include "mcp/mcp.hpp"
#include "net/http.hpp"
#include "net/router.hpp"
#include "reading/parse.hpp"
#include "reading/read.hpp"
#include "reading/relation_model.hpp"
#include "services/notifier.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

namespace engram::engine {

/// What engine::start started, in the order it started them. stop_all() first stops each
/// in reverse order (nothing new comes in, what is under way finishes), then releases each
/// in reverse order: no part is destroyed while another may still call it (the HTTP server
/// reads the sequencer's state until it has stopped). Once only.
class started_services {
public:
  /// `stop` quiesces the part, `release` destroys it (either may be empty).
  void add(std::string name, std::function<void()> stop, std::function<void()> release = {});
  void stop_all();

private:
  struct part {
    std::string name;
    std::function<void()> stop;
    std::function<void()> release;
  };
  std::vector<part> parts_;
};

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
  /// The dedup indexes' snapshots, read on another thread while the store opens: open_store
  /// starts the read, open_resolver takes what it read.
  std::future<dedup::snapshot_reads> dedup_ahead;
  /// When open_resolver started dedup's open, and how long its snapshots' read took.
  std::chrono::steady_clock::time_point dedup_open_started;
  double dedup_read_seconds = 0;
  /// The data keys of sealed engram-log records (kafka.topics.keys).
  std::shared_ptr<ingest::key_ring> keys;
  caf::actor_system_config caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  /// What the consumers send each batch of engram-log to: the one applier, or the router in
  /// front of several.
  actors::stage_actor store_actor;
  /// The appliers behind the router (store.appliers > 1); empty with one.
  std::vector<actors::stage_actor> appliers;
  /// Watches the appliers and the router (actors/store/store_watch.hpp).
  std::unique_ptr<actors::supervisor> store_watch;
  /// Where MCP's saves wait for the store (actors/mcp/saves.hpp), started again after a fault.
  std::unique_ptr<actors::supervisor> saves;
  /// Set once a store actor stopped unasked, with what store_watch said, or a supervised
  /// actor could not be kept running (supervisor::gave_up).
  std::atomic<bool> store_failed{false};
  std::mutex failure_mutex;
  std::string store_failure;
  std::unique_ptr<ingest::log_consumer> consumer;
  /// store.standby_replicas: follows partitions other members own.
  std::unique_ptr<ingest::log_follower> follower;
  std::unique_ptr<ingest::sequencer> sequencer;
  std::unique_ptr<net::server> http;
  std::shared_ptr<const services::clock> clock;
  std::unique_ptr<actors::timers> timers;
  /// Runs the timers' rounds (actors/timers/timers.hpp), started again after a fault.
  std::unique_ptr<actors::supervisor> timer_actor;
  actors::timers::append_fn append;
  /// store.cluster: this member's front door (null when not clustered).
  std::unique_ptr<cluster> members;
  /// store.cluster: drops the partitions this member let go.
  std::unique_ptr<janitor> drops;
  /// Asks Kafka every second (broker_watch::look), started again after a fault.
  std::unique_ptr<actors::supervisor> watch_actor;
  /// Looks for partitions to drop every second (janitor::sweep), started again after a fault.
  std::unique_ptr<actors::supervisor> janitor_actor;
  /// Held shared by the timers while they act for an owned organisation; taken exclusively
  /// when partitions are revoked (ingest::ownership_hooks).
  std::shared_mutex ownership;
  started_services started;
  bool stopped = false;

  /// engine::start's steps, in order (startup.cpp); each adds what it started to `started`.
  engram::result<void> start(engine_options opts);
  engram::result<void> open_store();
  /// The embedded broker when asked, else the configured one (its retention checked unless
  /// replaying), and the ring of data keys.
  engram::result<void> connect_kafka(const engine_options& opts);
  /// The embedder (cached when embedder.cache_size), the query head, the type and relation
  /// models when on.
  engram::result<void> make_embedders();
  /// The actor system, and the broker watch's actor when Kafka is watched.
  engram::result<void> start_actors();
  /// Dedup and contradiction; dedup's vector indexes start opening on a thread of their own
  /// (await_dedup waits for them).
  engram::result<void> open_resolver(const engine_options& opts);
  /// Dedup's open ended: its figures logged, or its error the start's. Runs after the
  /// consumer started, so the group join and the open run beside each other; meanwhile
  /// every use of dedup waits for it, and /readyz says not ready.
  engram::result<void> await_dedup();
  /// RocksDB's compactions start, paused since the open (open_options::defer_compactions) so
  /// that the store's and dedup's loads had both cores.
  engram::result<void> start_compactions();
  /// The store's appliers (behind a router when several) and their watch.
  engram::result<void> start_store_actor();
  /// At a stop, once no applier runs: the store's in-memory indexes written for the next start.
  void save_store_indexes();
  /// Spawns an actor under a supervisor that starts it again after a fault (counted in the
  /// metrics); one that cannot be kept running fails the engine (engramd exits 1, naming it).
  std::unique_ptr<actors::supervisor> supervise(std::string name, std::function<caf::actor()> spawn);
  /// The engine failed (engramd exits 1): `why` is kept when it is the first.
  void fail(const std::string& why);
  engram::result<void> start_mcp();
  /// store.cluster: engram-log's partition count, the members topic, the standby follower,
  /// the janitor.
  /// Binds http.listen (served by start_http, once the routes' services exist).
  engram::result<void> bind_http();
  engram::result<void> join_cluster();
  engram::result<void> start_http(const engine_options& opts);
  /// engram-log's consumer group joined before the store opens (not clustered: a member's
  /// assignment waits for its cluster's hooks), so the group's first join, seconds on a
  /// broker, runs beside the open; start_consumer begins it.
  engram::result<void> subscribe_log();
  /// The engram-log consumer; `opts.replay`: with the replay's gap policy and re-extraction.
  engram::result<void> start_consumer(const engine_options& opts);
  engram::result<void> start_sequencer(ingest::sequencer_options so);
  engram::result<void> start_timers(const engine_options& opts);
  /// samples.load: the sample events produced to the inbound topic.
  engram::result<void> produce_samples();

  /// True when this process acts for `org` now: not clustered, or its partition is owned
  /// and caught up here.
  [[nodiscard]] bool owns(const std::string& org);
  /// How this engramd reads messages: the extract stage, and the consumer for records that
  /// carry no reading.
  [[nodiscard]] reading::reader_context reader();
  /// What each consumer does with a gap: accepted when the replay accepts a partial
  /// rebuild or ingest.accept_gaps names the partition.
  [[nodiscard]] ingest::gap_handling gap_handling(bool accept_partial);

  /// engramd's endpoints (routes.cpp; docs/architecture.md).
  net::router routes();
  void add_health_routes(net::router& r);
  void add_admin_routes(net::router& r);
  /// Ready for /readyz and /metrics: caught up (or the extract stage running) and no
  /// partition stopped at a gap; else why not.
  std::pair<bool, std::string> readiness();
  /// The figures /metrics reads now from the parts (store, caches, cluster) into `metrics`.
  void refresh_metrics();

  /// The /v1/stats document as `g` sees it (stats.cpp): its organisation's rows (every
  /// organisation's for the admin scope), and the log's partitions, gaps and counters.
  std::string stats(const mcp::grant& g);
  /// `only`: that organisation's row alone (empty: every organisation's).
  nlohmann::json organization_rows(const std::string& only);
  nlohmann::json partition_rows();
  nlohmann::json gap_rows();
};

}  // namespace engram::engine
