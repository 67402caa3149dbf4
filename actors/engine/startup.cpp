// engine::start's steps, in the order it takes them. Each step adds what it started to
// `started`, with how to stop and release it: engine::stop undoes them in reverse.
#include "actors/engine/internal/engine_impl.hpp"
#include "actors/ingest/log_source.hpp"
#include "actors/ingest/members.hpp"
#include "actors/ingest/topics.hpp"
#include "actors/store/store_router.hpp"
#include "actors/store/store_watch.hpp"
#include "logging/log.hpp"
#include "schemas/tools.hpp"

#include <caf/all.hpp>

#include <fstream>
#include <future>
#include <set>
#include <thread>

namespace engram::engine {
namespace {

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

/// MCP's options from the configuration: the tokens (the dev token made when none is
/// configured), the read policy, the entity types' parents.
engram::result<mcp::mcp_options> mcp_options_of(const config::engram_config& cfg) {
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
  auto& log = logging::get(logging::module::mcp);
  if (o.auth.tokens.empty() && o.auth.anonymous_organization.empty()) {
    auto token = mcp::dev_token(cfg.storage.path);
    if (!token)
      return engram::fail(token.error());
    o.auth.tokens[mcp::token_digest(*token)] = {cfg.auth.dev_organization, {"read", "write", "admin"}, "dev", {}};
    // The token itself is never logged: logs are shipped and kept where secrets must not be.
    log.info("no auth.tokens configured; the dev token of organisation '{}' is in {}/dev-token (mode 0600)",
             cfg.auth.dev_organization, cfg.storage.path);
  }
  if (!o.auth.anonymous_organization.empty())
    log.warn("requests without a token are served as organisation '{}' (auth.anonymous_organization)",
             o.auth.anonymous_organization);
  return o;
}

/// Dedup's options (open_store reads the snapshots ahead with the same index options).
dedup::dedup_options dedup_options_of(const config::engram_config& cfg, std::size_t dim) {
  dedup::dedup_options o;
  o.threshold = cfg.dedup.threshold;
  o.dim = dim;
  return o;
}

}  // namespace

engram::result<void> engine::impl::start(engine_options opts) {
  // A replay is the store role alone, whatever the configuration says: engram-log, the
  // pipeline and the store; nothing else runs and nothing is written to any topic.
  const bool replay = opts.replay;
  const bool store_role = cfg.roles.store || replay;
  const bool serving = store_role && !replay;
  const std::pair<bool, std::function<engram::result<void>()>> steps[] = {
      {true, [&] { return connect_kafka(opts); }},
      {store_role && !cfg.store.cluster, [&] { return subscribe_log(); }},
      {store_role, [&] { return open_store(); }},
      {true, [&] { return make_embedders(); }},
      {true, [&] { return start_actors(); }},
      {store_role, [&] { return open_resolver(opts); }},
      {store_role, [&] { return start_store_actor(); }},
      {serving, [&] { return start_mcp(); }},
      {!replay, [&] { return bind_http(); }},
      {serving && cfg.store.cluster, [&] { return join_cluster(); }},
      {!replay, [&] { return start_http(opts); }},
      {store_role, [&] { return start_consumer(opts); }},
      {store_role, [&] { return await_dedup(); }},
      {store_role, [&] { return start_compactions(); }},
      {cfg.roles.extract && !replay, [&] { return start_sequencer(std::move(opts.sequencer)); }},
      {serving, [&] { return start_timers(opts); }},
      {!replay && cfg.samples.load, [&] { return produce_samples(); }},
  };
  for (const auto& [wanted, step] : steps)
    if (wanted)
      if (auto done = step(); !done)
        return done;
  return {};
}

engram::result<void> engine::impl::open_store() {
  // The largest files of a start are dedup's vector index snapshots: they are read meanwhile,
  // on the other core (nothing in them is trusted before open_resolver checks them against
  // the store).
  dedup_ahead = std::async(std::launch::async,
                           [dir = cfg.storage.path + "/vector-index", index = dedup_options_of(cfg, 0).index] {
                             return dedup::snapshot_reads::read(dir, index);
                           });
  storage::open_options so;
  so.path = cfg.storage.path;
  so.memory_mb = cfg.storage.memory_mb;
  so.reserved_tool_names = schemas::server_tool_names();
  so.defer_compactions = true;  // start_compactions, once dedup's open ended
  auto opened = storage::open_graph_store(so);
  if (!opened)
    return engram::fail(opened.error());
  store = std::move(*opened);
  started.add("store", {}, [this] { store.reset(); });
  const auto indexes = store->indexes_origin();
  logging::get(logging::module::store)
      .info("opened {} ({} organisations); text and passage indexes {} in {} ms", cfg.storage.path,
            store->stats().size(),
            indexes.from_snapshot
                ? "loaded from the snapshot and " + std::to_string(indexes.journal_rows) + " journal rows after it"
                : "rebuilt (" + indexes.why_rebuilt + ")",
            static_cast<long long>(indexes.seconds * 1000));
  return {};
}

void engine::impl::save_store_indexes() {
  // After a failure the indexes may hold what the store does not: they are rebuilt at the
  // next start.
  if (!store || store_failed)
    return;
  if (auto saved = store->save_indexes(); saved && *saved)
    logging::get(logging::module::store).info("text and passage indexes written to {}/indexes", cfg.storage.path);
  else if (saved)
    logging::get(logging::module::store)
        .info("text and passage indexes not written: {}/indexes holds them (nothing changed since)", cfg.storage.path);
  else
    logging::get(logging::module::store).warn("text and passage indexes not written: {}", saved.error());
}

engram::result<void> engine::impl::connect_kafka(const engine_options& opts) {
  const bool replay = opts.replay;
  started.add("Kafka", {}, [this] {
    watch.reset();
    broker.reset();
  });
  if (cfg.kafka.embedded()) {
    const auto& t = cfg.kafka.topics;
    auto made =
        ingest::embedded_broker::start({t.inbound, t.log, t.reminders, t.dead_letter, t.keys}, embedded_partitions);
    if (!made)
      return engram::fail(made.error());
    broker = std::move(*made);
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
  }
  if (!cfg.kafka.embedded() && !replay)  // a replay only reads: it refuses a partial rebuild instead
    if (auto checked = ingest::check_log_retention(cfg); !checked)
      return engram::fail(checked.error());
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

engram::result<void> engine::impl::make_embedders() {
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
  if (!cfg.extraction.type_model && !cfg.extraction.relation_model)
    return {};
  if (cfg.extraction.relation_model) {
    // The relation model reads the plain int8 encoder's vectors (the type model its own, adapted).
    auto int8 = embedding::int8_encoder(cfg.embedder, made);
    if (!int8)
      return engram::fail(int8.error());
    auto made_relations = reading::relation_model::make(std::move(*int8));
    if (!made_relations)
      return engram::fail(made_relations.error());
    relations = std::move(*made_relations);
    auto opened = reading::sentence_parser::open();
    if (!opened)
      return engram::fail(opened.error());
    parser = std::move(*opened);
  }
  if (cfg.extraction.type_model) {
    auto made_types = embedding::make_type_model(cfg.embedder);
    if (!made_types)
      return engram::fail(made_types.error());
    types = std::move(*made_types);
  }
  return {};
}

engram::result<void> engine::impl::start_actors() {
  caf_cfg.set("scheduler.max-threads", std::size_t{2});
  sys = std::make_unique<caf::actor_system>(caf_cfg);
  // Stopped last: every actor has stopped by then (the system's destructor joins them).
  started.add("actor system", {}, [this] {
    watch_actor.reset();
    sys.reset();
  });
  if (watch) {  // asked every second (at most 2 s a look) from here on
    watch_actor = supervise("broker-watch", [this] {
      return sys->spawn<caf::detached>(actors::periodic, std::string("broker-watch"), std::chrono::milliseconds(1000),
                                       std::function<void()>([w = watch.get()] { w->look(std::chrono::seconds(2)); }),
                                       &metrics);
    });
  }
  return {};
}

engram::result<void> engine::impl::open_resolver(const engine_options& opts) {
  resolve = std::make_shared<actors::resolver>();
  resolve->dedup = std::make_unique<dedup::deduplicator>(store, dedup_options_of(cfg, embedder->dim()));
  resolve->contradiction = std::make_unique<contradiction::contradiction_finder>(store, resolve->dedup->reader());
  resolve->snapshot_dir = cfg.storage.path + "/vector-index";
  resolve->snapshot_every = cfg.storage.snapshot_every;
  resolve->steps = &metrics;
  resolve->log = ingest::make_log_source(cfg, brokers, reader(), opts.replay && opts.re_extract, keys);
  // A forget deletes the data keys of what it forgot (crypto-shredding): the records stay on
  // engram-log, unreadable. A failure leaves them readable, never the store wrong (the
  // forget is on the log: a rebuild or replay leaves them out anyway).
  resolve->shred = [ring = keys](const std::string& org, const std::vector<std::string>& events) {
    auto shredded = ring->shred(org, events);
    if (!shredded)
      logging::get(logging::module::store).error("data keys of '{}' not deleted: {}", org, shredded.error());
    else
      logging::get(logging::module::store).info("{} data keys of '{}' deleted", *shredded, org);
  };
  dedup_open_started = std::chrono::steady_clock::now();
  auto ahead = dedup_ahead.valid() ? dedup_ahead.get() : dedup::snapshot_reads{};
  dedup_read_seconds = ahead.seconds();
  resolve->dedup->open_in_background(resolve->snapshot_dir, std::move(ahead));
  return {};
}

engram::result<void> engine::impl::await_dedup() {
  const auto waited = std::chrono::steady_clock::now();
  auto opened = resolve->dedup->open_result();
  if (!opened)
    return engram::fail(opened.error());
  const auto& st = *opened;
  const auto ms = [](auto from) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - from).count();
  };
  logging::get(logging::module::engine)
      .info(
          "embedder: {} ({} dimensions); vector index: {} organisations, {} vectors ({} loaded from "
          "snapshots read in {} ms beside the store's open, {} rebuilt), open {} ms after the store's, beside "
          "the consumer's start; waited {} ms for it",
          embedder->name(), embedder->dim(), st.organizations, st.vectors, st.loaded,
          static_cast<long long>(dedup_read_seconds * 1000), st.rebuilt, ms(dedup_open_started), ms(waited));
  metrics.set_index_size(st.vectors);
  return {};
}

