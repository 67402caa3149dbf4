#include "mcp/mcp.hpp"
#include "logging/log.hpp"

#include "reading/read.hpp"
#include "reading/rules.hpp"
#include "reading/signature.hpp"
#include "mcp/internal/api.hpp"
#include "mcp/internal/tool_context.hpp"
#include "mcp/jsonrpc.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <random>
#include <set>

namespace engram::mcp {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::mcp); }

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The JSON-RPC methods answered besides tools/call (metric labels).
const std::set<std::string> methods{"initialize", "ping", "tools/list", "tools/call", "prompts/list", "prompts/get"};

}  // namespace

struct service::impl final : api_context {
  mcp_dependencies deps;
  mcp_options opts;
  std::unique_ptr<query::query_service> queries;
  std::unique_ptr<query::entity_reader> entity_graph;
  registry tools;
  std::mt19937_64 rng{std::random_device{}()};
  std::mutex rng_mutex;
  /// Saves waiting for the store (their answers use this object).
  std::mutex wait_mutex;
  std::condition_variable wait_cv;
  std::size_t waiting = 0;

  impl(mcp_dependencies d, mcp_options o) : deps(std::move(d)), opts(std::move(o)) {
    query::query_dependencies q;
    q.store = deps.store;
    if (deps.index)
      q.nearest = [index = deps.index](const std::string& org, const schemas::vector8& v, std::size_t k) {
        return index->nearest(org, v, k);
      };
    if (deps.embedder)
      q.embed = [embedder = deps.embedder,
                 head = deps.query_head](std::string_view text) -> engram::result<schemas::vector8> {
        std::vector<std::string_view> one{text};
        auto v = embedder->embed(one);
        if (!v || v->empty()) {
          const std::string why = v ? std::string() : v.error();
          logger().warn("recall without vectors (embedding failed): {}", why);
          return engram::fail(why);
        }
        return schemas::quantise(head ? head->apply((*v)[0]) : (*v)[0]);
      };
    q.terms = reading::index_terms;
    q.now = [clock = deps.clock] { return clock ? clock->now_ms() : system_now_ms(); };
    queries = std::make_unique<query::query_service>(std::move(q), opts.policy);
    entity_graph = std::make_unique<query::entity_reader>(deps.store, opts.type_parents);
    add_knowledge_tools(tools, *this);
    add_entity_tools(tools, *this);
    alive->second = true;
    if (deps.store) {
      refresh_bundle_tools(tools, deps.store, "");
      if (deps.notifier)
        deps.notifier->on_applied([alive = alive, this](const std::string& org) {
          std::lock_guard lock(alive->first);
          if (alive->second)
            applied_in(org);
        });
      if (deps.notifier)
        deps.notifier->on_bundles_changed([alive = alive, this](const std::string& org) {
          std::lock_guard lock(alive->first);
          if (!alive->second)
            return;
          refresh_bundle_tools(tools, deps.store, org);
          tools_changed(org);
        });
    }
  }

  /// Open GET /mcp event streams, each with the grant that opened it.
  std::mutex streams_mutex;
  std::vector<std::pair<grant, std::weak_ptr<net::event_stream>>> streams;

  /// Forgets the streams whose clients left; calls `fn` with each open one. Locks streams_mutex.
  void each_open_stream(const std::function<void(const grant&, net::event_stream&)>& fn) {
    std::lock_guard lock(streams_mutex);
    std::erase_if(streams, [&](auto& s) {
      auto stream = s.second.lock();
      if (!stream || !stream->open())
        return true;
      fn(s.first, *stream);
      return false;
    });
  }

  /// Tells every open stream of `org` that its tool list may have changed (a bundle came,
  /// went or changed).
  void tools_changed(const std::string& org) {
    const std::string note = json{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}.dump();
    each_open_stream([&](const grant& g, net::event_stream& s) {
      if (g.organization_id == org)
        s.send(note);
    });
  }

