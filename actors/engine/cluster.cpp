#include "actors/engine/cluster.hpp"

#include "logging/log.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <thread>

namespace engram::engine {

engram::result<void> check_partition_count(const std::string& store_path, const std::string& topic,
                                           std::size_t partitions) {
  const auto file = std::filesystem::path(store_path) / "cluster-partitions";
  const auto count = std::to_string(partitions);
  if (std::ifstream in(file); in) {
    std::string topic_was, count_was;
    in >> topic_was >> count_was;
    if (topic_was == topic && count_was != count)
      return engram::fail("store.cluster: " + topic + " has " + count +
                          " partitions, but this store was built when it had " + count_was + " (" + file.string() +
                          "): organisations would move between partitions and their history split between two "
                          "owners; give the topic its count back, or start this member on an empty store");
    return {};
  }
  const auto tmp = file.string() + ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << topic << " " << count << "\n";
    if (!out.flush())
      ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec)
    std::filesystem::rename(tmp, file, ec);
  if (ec)
    return engram::fail("store.cluster: cannot write " + file.string() + ": " + ec.message());
  return {};
}

namespace {

using json = nlohmann::json;

spdlog::logger& logger() { return logging::get(logging::module::engine); }

/// Records a second a member applies while it restores (dense mail, docs/benchmarks.md).
constexpr double restore_rate = 400.0;

/// What a request asks is an event stream (GET /mcp, /v1/events): relayed from the owner.
bool is_stream(const net::request& req) {
  if (req.method != "GET")
    return false;
  if (req.target.rfind("/v1/events", 0) == 0)
    return true;
  auto accept = req.headers.find("accept");
  return req.target.rfind("/mcp", 0) == 0 && accept != req.headers.end() &&
         accept->second.find("text/event-stream") != std::string::npos;
}

/// The caller's headers that go with a request to the owner, and who forwards it.
std::map<std::string, std::string> forward_headers(const net::request& req, const std::string& by) {
  std::map<std::string, std::string> headers;
  for (const char* h : {"authorization", "content-type", "accept", "mcp-protocol-version", "origin", "last-event-id"})
    if (auto it = req.headers.find(h); it != req.headers.end())
      headers[h] = it->second;
  headers[forwarded_header] = by;
  return headers;
}

/// The JSON-RPC id of an MCP request body (null when none can be read).
json rpc_id(const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("id"))
    return j["id"];
  return nullptr;
}

}  // namespace

int retry_after_seconds(std::int64_t remaining) {
  if (remaining <= 0)
    return 1;
  return static_cast<int>(std::clamp(std::ceil(static_cast<double>(remaining) / restore_rate), 1.0, 60.0));
}

cluster::cluster(cluster_options opts, actors::ingest_status& status) : opts_(std::move(opts)), status_(status) {}