engram::result<void> engine::impl::start_compactions() {
  // Not a failed start: the store serves and applies without them, as it did while it opened.
  if (auto e = store->start_compactions(); e != storage::errc::ok)
    logging::get(logging::module::store)
        .error("RocksDB's compactions not started ({}): reads slow down as files pile up; restart engramd",
               storage::to_string(e));
  return {};
}

engram::result<void> engine::impl::start_store_actor() {
  // RocksDB writes block: each applier gets its own thread. Dedup and contradiction run in
  // it, just before each record is applied, so every decision sees every earlier record of
  // its organisation. Several appliers sit behind a router that gives each its partitions.
  auto applier = [&](std::string label) {
    return sys->spawn<caf::detached>(actors::store_writer, store, resolve, &metrics, &status, &notifier,
                                     std::move(label));
  };
  std::vector<std::pair<std::string, caf::actor>> watched;
  if (cfg.store.appliers <= 1) {
    store_actor = applier("store-applier");
    watched.emplace_back("the store applier", caf::actor_cast<caf::actor>(store_actor));
  } else {
    for (std::uint32_t i = 0; i < cfg.store.appliers; ++i) {
      appliers.push_back(applier("store-applier-" + std::to_string(i)));
      watched.emplace_back("store applier " + std::to_string(i), caf::actor_cast<caf::actor>(appliers.back()));
    }
    store_actor = sys->spawn(actors::store_router, appliers, &metrics);
    watched.emplace_back("the store router", caf::actor_cast<caf::actor>(store_actor));
  }
  // An applier that fails fails the engine (engramd exits; its next start rebuilds what the
  // applier held in memory).
  // The watch itself is started again after a fault: the new one monitors the same actors,
  // and one already stopped is reported at once.
  store_watch = supervise("store-watch", [this, watched = std::move(watched)] {
    return sys->spawn(actors::store_watch, watched,
                      std::function<void(const std::string&)>([this](const std::string& why) { fail(why); }));
  });
  logging::get(logging::module::engine).info("store: {} applier(s)", std::max<std::uint32_t>(1, cfg.store.appliers));
  // The parts started later, which send to the store actor, have stopped. Once no applier
  // runs, the vector index snapshots are written once.
  started.add("store actors", {}, [this] {
    std::vector<caf::actor> stopping;
    if (store_actor)
      stopping.push_back(caf::actor_cast<caf::actor>(store_actor));
    for (auto& a : appliers)
      stopping.push_back(caf::actor_cast<caf::actor>(a));
    caf::scoped_actor self{*sys};
    for (auto& a : stopping) {
      self->send_exit(a, caf::exit_reason::user_shutdown);
      self->wait_for(a);
    }
    store_actor = nullptr;
    appliers.clear();
    store_watch.reset();  // it quit as what it watched stopped
    if (!resolve || actors::save_snapshots_at_stop(*resolve))
      save_store_indexes();
  });
  return {};
}