  /// GET /mcp: an event stream for what the server says unasked (notifications/tools/list_changed).
  void open_stream(const grant& g, const net::request& req, net::responder respond) {
    auto accept = req.headers.find("accept");
    if (accept == req.headers.end() || accept->second.find("text/event-stream") == std::string::npos)
      return respond(json_response(
          406, {{"jsonrpc", "2.0"},
                {"id", nullptr},
                {"error",
                 {{"code", -32600}, {"message", "GET /mcp opens an event stream: send Accept: text/event-stream"}}}}));
    net::response r{200, "text/event-stream", "", {}};
    r.on_stream = [alive = alive, this, g](std::shared_ptr<net::event_stream> s) {
      std::lock_guard guard(alive->first);
      if (!alive->second)
        return;
      std::lock_guard lock(streams_mutex);
      streams.emplace_back(g, s);
    };
    respond(std::move(r));
  }

  /// Guards the bundle listener against a store that applies after this service is gone.
  std::shared_ptr<std::pair<std::mutex, bool>> alive = std::make_shared<std::pair<std::mutex, bool>>();

  ~impl() override {
    {
      std::lock_guard lock(alive->first);
      alive->second = false;
    }
    std::unique_lock lock(wait_mutex);
    wait_cv.wait(lock, [&] { return waiting == 0; });
  }

  const query::query_service& query() const override { return *queries; }
  const query::entity_reader& entities() const override { return *entity_graph; }

  std::string new_event_id(const char* prefix) override {
    std::lock_guard lock(rng_mutex);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%s%016llx", prefix, static_cast<unsigned long long>(rng()));
    return buf;
  }

  schemas::vector8 embed_save(const schemas::knowledge_save& s) const override {
    if (!deps.embedder)
      return {};
    auto x = reading::read_save(s);
    schemas::extraction* one[] = {&x};
    if (auto embedded = reading::embed_entries(*deps.embedder, one); !embedded) {
      logger().warn("save {} goes to engram-log without a vector (embedding failed: {})", s.event_id, embedded.error());
      return {};
    }
    return x.entries.empty() ? schemas::vector8{} : std::move(x.entries[0].embedding);
  }

  json capped(std::vector<json> results) const override {
    json out = json::array();
    std::size_t bytes = 0;
    for (auto& r : results) {
      bytes += r.dump().size();
      if (bytes > opts.max_response_bytes && !out.empty())
        break;
      out.push_back(std::move(r));
    }
    return out;
  }

  void append_and_answer(const schemas::log_payload& record, tool_reply reply,
                         std::function<json(const services::applied_event&)> answer,
                         std::chrono::milliseconds wait) override {
    if (wait.count() <= 0)
      wait = opts.save_timeout;
    const auto& event_id = schemas::event_id_of(record);
    if (!deps.submit)
      return reply(tool_error("not saved (" + event_id + "): this engramd takes no saves"));
    {
      std::lock_guard lock(wait_mutex);
      ++waiting;
    }
    // The answer comes from the engine's save actor, on its thread: this object outlives it
    // (the destructor waits), since `answer` may read through it.
    auto done = [this, event_id, wait, reply = std::move(reply),
                 answer = std::move(answer)](services::save_outcome outcome) {
      struct done_guard {
        impl* self;
        ~done_guard() {
          std::lock_guard lock(self->wait_mutex);
          --self->waiting;
          self->wait_cv.notify_all();
        }
      } guard{this};
      using state = services::save_outcome::state;
      switch (outcome.what) {
        case state::not_appended: return reply(tool_error("not saved (" + event_id + "): " + outcome.error));
        case state::not_applied_in_time:
        case state::stopped:
          return reply(
              tool_error("written to engram-log as " + event_id + " but not applied " +
                         (outcome.what == state::stopped ? std::string("before its wait was cut short (engramd "
                                                                       "stopped, or its save service restarted)")
                                                         : "within " + std::to_string(wait.count()) + " ms") +
                         "; it will be applied (nothing is lost), check again later"));
        case state::applied: break;
      }
      if (!outcome.applied.rejected.empty())
        return reply(tool_error(outcome.applied.rejected));
      try {
        reply(answer(outcome.applied));
      } catch (const std::exception& e) {
        logger().error("save {} applied, its answer failed: {}", event_id, e.what());
        reply(tool_error("applied as " + event_id + ", but its answer could not be built: " + e.what()));
      }
    };
    deps.submit(services::pending_save(schemas::organization_of(record), event_id, schemas::encode(record), wait,
                                       std::move(done)));
  }