cluster::~cluster() {
  stop();
  // Requests waiting or forwarded hold `this`: each ends within the forward timeout, a
  // relayed stream within 200 ms of stop().
  const auto deadline = std::chrono::steady_clock::now() + opts_.forward_timeout + opts_.settle;
  while ((waiting_ > 0 || relaying_ > 0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void cluster::attach(std::unique_ptr<ingest::members_topic> members) { members_ = std::move(members); }

void cluster::publish() {
  if (members_)
    members_->publish_now();
}

void cluster::stop() {
  stopping_ = true;
  if (members_)
    members_->stop();
}

std::int32_t cluster::partition_of(const std::string& org) const { return ingest::partition_of(org, opts_.partitions); }

ingest::member_record cluster::self() const {
  ingest::member_record r;
  r.name = opts_.name;
  r.url = opts_.url;
  for (const auto& [p, s] : status_.partitions()) {
    r.owned.push_back(p);
    if (s.caught_up())
      r.ready.push_back(p);
    r.progress[p] = {s.next_offset, s.catch_up_target};
  }
  r.standby = standby_now();
  return r;
}

std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> cluster::standby_now() const {
  std::lock_guard lock(standby_mutex_);
  return standby_ ? standby_() : std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>>{};
}

std::set<std::int32_t> cluster::standby_wanted() const {
  std::set<std::int32_t> out;
  if (!members_ || opts_.standby_replicas == 0)
    return out;
  std::vector<std::string> names{opts_.name};
  std::map<std::int32_t, std::string> owner;
  for (const auto& m : members_->members()) {
    if (!m.live || m.record.name == opts_.name)
      continue;
    names.push_back(m.record.name);
    for (auto p : m.record.owned)
      owner[p] = m.record.name;
  }
  std::sort(names.begin(), names.end());
  for (const auto& [p, name] : owner) {
    if (status_.state(p).first != actors::partition_state::not_owned)
      continue;
    const auto at = std::find(names.begin(), names.end(), name) - names.begin();
    for (std::uint32_t k = 1; k <= opts_.standby_replicas && k < names.size(); ++k)
      if (names[(at + k) % names.size()] == opts_.name)
        out.insert(p);
  }
  return out;
}

cluster::decision cluster::decide(std::int32_t partition) const {
  auto [state, at] = status_.state(partition);
  if (state == actors::partition_state::ready)
    return {verdict::serve, at, {}};
  if (state == actors::partition_state::restoring)
    return {verdict::restoring, at, {}};
  if (members_)
    if (auto owner = members_->owner_of(partition, opts_.name))
      return {verdict::forward, {}, std::move(*owner)};
  return {verdict::unknown, {}, {}};
}

void cluster::route(const std::string& org, const net::request& req, const net::responder& respond,
                    const std::function<void(const net::request&, net::responder)>& serve, bool mcp) {
  const auto partition = partition_of(org);
  const bool forwarded = req.headers.count(forwarded_header) > 0;
  auto first = decide(partition);
  if (first.what == verdict::serve)
    return serve(req, respond);
  if (first.what == verdict::restoring)
    return answer_restoring(req, respond, mcp, org, partition, first.at);
  if (forwarded)  // forwarded here by a member that took this one for the owner: no second hop
    return answer_retry(req, respond, mcp, org, partition, 2,
                        "is not served by this member (engram-log partition " + std::to_string(partition) +
                            " is not assigned here; a forwarded request is not forwarded again)");
  const bool stream = is_stream(req);
  if (stream ? relaying_ >= opts_.max_relayed : waiting_ >= opts_.max_waiting)
    return answer_retry(req, respond, mcp, org, partition, 1,
                        stream ? "cannot be relayed now (too many event streams relayed)"
                               : "cannot be routed now (too many requests waiting)");
  // A relayed stream counts among the relayed from the start: it lasts as long as its client.
  auto* count = stream ? &relaying_ : &waiting_;
  ++*count;
  // Forwarding and waiting for an owner block: never on the I/O thread.
  std::thread([this, org, partition, req, respond, serve, mcp, first, stream, count] {
    auto d = first;
    const auto deadline = std::chrono::steady_clock::now() + opts_.settle;
    while (d.what == verdict::unknown && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      d = decide(partition);
    }
    switch (d.what) {
      case verdict::serve: serve(req, respond); break;
      case verdict::restoring: answer_restoring(req, respond, mcp, org, partition, d.at); break;
      case verdict::forward:
        if (stream)
          relay(req, respond, d.owner, mcp, org, partition);
        else
          forward(req, respond, d.owner, mcp, org, partition);
        break;
      case verdict::unknown:
        answer_retry(req, respond, mcp, org, partition, 2,
                     "has no member answering for it yet (engram-log partition " + std::to_string(partition) +
                         " is being reassigned)");
        break;
    }
    --*count;
  }).detach();
}

void cluster::answer_retry(const net::request& req, const net::responder& respond, bool mcp, const std::string& org,
                           std::int32_t partition, int seconds, const std::string& why) {
  ++retried_;
  const std::string message = "organisation '" + org + "' " + why + "; retry after " + std::to_string(seconds) + " s";
  std::vector<std::pair<std::string, std::string>> headers{{"Retry-After", std::to_string(seconds)}};
  if (mcp && req.method == "POST") {
    auto id = rpc_id(req.body);
    if (!id.is_null()) {
      json error{{"jsonrpc", "2.0"},
                 {"id", id},
                 {"error",
                  {{"code", -32002},
                   {"message", message},
                   {"data", {{"retryAfterSeconds", seconds}, {"organizationId", org}, {"partition", partition}}}}}};
      return respond(net::response{200, "application/json", error.dump(), std::move(headers)});
    }
  }
  respond(net::response{503, "application/json",
                        json{{"error", message}, {"retryAfterSeconds", seconds}, {"partition", partition}}.dump(),
                        std::move(headers)});
}

void cluster::answer_restoring(const net::request& req, const net::responder& respond, bool mcp, const std::string& org,
                               std::int32_t partition, const actors::partition_status& at) {
  answer_retry(req, respond, mcp, org, partition, retry_after_seconds(at.catch_up_target - at.next_offset),
               "is being restored on this member (engram-log partition " + std::to_string(partition) + " at " +
                   std::to_string(at.next_offset) + " of " + std::to_string(at.catch_up_target) + ")");
}

void cluster::forward(const net::request& req, const net::responder& respond, const ingest::member_record& owner,
                      bool mcp, const std::string& org, std::int32_t partition) {
  auto res =
      net::fetch(req.method, owner.url + req.target, req.body, forward_headers(req, opts_.name), opts_.forward_timeout);
  if (res.status == 0) {
    logger().warn("forwarding {} {} to {} failed: {}", req.method, req.target, owner.name, res.error);
    return answer_retry(req, respond, mcp, org, partition, 2,
                        "did not get an answer from its owner " + owner.name + " (" + res.error +
                            "); a save may have been written: look for it before saving again");
  }
  ++forwarded_;
  std::vector<std::pair<std::string, std::string>> out{{"X-Engram-Served-By", owner.name}};
  if (!res.retry_after.empty())
    out.emplace_back("Retry-After", res.retry_after);
  respond(net::response{res.status, res.content_type, std::move(res.body), std::move(out)});
}

void cluster::relay(const net::request& req, const net::responder& respond, const ingest::member_record& owner,
                    bool mcp, const std::string& org, std::int32_t partition) {
  // The client's end of the stream: attached once its header is written (on the HTTP I/O
  // thread); the events that come before wait for it.
  struct downstream {
    std::mutex mutex;
    std::shared_ptr<net::event_stream> stream;
    std::vector<std::string> early;
  };
  auto down = std::make_shared<downstream>();
  bool answered = false;
  std::chrono::steady_clock::time_point streaming_since{};
  auto ended = net::follow_events(
      owner.url + req.target, forward_headers(req, opts_.name), opts_.forward_timeout,
      [&](const net::client_result& head) {
        answered = true;
        ++forwarded_;
        std::vector<std::pair<std::string, std::string>> headers{{"X-Engram-Served-By", owner.name}};
        if (!head.retry_after.empty())
          headers.emplace_back("Retry-After", head.retry_after);
        net::response r{head.status, head.content_type, head.body, std::move(headers)};
        if (head.status == 200 && head.content_type.rfind("text/event-stream", 0) == 0) {
          streaming_since = std::chrono::steady_clock::now();
          r.on_stream = [down](std::shared_ptr<net::event_stream> s) {
            std::lock_guard lock(down->mutex);
            for (const auto& e : down->early)
              s->send(e);
            down->early.clear();
            down->stream = std::move(s);
          };
        }
        respond(std::move(r));
      },
      [&](const std::string& data) {
        std::lock_guard lock(down->mutex);
        if (down->stream)
          down->stream->send(data);
        else if (down->early.size() < 1024)
          down->early.push_back(data);
      },
      [&] {
        if (stopping_)
          return false;
        std::lock_guard lock(down->mutex);
        if (down->stream)
          return down->stream->open();
        // Never attached within 10 s: the client's end was refused (too many streams) or gone.
        return streaming_since == std::chrono::steady_clock::time_point{} ||
               std::chrono::steady_clock::now() - streaming_since < std::chrono::seconds(10);
      });
  if (!answered) {
    logger().warn("relaying {} {} from {} failed: {}", req.method, req.target, owner.name, ended);
    return answer_retry(req, respond, mcp, org, partition, 2,
                        "did not get an answer from its owner " + owner.name + " (" + ended + ")");
  }
  if (!ended.empty())
    logger().debug("a stream of '{}' relayed from {} ended: {}", org, owner.name, ended);
  // The owner ended it, or went: the client reconnects, and is routed anew.
  std::lock_guard lock(down->mutex);
  if (down->stream)
    down->stream->finish();
}

services::metrics::cluster_figures cluster::figures() const {
  services::metrics::cluster_figures f;
  for (std::int32_t p = 0; p < opts_.partitions; ++p) {
    auto [state, at] = status_.state(p);
    f.states[p] = state == actors::partition_state::ready       ? "ready"
                  : state == actors::partition_state::restoring ? "restoring"
                                                                : "not_owned";
    if (state == actors::partition_state::restoring)
      f.remaining[p] = std::max<std::int64_t>(0, at.catch_up_target - at.next_offset);
  }
  if (members_)
    for (const auto& m : members_->members())
      f.members += m.live;
  f.forwarded = forwarded_;
  f.retried = retried_;
  f.relaying = relaying_;
  for (const auto& [p, at] : standby_now())
    f.standby_lag[p] = std::max<std::int64_t>(0, at.second - at.first);
  return f;
}

json cluster::view() const {
  json members = json::array();
  std::map<std::int32_t, json> partitions;
  if (members_)
    for (const auto& m : members_->members()) {
      members.push_back({{"member", m.record.name},
                         {"url", m.record.url},
                         {"live", m.live},
                         {"heardMsAgo", m.age.count()},
                         {"owned", m.record.owned},
                         {"ready", m.record.ready}});
      if (!m.live)
        continue;
      for (auto p : m.record.owned) {
        const bool ready = std::find(m.record.ready.begin(), m.record.ready.end(), p) != m.record.ready.end();
        auto at = m.record.progress.count(p) ? m.record.progress.at(p) : std::pair<std::int64_t, std::int64_t>{0, 0};
        partitions[p] = {{"partition", p},      {"owner", m.record.name}, {"state", ready ? "ready" : "restoring"},
                         {"applied", at.first}, {"target", at.second},    {"standbys", json::array()}};
      }
    }
  if (members_)
    for (const auto& m : members_->members())
      if (m.live)
        for (const auto& [p, at] : m.record.standby)
          if (partitions.count(p))
            partitions[p]["standbys"].push_back(
                {{"member", m.record.name}, {"applied", at.first}, {"highWatermark", at.second}});
  json rows = json::array();
  for (std::int32_t p = 0; p < opts_.partitions; ++p)
    rows.push_back(partitions.count(p) ? partitions[p]
                                       : json{{"partition", p}, {"owner", nullptr}, {"state", "unowned"}});
  return {{"member", opts_.name},
          {"url", opts_.url},
          {"partitions", rows},
          {"members", members},
          {"forwarded", forwarded_.load()},
          {"retried", retried_.load()},
          {"relaying", relaying_.load()}};
}

}  // namespace engram::engine