std::unique_ptr<actors::supervisor> engine::impl::supervise(std::string name, std::function<caf::actor()> spawn) {
  actors::supervision s;
  s.name = std::move(name);
  s.spawn = std::move(spawn);
  s.restarted = [this](const std::string& who, const std::string&) { metrics.count_actor_restart(who); };
  s.gave_up = [this](const std::string& why) { fail(why); };
  return std::make_unique<actors::supervisor>(*sys, std::move(s));
}

void engine::impl::fail(const std::string& why) {
  std::lock_guard lock(failure_mutex);
  if (!store_failed) {  // the first failure is the one reported
    store_failure = why;
    store_failed = true;
  }
}

engram::result<void> engine::impl::start_mcp() {
  auto o = mcp_options_of(cfg);
  if (!o)
    return engram::fail(o.error());
  // A record that engram-log has not taken within this fails for good (message.timeout.ms),
  // before MCP stops waiting for it: an agent told "not saved" is never saved later.
  const auto delivery_timeout = o->save_timeout - std::chrono::seconds(2);
  auto made = ingest::kafka_producer::create(brokers, cfg.kafka.rdkafka, delivery_timeout);
  if (!made)
    return engram::fail(made.error());
  log_producer = std::move(*made);
  started.add("MCP", {}, [this] {
    // Each save still waiting is answered "not applied before its wait was cut short" as the
    // actor goes; then no answer is left to build through the MCP service.
    saves.reset();
    mcp.reset();  // waits for answers being built
    log_producer.reset();
  });
  if (!log_producer->prepare(cfg.kafka.topics.log, std::chrono::seconds(5)))
    logging::get(logging::module::mcp).warn("{} (the first save will look it up)", log_producer->last_error());
  mcp::mcp_dependencies d;
  d.store = store;
  d.index = std::shared_ptr<const dedup::deduplicator>(resolve, resolve->dedup.get());
  d.embedder = embedder;
  d.query_head = query_head;
  d.notifier = &notifier;
  d.clock = clock;
  d.metrics = &metrics;
  // Why a record did not reach engram-log, for the agent.
  auto refused = [topic = cfg.kafka.topics.log, delivery_timeout](const ingest::kafka_producer::delivery& sent) {
    if (sent.possibly_written)
      return "the broker did not confirm the record (" + sent.error + "): " + topic +
             " may hold it all the same, and then it will be applied";
    return topic + " did not take the record within " + std::to_string(delivery_timeout.count()) + " ms (" +
           sent.error + "); nothing was written";
  };
  append = [producer = log_producer.get(), topic = cfg.kafka.topics.log,
            refused](const schemas::encoded_record& r) -> engram::result<void> {
    auto sent = producer->deliver(topic, r.key, r.value, {{schemas::kind_header, r.kind}});
    if (sent.delivered)
      return {};
    return engram::fail(refused(sent));
  };
  actors::save_links links;
  links.notifier = &notifier;
  links.metrics = &metrics;
  links.append = [producer = log_producer.get(), topic = cfg.kafka.topics.log, refused](
                     const schemas::encoded_record& r, std::function<void(engram::result<void>)> done) {
    producer->deliver_async(topic, r.key, r.value, {{schemas::kind_header, r.kind}},
                            [done = std::move(done), refused](const ingest::kafka_producer::delivery& sent) {
                              if (sent.delivered)
                                done({});
                              else
                                done(engram::fail(refused(sent)));
                            });
  };
  saves = supervise("mcp-saves", [this, links = std::move(links)] { return sys->spawn(actors::saves, links); });
  // Sent during a restart, a save reaches the stopped actor and is answered "not saved".
  d.submit = [to = saves.get()](services::pending_save save) { caf::anon_send(to->current(), std::move(save)); };
  mcp = std::make_unique<mcp::service>(std::move(d), std::move(*o));
  return {};
}