  /// Wraps `respond` to count the answer by tool (or method) and outcome, with latency.
  net::responder metered(const net::request& req, net::responder respond) {
    std::string what = "unknown";
    auto msg = json::parse(req.body, nullptr, false);
    if (msg.is_object() && msg.contains("method") && msg["method"].is_string()) {
      what = msg["method"].get<std::string>();
      if (what == "tools/call" && msg.contains("params") && msg["params"].is_object() &&
          msg["params"].contains("name") && msg["params"]["name"].is_string())
        what = msg["params"]["name"].get<std::string>();
    }
    // Labels only from the server's own names: a client must not mint new series.
    const auto names = tools.names();
    if (what.rfind("notifications/", 0) == 0)
      what = "notification";
    else if (!methods.count(what) && std::find(names.begin(), names.end(), what) == names.end())
      what = "other";
    return [metrics = deps.metrics, what, t0 = std::chrono::steady_clock::now(),
            inner = std::move(respond)](net::response r) {
      std::string outcome = r.status == 200 || r.status == 202 ? "ok" : "http_" + std::to_string(r.status);
      if (r.status == 200 && r.body.find("\"isError\":true") != std::string::npos)
        outcome = "tool_error";
      else if (r.status == 200 && r.body.find("\"error\":{") != std::string::npos)
        outcome = "rpc_error";
      metrics->observe_mcp(what, outcome, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      inner(std::move(r));
    };
  }

  void call_tool(const grant& g, const json& id, const json& params, net::responder respond) {
    if (!params.contains("name") || !params["name"].is_string())
      return respond(error_response(failure::invalid_params, id, "params.name: must be a tool name"));
    json arguments = params.contains("arguments") ? params["arguments"] : json::object();
    if (!arguments.is_object())
      return respond(error_response(failure::invalid_params, id, "params.arguments: must be an object"));
    invoke(g, params["name"].get<std::string>(), std::move(arguments), [id, respond](call_outcome o) {
      switch (o.kind) {
        case call_outcome::unknown_tool: return respond(error_response(failure::invalid_params, id, o.message));
        case call_outcome::forbidden: return respond(error_response(failure::forbidden, id, o.message));
        case call_outcome::answered: return respond(result_response(id, std::move(o.result)));
      }
    });
  }

  void invoke(const grant& g, const std::string& name, json arguments,
              std::function<void(call_outcome)> done) override {
    auto t = tools.find(name, g);
    if (!t)
      return done({call_outcome::unknown_tool, {}, "unknown tool: " + name});
    if (!g.allows(t->scope))
      return done({call_outcome::forbidden, {}, "this token lacks the " + t->scope + " scope"});
    auto reply = [done](json result) { done({call_outcome::answered, std::move(result), {}}); };
    // An optional argument sent as null is absent, for the handler as for the check (a
    // handler reading `limit` as a number once failed on "limit": null).
    if (arguments.is_object())
      for (auto it = arguments.begin(); it != arguments.end();)
        it = it->is_null() ? arguments.erase(it) : std::next(it);
    if (t->prepare)
      if (auto bad = t->prepare(arguments))
        return reply(tool_error(*bad));
    if (!t->input_schema)
      return reply(tool_error(name + " cannot be called: " + t->schema_error));
    if (auto bad = check_arguments(*t->input_schema, arguments))
      return reply(tool_error(*bad));
    try {
      t->handler(g, arguments, reply);
    } catch (const std::exception& e) {
      logger().error("{} failed: {}", name, e.what());
      reply(tool_error(name + " failed: " + e.what()));
    }
  }

  const registry& tool_registry() const override { return tools; }

  /// Open GET /v1/events streams, each with its grant and when it last said something.
  struct api_stream {
    grant g;
    std::weak_ptr<net::event_stream> stream;
    std::chrono::steady_clock::time_point last{};
  };
  std::mutex api_streams_mutex;
  std::vector<api_stream> api_streams;

  void open_events(const grant& g, net::responder respond) override {
    net::response r{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
    r.on_stream = [alive = alive, this, g](std::shared_ptr<net::event_stream> s) {
      std::lock_guard guard(alive->first);
      if (!alive->second)
        return;
      s->send(json{{"type", "open"}, {"organizationId", g.organization_id}}.dump());
      std::lock_guard lock(api_streams_mutex);
      api_streams.push_back({g, s, {}});
    };
    respond(std::move(r));
  }

  /// An event of `org` was applied: tells its /v1/events streams, at most every 250 ms each
  /// (a view refreshes; a burst of thousands is one message).
  void applied_in(const std::string& org) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(api_streams_mutex);
    if (api_streams.empty())
      return;
    std::erase_if(api_streams, [&](api_stream& a) {
      auto s = a.stream.lock();
      if (!s || !s->open())
        return true;
      if (a.g.organization_id == org && now - a.last >= std::chrono::milliseconds(250)) {
        a.last = now;
        s->send(R"({"type":"applied"})");
      }
      return false;
    });
  }
  const storage::graph_store& store() const override { return *deps.store; }
};

service::service(mcp_dependencies deps, mcp_options opts)
    : impl_(std::make_unique<impl>(std::move(deps), std::move(opts))) {}

service::~service() = default;

registry& service::tools() { return impl_->tools; }

std::size_t service::open_streams() {
  std::size_t n = 0;
  impl_->each_open_stream([&](const grant&, net::event_stream&) { ++n; });
  return n;
}

const query::query_service& service::queries() const { return *impl_->queries; }

std::variant<grant, net::response> service::who(const net::request& req) const {
  return authenticate(req, impl_->opts.auth);
}

void service::add_routes(net::router& r, front_door door) {
  auto gated = [this, door](bool is_mcp, net::handler serve) -> net::handler {
    if (!door)
      return serve;
    return [this, door, is_mcp, serve = std::move(serve)](const net::request& req, net::responder respond) {
      auto g = who(req);
      if (auto* refused = std::get_if<net::response>(&g))
        return respond(std::move(*refused));
      door(std::get<grant>(g), req, respond, serve, is_mcp);
    };
  };
  r.add("/mcp", {},
        gated(true, [this](const net::request& req, net::responder respond) { handle(req, std::move(respond)); }));
  r.add("/v1/kg/bundles", {"GET", "HEAD"}, gated(false, [this](const net::request& req, net::responder respond) {
          handle_bundles(req, std::move(respond));
        }));
  r.add("/v1/*", {},
        gated(false, [this](const net::request& req, net::responder respond) { handle_api(req, std::move(respond)); }));
}

void service::handle_api(const net::request& req, net::responder respond) {
  auto who = authenticate(req, impl_->opts.auth);
  if (auto* refused = std::get_if<net::response>(&who))
    return respond(std::move(*refused));
  if (!impl_->deps.store)
    return respond(json_response(503, {{"error", "no store in this process"}}));
  serve_api(*impl_, std::get<grant>(who), req, std::move(respond));
}

void service::handle_bundles(const net::request& req, net::responder respond) {
  auto who = authenticate(req, impl_->opts.auth);
  if (auto* refused = std::get_if<net::response>(&who))
    return respond(std::move(*refused));
  const auto& g = std::get<grant>(who);
  std::string name;
  if (auto q = req.target.find("?name="); q != std::string::npos)
    name = req.target.substr(
        q + 6, req.target.find('&', q) == std::string::npos ? std::string::npos : req.target.find('&', q) - q - 6);
  if (!name.empty() && !schemas::valid_bundle_name(name))
    return respond(json_response(400, {{"error", "name: '" + name + "' is not a bundle name ([a-z0-9-]+)"}}));
  if (!impl_->deps.store)
    return respond(json_response(503, {{"error", "no store in this process"}}));
  respond(json_response(200, bundles_json(*impl_->deps.store, g.organization_id, name)));
}

void service::handle(const net::request& req, net::responder respond) {
  auto& m = *impl_;
  if (m.deps.metrics)
    respond = m.metered(req, std::move(respond));
  auto who = authenticate(req, m.opts.auth);
  if (auto* refused = std::get_if<net::response>(&who))
    return respond(std::move(*refused));
  const auto& g = std::get<grant>(who);
  if (req.method == "GET")
    return m.open_stream(g, req, std::move(respond));
  if (req.method != "POST")
    return respond(error_response(failure::wrong_method, nullptr,
                                  "use POST for /mcp, or GET for its event stream (no sessions to DELETE)",
                                  {{"Allow", "GET, POST"}}));
  if (auto it = req.headers.find("mcp-protocol-version");
      it != req.headers.end() && !it->second.empty() &&
      std::none_of(std::begin(protocol_versions), std::end(protocol_versions),
                   [&](const char* p) { return it->second == p; }))
    return respond(error_response(failure::invalid_request, nullptr, "unsupported MCP-Protocol-Version " + it->second));
  auto read = read_envelope(req.body);
  if (auto* refused = std::get_if<net::response>(&read))
    return respond(std::move(*refused));
  const auto& e = std::get<envelope>(read);
  if (e.notification)  // accepted, nothing to answer
    return respond(net::response{202, "application/json", "", {}});
  const auto& method = e.method;
  const json& id = e.id;
  const json& params = e.params;
  if (method == "initialize") {
    const auto v = params.find("protocolVersion");
    const std::string asked = v != params.end() && v->is_string() ? v->get<std::string>() : "";
    std::string version = protocol_versions[0];
    for (const char* p : protocol_versions)
      if (asked == p)
        version = p;
    return respond(result_response(
        id, {{"protocolVersion", version},
             {"capabilities", {{"tools", {{"listChanged", true}}}, {"prompts", {{"listChanged", false}}}}},
             {"serverInfo", {{"name", "engram"}, {"version", "0.1.0"}}},
             {"instructions",
              "Engram: this organisation's knowledge, read from its mail and chat. "
              "recall_knowledge before answering; save_knowledge what you learn."}}));
  }
  if (method == "ping")
    return respond(result_response(id, json::object()));
  if (method == "tools/list")
    return respond(result_response(id, {{"tools", m.tools.list(g)}}));
  if (method == "tools/call")
    return m.call_tool(g, id, params, std::move(respond));
  if (method == "prompts/list")
    return respond(result_response(id, {{"prompts", m.deps.store ? bundle_prompts(*m.deps.store, g) : json::array()}}));
  if (method == "prompts/get") {
    const auto name = params.value("name", json()).is_string() ? params["name"].get<std::string>() : std::string();
    auto p = m.deps.store ? bundle_prompt(*m.deps.store, g, name) : std::nullopt;
    if (!p)
      return respond(error_response(failure::invalid_params, id, "unknown prompt: " + name));
    return respond(result_response(id, std::move(*p)));
  }
  respond(error_response(failure::method_not_found, id, "method not found: " + method));
}

}  // namespace engram::mcp