engram::result<void> engine::impl::join_cluster() {
  auto& log = logging::get(logging::module::engine);
  const auto& topic = cfg.kafka.topics.log;
  auto ranges = ingest::partition_ranges(brokers, {topic});
  if (!ranges || ranges->empty())
    return engram::fail("store.cluster: cannot learn " + topic + "'s partitions (create it with its final " +
                        "partition count before the members start: an organisation's partition depends on it)" +
                        (ranges ? std::string() : ": " + ranges.error()));
  if (auto same = check_partition_count(cfg.storage.path, topic, ranges->size()); !same)
    return engram::fail(same.error());
  cluster_options o;
  o.name = cfg.store.name();
  o.url = cfg.store.advertised_url;
  o.partitions = static_cast<std::int32_t>(ranges->size());
  o.forward_timeout = std::chrono::milliseconds(cfg.store.forward_timeout_ms);
  o.standby_replicas = cfg.store.standby_replicas;
  status.set_clustered(true);
  members = std::make_unique<cluster>(o, status);
  started.add(
      "cluster",
      [this] {
        if (follower)
          follower->stop();
      },
      [this] {
        members.reset();  // waits for forwarded requests
        follower.reset();
        drops.reset();
      });
  auto topic_open = ingest::members_topic::open(brokers, cfg.kafka.rdkafka, cfg.kafka.topics.members,
                                                std::chrono::milliseconds(cfg.store.heartbeat_ms),
                                                [gate = members.get()] { return gate->self(); });
  if (!topic_open)
    return engram::fail(topic_open.error());
  members->attach(std::move(*topic_open));  // before the follower, which reads the members
  if (cfg.store.standby_replicas > 0) {
    auto made = ingest::log_follower::start(cfg, brokers, store, store_actor, reader(), keys,
                                            [gate = members.get()] { return gate->standby_wanted(); });
    if (!made)
      return engram::fail(made.error());
    follower = std::move(*made);
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

engram::result<void> engine::impl::bind_http() {
  net::server_options ho;
  ho.listen = cfg.http.listen;
  ho.max_connections = cfg.http.max_connections;
  ho.max_event_streams = cfg.http.max_event_streams;
  auto bound = net::server::bind(ho);
  if (!bound)
    return engram::fail(bound.error());
  http = std::move(*bound);
  // An advertised URL on port 0 is this member on the port the kernel chose for http.listen.
  if (const auto& url = cfg.store.advertised_url; url.size() > 2 && url.ends_with(":0"))
    cfg.store.advertised_url = url.substr(0, url.size() - 1) + std::to_string(http->port());
  return {};
}

engram::result<void> engine::impl::start_http(const engine_options& opts) {
  auto served = std::make_shared<const net::router>(routes());
  http->serve([served](const net::request& r, net::responder respond) { (*served)(r, std::move(respond)); });
  started.add("HTTP server", [this] { http->stop(); });
  // Stopped before the server: a tombstone on the members topic, so the others stop
  // forwarding here while this member still answers.
  if (members)
    started.add("cluster membership", [this] { members->stop(); });
  std::string paths;
  for (const auto& p : served->paths())
    paths += " " + p;
  logging::get(logging::module::http).info("listening on {} (port {}):{}", cfg.http.listen, http->port(), paths);
  return opts.serving ? opts.serving(http->port()) : engram::result<void>{};
}

engram::result<void> engine::impl::subscribe_log() {
  // A store another engramd has open fails this start at the open; joining its group first
  // would take that engramd's partitions away and give them back.
  if (const auto pid = storage::held_by_another_process(cfg.storage.path))
    return engram::fail("storage.path " + cfg.storage.path + " is in use by another process (pid " +
                        std::to_string(*pid) + "): one engramd a store");
  auto made = ingest::log_consumer::subscribe(cfg, brokers);
  if (!made)
    return engram::fail(made.error());
  consumer = std::move(*made);
  // Leaves the group if the start failed before start_consumer; once begun, the consumer
  // stops earlier, with the parts it feeds (stop() again is a no-op).
  started.add("engram-log subscription", [this] {
    if (consumer)
      consumer->stop();
  });
  return {};
}

engram::result<void> engine::impl::start_consumer(const engine_options& opts) {
  ingest::ownership_hooks hooks;
  if (members) {
    hooks.changed = [gate = members.get(), j = drops.get()] {
      j->assigned();
      gate->publish();
    };
    hooks.guard = &ownership;
    // An assignment waits for a drop under way; a standby's reading of what comes reaches
    // the store first.
    hooks.assigning = [j = drops.get(), f = follower.get()](const std::set<std::int32_t>& p) {
      j->assigning();
      if (f)
        f->release(p);
    };
  }
  if (follower)
    hooks.revoked = [f = follower.get()](const std::set<std::int32_t>& p) { f->unblock(p); };
  // Dedup's indexes took the vectors of the events whose writes failed: built again from the
  // store (and the snapshots of before the failure) before those events are resolved again.
  hooks.writes_resumed = [r = resolve]() -> engram::result<void> {
    if (!r || !r->dedup || !r->dedup->is_poisoned())
      return {};
    auto rebuilt = r->dedup->reopen();
    if (!rebuilt)
      return engram::fail("dedup's indexes: " + rebuilt.error());
    logging::get(logging::module::store)
        .info("dedup's indexes built again: {} organisations, {} vectors", rebuilt->organizations, rebuilt->vectors);
    return {};
  };
  if (!consumer) {  // not subscribed before the store opened (clustered)
    auto made = ingest::log_consumer::subscribe(cfg, brokers);
    if (!made)
      return engram::fail(made.error());
    consumer = std::move(*made);
  }
  consumer->begin(store, store_actor, metrics, status, gap_handling(opts.replay && opts.accept_partial), reader(),
                  opts.replay && opts.re_extract, keys, std::move(hooks));
  started.add(
      "engram-log consumer", [this] { consumer->stop(); },  // waits until the batches in flight are durable
      [this] { consumer.reset(); });
  if (drops && drops->enabled()) {
    janitor_actor = supervise("janitor", [this] {
      return sys->spawn<caf::detached>(actors::periodic, std::string("janitor"), std::chrono::milliseconds(1000),
                                       std::function<void()>([j = drops.get()] { j->sweep(); }), &metrics);
    });
    started.add("janitor", [this] {  // a drop under way needs the store stage
      drops->stop();
      janitor_actor.reset();
    });
  }
  return {};
}

engram::result<void> engine::impl::start_sequencer(ingest::sequencer_options so) {
  if (!so.extract) {
    auto rc = reader();
    const unsigned threads =
        cfg.ingest.extract_threads ? cfg.ingest.extract_threads : std::max(1u, std::thread::hardware_concurrency());
    so.extract = [rc, threads](std::span<const schemas::inbound_message> ms, const std::atomic<bool>& stop) {
      auto ctx = rc;
      ctx.stop = &stop;
      return reading::read_messages(ms, ctx, threads);
    };
    so.embedder = embedder->name();
  }
  so.gaps = gap_handling(false);
  so.keys = keys;
  if (store)  // an accepted inbound gap is shown in /v1/stats beside engram-log's
    so.gaps.record = [s = store](const actors::log_gap& g) {
      return s->record_gap({g.topic, g.partition, g.from, g.to}, /*advance=*/false, {}) == storage::errc::ok;
    };
  auto made = ingest::sequencer::start(cfg, brokers, metrics, std::move(so));
  if (!made)
    return engram::fail(made.error());
  sequencer = std::move(*made);
  started.add(
      "sequencer", [this] { sequencer->stop(); }, [this] { sequencer.reset(); });
  return {};
}

engram::result<void> engine::impl::start_timers(const engine_options& opts) {
  auto channel = ingest::reminder_channel::create(brokers, cfg.kafka.rdkafka, cfg.kafka.topics.reminders);
  if (!channel)
    return engram::fail(channel.error());
  actors::timers_options to;
  to.interval = std::chrono::milliseconds(cfg.timers.interval_ms);
  to.expiry_batch = cfg.timers.expiry_batch;
  to.counters = &metrics;
  to.branch_ttl_ms = static_cast<std::int64_t>(cfg.branches.ttl_ms);
  to.reminder_lead_ms = static_cast<std::int64_t>(cfg.reminders.lead_ms);
  to.reminder_batch = cfg.reminders.batch;
  to.retention = cfg.retention;
  if (members) {
    to.owns = [this](const std::string& org) { return owns(org); };
    to.ownership = [this] {  // the partitions ready here
      std::string ready;
      for (const auto& [p, s] : status.partitions())
        if (s.caught_up())
          ready += std::to_string(p) + ",";
      return ready;
    };
    to.guard = &ownership;
  }
  timers = std::make_unique<actors::timers>(
      to, store, clock, &notifier, append, [this] { return members ? status.joined() : status.ready(); },
      std::move(*channel));
  // Its commands need the pipeline: stopped first.
  started.add(
      "timers",
      [this] {
        timers->stop();  // the round in progress ends at its next command
        timer_actor.reset();
      },
      [this] { timers.reset(); });
  if (opts.timers_thread)
    timer_actor =
        supervise("timers", [this] { return sys->spawn<caf::detached>(actors::timer_rounds, timers.get(), &metrics); });
  return {};
}

engram::result<void> engine::impl::produce_samples() {
  std::ifstream in(cfg.samples.path);
  if (!in)
    return engram::fail("samples.load: cannot read '" + cfg.samples.path +
                        "' (relative paths start at the working directory)");
  auto made = ingest::kafka_producer::create(brokers, cfg.kafka.rdkafka);
  if (!made)
    return engram::fail(made.error());
  auto report = ingest::produce_events(**made, cfg.kafka.topics.inbound, in, cfg.ingest.max_event_bytes);
  auto& log = logging::get(logging::module::engine);
  for (const auto& p : report.problems)
    log.warn("samples: {}: {}", cfg.samples.path, p);
  if (!report.error.empty())
    return engram::fail("samples.load: " + report.error);
  log.info("samples: produced {} events from {} to {}", report.produced, cfg.samples.path, cfg.kafka.topics.inbound);
  return {};
}

bool engine::impl::owns(const std::string& org) {
  if (!members)
    return true;
  return status.state(members->partition_of(org)).first == actors::partition_state::ready;
}

reading::reader_context engine::impl::reader() {
  return {extractor_options_of(cfg, types, relations, parser), embedder, &metrics, cfg.embedder.max_per_message};
}

ingest::gap_handling engine::impl::gap_handling(bool accept_partial) {
  ingest::gap_handling h;
  h.registry = &gaps;
  h.accept = [accept_partial, this](const actors::log_gap& g) {
    return accept_partial || cfg.ingest.accepts_gap(g.topic, g.partition);
  };
  return h;
}

}  // namespace engram::engine
