// Several store engramd sharing the organisations (store.cluster, docs/scaling-out.md), as
// real processes on the test broker with 12 engram-log partitions and 24 organisations, two
// on each partition: one extract member reads the mail, the store members split engram-log by
// the consumer group's assignment, and any member answers any organisation (forwarding to the
// owner). Each organisation's digest is compared with a single store that read the same
// engram-log (engramctl digest --organization). Every wait is on observed state (the members'
// own view of the cluster, counts in /v1/stats), never a sleep.
#include "actors/engine/cluster.hpp"
#include "actors/ingest/members.hpp"
#include "actors/ingest/reminders.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"
#include "storage/graph_store.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr int partitions = 12;

/// 24 organisation ids, two on each of the 12 partitions by the partitioner engramd uses.
std::vector<std::string> two_per_partition() {
  std::map<std::int32_t, int> taken;
  std::vector<std::string> out;
  for (int k = 0; out.size() < 2 * partitions; ++k) {
    auto name = "tenant-" + std::to_string(k);
    if (taken[ingest::partition_of(name, partitions)]++ < 2)
      out.push_back(name);
  }
  return out;
}

std::string token_of(const std::string& org) { return "token-of-" + org + "-0123456789abcdef"; }

class Cluster : public ::testing::Test {
protected:
  struct member {
    std::string name;
    std::uint16_t port = 0;
    std::unique_ptr<test::engramd> process;
  };

  Cluster() : dir_("cluster"), orgs_(two_per_partition()), broker_(test::start_broker(partitions)) {
    tokens_ = "auth.tokens=[";
    for (std::size_t i = 0; i < orgs_.size(); ++i)
      tokens_ += (i ? ", " : "") + std::string("{token: ") + token_of(orgs_[i]) + ", organization_id: " + orgs_[i] +
                 ", scopes: [read, write], name: agent}";
    tokens_ += "]";
  }

  [[nodiscard]] const std::string& brokers() const { return broker_->bootstrap(); }

  /// The extract member (inbound-messages -> engram-log).
  void start_extract() {
    extract_ = std::make_unique<test::engramd>(
        test::engramd_args(brokers(), dir_.sub("extract"), {"roles=[extract]", tokens_}), dir_.sub("extract.log"));
  }

  /// Store member `name` (its store in dir/name, kept across restarts of the same name).
  member& start_member(const std::string& name, const std::vector<std::string>& extra = {}) {
    auto& m = members_[name];
    m.name = name;
    std::vector<std::string> sets{"roles=[store]",
                                  "store.cluster=true",
                                  "store.advertised_url=http://127.0.0.1:0",  // the port it binds
                                  "store.member_name=" + name,
                                  "store.heartbeat_ms=300",
                                  tokens_};
    sets.insert(sets.end(), extra.begin(), extra.end());
    m.process =
        std::make_unique<test::engramd>(test::engramd_args(brokers(), dir_.sub(name), sets), dir_.sub(name + ".log"));
    m.port = m.process->port();
    EXPECT_TRUE(test::wait_until([&] { return test::ready(m.port); }, 60s)) << test::tail(dir_.sub(name + ".log"));
    return m;
  }

  /// True when the live members `names` together applied engram-log to its end: each
  /// partition's end offset is the applied offset on the member it is assigned to.
  bool applied_whole_log(const std::set<std::string>& names) {
    auto ranges = ingest::partition_ranges(brokers(), {"engram-log"});
    if (!ranges || ranges->size() != std::size_t(partitions))
      return false;
    std::map<std::int32_t, std::int64_t> applied;
    for (const auto& name : names) {
      auto stats = json::parse(test::get(members_.at(name).port, "/v1/stats"), nullptr, false);
      if (!stats.is_object() || !stats.contains("partitions"))
        return false;
      for (const auto& p : stats["partitions"])
        if (p.contains("lag"))  // assigned here
          applied[p["partition"].get<std::int32_t>()] = p["appliedOffset"].get<std::int64_t>();
    }
    for (const auto& r : *ranges)
      if (!applied.count(r.partition) || applied[r.partition] != r.end)
        return false;
    return true;
  }

  /// A save through member `m`, retried (as a client would) while the answer is "retry";
  /// the saved entry's id, or "" when it never got an answer.
  std::string save(const member& m, const std::string& org, const std::string& content) {
    for (int attempt = 0; attempt < 200; ++attempt) {
      auto r = net::fetch(
          "POST", "http://127.0.0.1:" + std::to_string(m.port) + "/mcp",
          json{{"jsonrpc", "2.0"},
               {"id", attempt},
               {"method", "tools/call"},
               {"params",
                {{"name", "save_knowledge"},
                 {"arguments", {{"type", "fact"}, {"title", content}, {"content", content}, {"confidence", 0.9}}}}}}
              .dump(),
          {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token_of(org)}}, 60s);
      auto j = json::parse(r.body, nullptr, false);
      if (r.status == 200 && j.is_object() && j.contains("result") && !j["result"].value("isError", false))
        return j["result"]["structuredContent"]["id"].get<std::string>();
      const bool retry = (r.status == 503 && !r.retry_after.empty()) ||
                         (j.is_object() && j.contains("error") && j["error"]["code"] == -32002);
      EXPECT_TRUE(retry) << r.status << " " << r.body;
      if (!retry)
        return "";
      ++retries_;
      std::this_thread::sleep_for(100ms);  // a client's back-off; the loop ends on an answer
    }
    return "";
  }

  /// GET /v1/cluster of a member (null when it does not answer).
  json view(const member& m) { return json::parse(test::get(m.port, "/v1/cluster"), nullptr, false); }

  /// True when `m` sees every partition ready, owned by exactly `owners`, each member's
  /// record saying the same; and the members together applied `events` events (messages
  /// and saves).
  bool settled(const member& m, const std::set<std::string>& owners, long events) {
    auto v = view(m);
    if (!v.is_object() || !v.contains("partitions"))
      return false;
    std::set<std::string> seen;
    for (const auto& p : v["partitions"]) {
      if (p["state"] != "ready" || !p["owner"].is_string())
        return false;
      seen.insert(p["owner"].get<std::string>());
    }
    if (seen != owners)
      return false;
    long applied = 0;
    for (const auto& name : owners) {
      const long n = test::events_applied(members_.at(name).port);
      if (n < 0)
        return false;
      applied += n;
    }
    return applied == events;
  }

  /// The partitions the group assigns to `m`, as `m` says.
  std::set<std::int32_t> owned_by(const member& m) {
    std::set<std::int32_t> out;
    const auto v = view(m);  // kept: a range over a temporary's member would dangle
    for (const auto& p : v["partitions"])
      if (p["owner"] == m.name)
        out.insert(p["partition"].get<std::int32_t>());
    return out;
  }

  /// The member `m` says owns `org`.
  std::string owner_of(const member& m, const std::string& org) {
    auto v = view(m);
    return v["partitions"][ingest::partition_of(org, partitions)]["owner"].get<std::string>();
  }

  /// Logs of every member, for failure messages.
  std::string logs() {
    std::string out = "events applied:";
    for (const auto& [name, m] : members_)
      out += " " + name + "=" + std::to_string(test::events_applied(m.port));
    out += "\n--- extract\n" + test::tail(dir_.sub("extract.log"), 15);
    for (const auto& [name, _] : members_)
      out += "--- " + name + "\n" + test::tail(dir_.sub(name + ".log"), 25);
    return out;
  }

  void produce(const std::vector<std::string>& events, std::size_t from, std::size_t to) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (std::size_t i = from; i < to; ++i)
      kv.emplace_back(test::org_of(events[i]), events[i]);
    test::produce_raw(brokers(), "inbound-messages", kv);
  }

  /// Each organisation's digest from a single (unclustered) store that read the same
  /// engram-log in a group of its own, once it applied `events` events.
  std::map<std::string, std::string> single_store_digests(long events) {
    test::engramd control(
        test::engramd_args(brokers(), dir_.sub("control"), {"roles=[store]", "kafka.group_id=control", tokens_}),
        dir_.sub("control.log"));
    const auto port = control.port();
    EXPECT_TRUE(test::wait_until([&] { return test::events_applied(port) == events && test::ready(port); }, 180s))
        << test::events_applied(port) << "\n"
        << test::tail(dir_.sub("control.log"));
    EXPECT_EQ(control.terminate(10s), 0);
    return digests(dir_.sub("control"));
  }

  /// The stopped member `name` holds every organisation, each with a single store's content
  /// (one that applied `events` events); then the extract member stops.
  void expect_every_organisation_as_a_single_store(const std::string& name, long events) {
    const auto mine = digests(dir_.sub(name));
    const auto single = single_store_digests(events);
    for (const auto& o : orgs_)
      EXPECT_EQ(mine.at(o), single.at(o)) << o;
    EXPECT_EQ(extract_->terminate(15s), 0);
  }

  /// Every organisation's digest in the store at `data_dir` (opened read-only).
  std::map<std::string, std::string> digests(const std::string& data_dir) {
    std::map<std::string, std::string> out;
    auto store = storage::open_graph_store({data_dir, /*read_only=*/true});
    EXPECT_TRUE(store) << store.error();
    if (store)
      for (const auto& org : orgs_)
        out[org] = (*store)->digest(org);
    return out;
  }

  test::temp_dir dir_;
  std::vector<std::string> orgs_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::string tokens_;
  std::unique_ptr<test::engramd> extract_;
  std::map<std::string, member> members_;
  std::size_t retries_ = 0;
};

TEST_F(Cluster, EveryOrganisationIsAnsweredThroughEveryMemberByItsOwner) {
  ASSERT_EQ(orgs_.size(), 24u);
  const auto events = evaluation::synthetic::dense_events(240, orgs_);
  start_extract();
  for (const char* name : {"m1", "m2", "m3"})
    start_member(name);
  produce(events, 0, events.size());

  // The partitioner engramd computes is the one the producers used.
  for (const auto& r : test::consume_all(brokers(), "inbound-messages", events.size(), 30s))
    ASSERT_EQ(r.partition, ingest::partition_of(r.key, partitions)) << r.key;
  for (const auto& r : test::consume_all(brokers(), "engram-log", events.size(), 60s))
    ASSERT_EQ(r.partition, ingest::partition_of(r.key, partitions)) << r.key;

  const std::set<std::string> all{"m1", "m2", "m3"};
  ASSERT_TRUE(test::wait_until([&] { return settled(members_.at("m1"), all, long(events.size())); }, 120s))
      << view(members_.at("m1")).dump() << "\n"
      << logs();
  // Each member's own /v1/stats lists only the organisations of its partitions: together
  // all 24, each once.
  std::multiset<std::string> listed;
  for (const auto& [name, m] : members_) {
    auto stats = json::parse(test::get(m.port, "/v1/stats"));
    for (const auto& o : stats["organizations"])
      listed.insert(o["organizationId"].get<std::string>());
  }
  EXPECT_EQ(listed, std::multiset<std::string>(orgs_.begin(), orgs_.end()));

  // engramctl cluster: a line per partition with its owner, then the three live members.
  std::string table;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) + " cluster --url http://127.0.0.1:" +
                          std::to_string(members_.at("m3").port) + " --token " + test::admin_token,
                      &table),
            0)
      << table;
  for (int p = 0; p < partitions; ++p) {
    const auto& owner = view(members_.at("m3"))["partitions"][p]["owner"].get<std::string>();
    char row[64];
    std::snprintf(row, sizeof row, "%9d  %-15s  ready", p, owner.c_str());
    EXPECT_NE(table.find(row), std::string::npos) << row << "\n" << table;
  }
  for (const char* name : {"m1", "m2", "m3"})
    EXPECT_NE(table.find(std::string("  ") + name + "  http://127.0.0.1:"), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 1 + 1 + partitions + 1 + 3 + 1) << table;
  // /metrics: each member says which partitions are ready on it, and hears two others.
  std::size_t ready_series = 0;
  for (const auto& [name, m] : members_) {
    const auto text = test::get(m.port, "/metrics", nullptr, "");
    for (int p = 0; p < partitions; ++p)
      ready_series += text.find("engram_partition_state{partition=\"" + std::to_string(p) + "\",state=\"ready\"} 1") !=
                      std::string::npos;
    EXPECT_NE(text.find("engram_cluster{figure=\"members\"} 3"), std::string::npos) << name;
  }
  EXPECT_EQ(ready_series, std::size_t(partitions)) << "each partition ready on exactly one member";

  // Every organisation through every member: the owner's answer, whoever is asked.
  std::size_t forwarded_answers = 0;
  for (const auto& org : orgs_) {
    const auto owner = owner_of(members_.at("m2"), org);
    const auto expected = test::recall_ids(members_.at(owner).port, token_of(org), "budget rollout contract");
    ASSERT_FALSE(expected.empty()) << org;
    for (const auto& [name, m] : members_) {
      EXPECT_EQ(test::recall_ids(m.port, token_of(org), "budget rollout contract"), expected) << org << " via " << name;
      forwarded_answers += name != owner;
    }
    // Isolation: another organisation's token never sees these entries, through any member.
    const auto& other = orgs_[(&org - orgs_.data() + 1) % orgs_.size()];
    for (const auto& [name, m] : members_)
      for (const auto& id : test::recall_ids(m.port, token_of(other), "budget rollout contract"))
        EXPECT_EQ(std::count(expected.begin(), expected.end(), id), 0) << other << " saw " << id << " of " << org;
  }
  EXPECT_EQ(forwarded_answers, 48u);
  long forwarded = 0;
  for (const auto& [name, m] : members_)
    forwarded += view(m)["forwarded"].get<long>();
  EXPECT_GE(forwarded, 48 * 2) << "each organisation's two recalls through each non-owner were forwarded";

  // A request that was forwarded already is never forwarded again: a non-owner answers it
  // "retry" (here at once: the owner is known, but a second hop is refused).
  const auto& org = orgs_[0];
  const auto owner = owner_of(members_.at("m1"), org);
  const auto& other = owner == "m1" ? members_.at("m2") : members_.at("m1");
  auto twice = net::fetch(
      "POST", "http://127.0.0.1:" + std::to_string(other.port) + "/mcp",
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"recall_knowledge","arguments":{"query":"x"}}})",
      {{"Content-Type", "application/json"},
       {"Authorization", "Bearer " + token_of(org)},
       {"X-Engram-Forwarded-By", "elsewhere"}},
      30s);
  ASSERT_EQ(twice.status, 200) << twice.body;
  auto rpc = json::parse(twice.body);
  EXPECT_EQ(rpc["id"], 7);
  EXPECT_EQ(rpc["error"]["code"], -32002) << twice.body;
  EXPECT_GE(rpc["error"]["data"]["retryAfterSeconds"].get<int>(), 1);
  EXPECT_NE(rpc["error"]["message"].get<std::string>().find(org), std::string::npos) << twice.body;
  EXPECT_FALSE(twice.retry_after.empty());
  // /v1 answers 503 with Retry-After in the same case.
  auto rest = net::fetch("GET", "http://127.0.0.1:" + std::to_string(other.port) + "/v1/stats", {},
                         {{"Authorization", "Bearer " + token_of(org)}, {"X-Engram-Forwarded-By", "elsewhere"}}, 30s);
  EXPECT_EQ(rest.status, 503) << rest.body;
  EXPECT_FALSE(rest.retry_after.empty());
  // An event stream through a non-owner is relayed from the owner, event by event: the
  // owner's "open" (naming the organisation), then "applied" for a save made through the
  // non-owner; the client leaving ends the relay.
  struct listener {
    std::mutex mutex;
    std::vector<json> events;
    net::client_result head;
    std::atomic<bool> stay{true}, ended{false};
    std::string why;
    std::thread thread;
    void open(std::uint16_t port, const std::string& target, const std::map<std::string, std::string>& headers) {
      thread = std::thread([this, port, target, headers] {
        auto why_ended = net::follow_events(
            "http://127.0.0.1:" + std::to_string(port) + target, headers, 30s,
            [&](const net::client_result& h) {
              std::lock_guard lock(mutex);
              head = h;
            },
            [&](const std::string& data) {
              std::lock_guard lock(mutex);
              events.push_back(json::parse(data, nullptr, false));
            },
            [&] { return stay.load(); });
        std::lock_guard lock(mutex);
        why = why_ended;
        ended = true;
      });
    }
    bool heard(const std::function<bool(const json&)>& pred) {
      std::lock_guard lock(mutex);
      return std::any_of(events.begin(), events.end(), pred);
    }
    void close() {
      stay = false;
      if (thread.joinable())
        thread.join();
    }
    ~listener() { close(); }
  };
  const auto owner_port = members_.at(owner).port;
  listener events_stream, mcp_stream;
  events_stream.open(other.port, "/v1/events", {{"Authorization", "Bearer " + token_of(org)}});
  mcp_stream.open(other.port, "/mcp", {{"Authorization", "Bearer " + token_of(org)}, {"Accept", "text/event-stream"}});
  ASSERT_TRUE(
      test::wait_until([&] { return events_stream.heard([&](const json& e) { return e["type"] == "open"; }); }, 60s))
      << events_stream.why << "\n"
      << logs();
  EXPECT_TRUE(events_stream.heard([&](const json& e) { return e["organizationId"] == org; }));
  ASSERT_TRUE(test::wait_until([&] { return view(other)["relaying"] == 2; }, 60s)) << view(other).dump();
  {
    std::lock_guard lock(mcp_stream.mutex);
    EXPECT_EQ(mcp_stream.head.status, 200);
    EXPECT_EQ(mcp_stream.head.content_type.rfind("text/event-stream", 0), 0u) << mcp_stream.head.content_type;
  }
  EXPECT_EQ(test::metric(other.port, "engram_cluster{figure=\"relaying\"}"), 2);
  // The GET /mcp stream is the owner's: it is open there, not on the member relaying it.
  EXPECT_TRUE(test::wait_until([&] { return test::metric(owner_port, "engram_mcp_event_streams") == 1; }, 30s));
  EXPECT_EQ(test::metric(other.port, "engram_mcp_event_streams"), 0);
  ASSERT_FALSE(save(other, org, "relayed stream codeword").empty());
  ASSERT_TRUE(
      test::wait_until([&] { return events_stream.heard([&](const json& e) { return e["type"] == "applied"; }); }, 60s))
      << logs();
  // The client leaves: the relay notices and lets go of the owner's stream.
  events_stream.close();
  EXPECT_TRUE(test::wait_until([&] { return view(other)["relaying"] == 1; }, 30s)) << view(other).dump();
  // Each organisation's content on its owner equals a single store's that read the same log.
  std::map<std::string, std::string> owners;
  for (const auto& o : orgs_)
    owners[o] = owner_of(members_.at("m1"), o);
  // The owner stops: the relayed GET /mcp stream ends for its client too (who reconnects).
  ASSERT_EQ(members_.at(owner).process->terminate(15s), 0) << logs();
  EXPECT_TRUE(test::wait_until([&] { return mcp_stream.ended.load(); }, 30s));
  EXPECT_EQ(mcp_stream.why, "") << "the relay ends the stream as a server does";
  mcp_stream.close();
  for (auto& [name, m] : members_)
    if (name != owner)
      ASSERT_EQ(m.process->terminate(15s), 0) << logs();
  std::map<std::string, std::map<std::string, std::string>> by_member;
  for (const auto& [name, _] : members_)
    by_member[name] = digests(dir_.sub(name));
  const auto single = single_store_digests(long(events.size()) + 1);  // and the save
  for (const auto& o : orgs_)
    EXPECT_EQ(by_member[owners[o]][o], single.at(o)) << o << " on " << owners[o];
  EXPECT_EQ(extract_->terminate(15s), 0);
}

// Scale 1 -> 3 -> 2 under ingest and agent saves, the last step a kill -9 mid-ingest: the
// killed member's partitions move to the others, which restore them from engram-log (from
// where each stood, if it held them before); nothing is lost or doubled (each organisation's
// digest equals a single store's over the same log), every answered save is there once, and
// every reminder went out once. The timers run every 300 ms on wall-clock time: what they did
// is on engram-log (reminder_sent records), so the single store repeats it exactly; the
// comparison leaves nothing out.
TEST_F(Cluster, ScalingOneToThreeToTwoWithAKillLosesAndDoublesNothing) {
  const auto events = evaluation::synthetic::dense_events(480, orgs_);
  const std::vector<std::string> timers{"timers.interval_ms=300"};
  start_extract();
  start_member("m1", timers);
  produce(events, 0, 120);
  ASSERT_TRUE(test::wait_until([&] { return settled(members_.at("m1"), {"m1"}, 120); }, 120s)) << logs();

  // 1 -> 3, with saves through every member while the partitions move.
  start_member("m2", timers);
  start_member("m3", timers);
  produce(events, 120, 240);
  std::map<std::string, std::pair<std::string, std::string>> saved;  // id -> (org, codeword)
  int n = 0;
  auto save_round = [&](const std::set<std::string>& through) {
    for (const auto& name : through)
      for (int k = 0; k < 4; ++k, ++n) {
        const auto& org = orgs_[(n * 5) % orgs_.size()];
        const auto word = "codeword" + std::to_string(1000 + n);
        auto id = save(members_.at(name), org,
                       "The " + word + " policy applies to every vendor contract " + std::to_string(n) + " we sign.");
        ASSERT_FALSE(id.empty()) << org << " via " << name << "\n" << logs();
        ASSERT_FALSE(saved.count(id)) << id;
        saved[id] = {org, word};
      }
  };
  const std::set<std::string> three{"m1", "m2", "m3"};
  save_round(three);
  ASSERT_TRUE(test::wait_until([&] { return settled(members_.at("m2"), three, 240 + long(saved.size())); }, 120s))
      << view(members_.at("m2")).dump() << "\n"
      << logs();
  save_round(three);

  // 3 -> 2: a kill -9 of the member owning most, once it has applied part of a new burst.
  std::string victim = "m1";
  std::size_t most = 0;
  for (const auto& [name, m] : members_)
    if (auto owned = view(m)["members"]; owned.is_array())
      for (const auto& rec : owned)
        if (rec["member"] == name && rec["owned"].size() > most) {
          most = rec["owned"].size();
          victim = name;
        }
  const long before = test::events_applied(members_.at(victim).port);
  produce(events, 240, 360);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(members_.at(victim).port) > before + 3; }, 60s, 2ms))
      << logs();
  members_.at(victim).process->kill9();
  std::set<std::string> two = three;
  two.erase(victim);
  save_round(two);
  const auto& survivor = members_.at(*two.begin());
  ASSERT_TRUE(test::wait_until([&] { return settled(survivor, two, 360 + long(saved.size())); }, 180s))
      << view(survivor).dump() << "\n"
      << logs();
  produce(events, 360, 480);
  save_round(two);
  ASSERT_TRUE(test::wait_until([&] { return settled(survivor, two, 480 + long(saved.size())); }, 180s)) << logs();

  // The timers caught up: two whole rounds after everything was applied on each survivor
  // (every item due then got its reminder), and the survivors applied the log to its end.
  std::map<std::string, double> rounds;
  for (const auto& name : two)
    rounds[name] = test::metric(members_.at(name).port, "engram_timer_rounds_total");
  ASSERT_TRUE(test::wait_until(
      [&] {
        for (const auto& name : two)
          if (test::metric(members_.at(name).port, "engram_timer_rounds_total") < rounds[name] + 2)
            return false;
        return true;
      },
      120s))
      << logs();
  ASSERT_TRUE(test::wait_until([&] { return applied_whole_log(two); }, 60s)) << logs();

  // Every answered save, once: recall by its codeword finds exactly one entry with it.
  for (const auto& [id, what] : saved) {
    auto r = test::mcp_call(survivor.port, token_of(what.first), "recall_knowledge",
                            {{"query", what.second}, {"limit", 20}});
    ASSERT_FALSE(r.contains("error")) << r;
    int with_word = 0;
    bool found = false;
    for (const auto& e : r["results"]) {
      with_word += e.dump().find(what.second + " ") != std::string::npos;
      found = found || e["id"] == id;
    }
    EXPECT_TRUE(found) << id << " " << r.dump();
    EXPECT_EQ(with_word, 1) << what.second << " " << r.dump();
  }
  std::printf("%zu saves answered (%zu retry answers on the way); killed %s\n", saved.size(), retries_, victim.c_str());

  // Every reminder once on engram-reminders.
  const auto sent_count = test::topic_size(brokers(), "engram-reminders");
  auto sent = test::consume_all(brokers(), "engram-reminders", std::size_t(sent_count), 30s);
  ASSERT_EQ(std::int64_t(sent.size()), sent_count);
  std::map<std::string, int> by_id;
  for (const auto& r : sent)
    ++by_id[r.headers.at(ingest::reminder_id_header)];
  for (const auto& [id, count] : by_id)
    EXPECT_EQ(count, 1) << id;
  EXPECT_GT(by_id.size(), 100u) << "the dense mail's action items are due";

  std::map<std::string, std::string> owners;
  for (const auto& o : orgs_)
    owners[o] = owner_of(survivor, o);
  for (const auto& name : two)
    ASSERT_EQ(members_.at(name).process->terminate(15s), 0) << logs();
  std::map<std::string, std::map<std::string, std::string>> by_member;
  for (const auto& name : two)
    by_member[name] = digests(dir_.sub(name));
  const auto single = single_store_digests(480 + long(saved.size()));
  for (const auto& o : orgs_)
    EXPECT_EQ(by_member[owners[o]][o], single.at(o)) << o << " on " << owners[o];
  // Every due item got its reminder: the single store, which applied every reminder_sent
  // record, has none left due.
  auto control = storage::open_graph_store({dir_.sub("control"), /*read_only=*/true});
  ASSERT_TRUE(control) << control.error();
  const std::int64_t now_ms = std::int64_t(std::time(nullptr)) * 1000;
  EXPECT_TRUE((*control)->due_reminders(now_ms, 10000).empty());
  EXPECT_EQ(extract_->terminate(15s), 0);
}

// A member taking over partitions restores them from engram-log; until one has caught up,
// its organisations are answered "retry after N s" (MCP: JSON-RPC -32002; /v1: 503 with
// Retry-After), through any member, never with a partial answer; organisations on ready
// partitions are answered meanwhile. Its restore is slowed (ENGRAM_FAULT_APPLY_DELAY_MS) so
// that the test, which watches the member's own figures, asks while it is restoring.
TEST_F(Cluster, ARestoringMemberAnswersRetryUntilItCaughtUp) {
  const auto events = evaluation::synthetic::dense_events(240, orgs_);
  start_extract();
  start_member("m1");
  produce(events, 0, events.size());
  ASSERT_TRUE(test::wait_until([&] { return settled(members_.at("m1"), {"m1"}, 240); }, 120s)) << logs();
  std::map<std::string, std::vector<std::string>> before;
  for (const auto& org : orgs_)
    before[org] = test::recall_ids(members_.at("m1").port, token_of(org), "budget rollout contract");

  ::setenv("ENGRAM_FAULT_APPLY_DELAY_MS", "150", 1);
  auto& m2 = start_member("m2");
  ::unsetenv("ENGRAM_FAULT_APPLY_DELAY_MS");
  // A partition m2 restores, with records enough left that it cannot finish while asked.
  std::int32_t restoring = -1;
  ASSERT_TRUE(test::wait_until(
      [&] {
        const auto text = test::get(m2.port, "/metrics", nullptr, "");
        for (int p = 0; p < partitions && restoring < 0; ++p) {
          const auto series = "engram_restore_remaining_records{partition=\"" + std::to_string(p) + "\"} ";
          auto at = text.find(series);
          if (at != std::string::npos && std::atof(text.c_str() + at + series.size()) >= 8)
            restoring = p;
        }
        return restoring >= 0;
      },
      60s, 5ms))
      << logs();
  std::string org, ready_org;
  for (const auto& o : orgs_)
    if (ingest::partition_of(o, partitions) == restoring)
      org = o;
  const auto recall =
      json{{"jsonrpc", "2.0"},
           {"id", "r1"},
           {"method", "tools/call"},
           {"params", {{"name", "recall_knowledge"}, {"arguments", {{"query", "budget rollout contract"}}}}}}
          .dump();
  for (const auto* through : {&m2, &members_.at("m1")}) {
    auto r = net::fetch("POST", "http://127.0.0.1:" + std::to_string(through->port) + "/mcp", recall,
                        {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token_of(org)}}, 30s);
    ASSERT_EQ(r.status, 200) << r.body;
    auto j = json::parse(r.body);
    EXPECT_EQ(j["id"], "r1");
    EXPECT_EQ(j["error"]["code"], -32002) << through->name << ": " << r.body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find("being restored"), std::string::npos) << r.body;
    EXPECT_EQ(j["error"]["data"]["partition"], restoring);
    EXPECT_GE(j["error"]["data"]["retryAfterSeconds"].get<int>(), 1);
    EXPECT_FALSE(r.retry_after.empty()) << through->name;
    auto rest = net::fetch("GET", "http://127.0.0.1:" + std::to_string(through->port) + "/v1/stats", {},
                           {{"Authorization", "Bearer " + token_of(org)}}, 30s);
    EXPECT_EQ(rest.status, 503) << through->name << ": " << rest.body;
    EXPECT_FALSE(rest.retry_after.empty());
  }
  // An organisation m1 still owns is answered meanwhile, through m2 too.
  for (const auto& o : orgs_)
    if (test::get(members_.at("m1").port, "/metrics", nullptr, "")
            .find("engram_partition_state{partition=\"" + std::to_string(ingest::partition_of(o, partitions)) +
                  "\",state=\"ready\"} 1") != std::string::npos)
      ready_org = o;
  ASSERT_FALSE(ready_org.empty());
  EXPECT_EQ(test::recall_ids(m2.port, token_of(ready_org), "budget rollout contract"), before[ready_org]);

  // Once m2 caught up: the complete answers, as m1 gave them before.
  ASSERT_TRUE(test::wait_until([&] { return settled(m2, {"m1", "m2"}, 240); }, 180s)) << logs();
  for (const auto& o : orgs_)
    for (const auto& [name, m] : members_)
      EXPECT_EQ(test::recall_ids(m.port, token_of(o), "budget rollout contract"), before[o]) << o << " via " << name;
  EXPECT_GT(view(m2)["retried"].get<long>(), 0);
}

// Warm standbys (store.standby_replicas: 1): each of two members follows the other's
// partitions. After a kill -9 of one, the other takes its partitions over with a catch-up of
// only what its standby had not read: for each, reading starts where the standby stood (at
// or past the partition's end before the kill, never 0) and every record from there is read
// once. The content equals a single store's.
TEST_F(Cluster, AStandbyTakesOverWithACatchUpOfWhatItHadNotFollowed) {
  const auto events = evaluation::synthetic::dense_events(360, orgs_);
  start_extract();
  const std::vector<std::string> standby{"store.standby_replicas=1"};
  start_member("m1", standby);
  start_member("m2", standby);
  produce(events, 0, 240);
  // Both own their share, and each follows all of the other's (its standby lag is 0 on each).
  auto standby_lags = [&](const member& m) {
    std::map<std::int32_t, double> out;
    const auto text = test::get(m.port, "/metrics", nullptr, "");
    for (int p = 0; p < partitions; ++p) {
      const auto series = "engram_standby_lag{partition=\"" + std::to_string(p) + "\"} ";
      if (auto at = text.find(series); at != std::string::npos)
        out[p] = std::atof(text.c_str() + at + series.size());
    }
    return out;
  };
  auto& m1 = members_.at("m1");
  auto& m2 = members_.at("m2");
  ASSERT_TRUE(test::wait_until(
      [&] {
        if (!settled(m1, {"m1", "m2"}, 240))
          return false;
        for (const auto* m : {&m1, &m2}) {
          const auto other = owned_by(m == &m1 ? m2 : m1);
          auto lags = standby_lags(*m);
          std::set<std::int32_t> followed;
          for (const auto& [p, lag] : lags)
            if (lag == 0)
              followed.insert(p);
          if (followed != other)
            return false;
        }
        return true;
      },
      120s))
      << json(standby_lags(m1)).dump() << " " << json(owned_by(m2)).dump() << " " << json(standby_lags(m2)).dump()
      << " " << json(owned_by(m1)).dump() << "\n"
      << logs();
  const auto taken_over = owned_by(m1);
  ASSERT_FALSE(taken_over.empty());
  std::map<std::int32_t, std::int64_t> end_before;
  for (const auto& r : *ingest::partition_ranges(brokers(), {"engram-log"}))
    end_before[r.partition] = r.end;
  // m2 followed m1's partitions to their end: its store holds their offsets already.
  const auto seen_by_m2 = view(m2);
  for (const auto& row : seen_by_m2["partitions"])
    if (taken_over.count(row["partition"].get<std::int32_t>()))
      for (const auto& sb : row["standbys"])
        EXPECT_EQ(sb["member"], "m2") << row.dump();

  m1.process->kill9();
  produce(events, 240, 360);
  ASSERT_TRUE(test::wait_until([&] { return settled(m2, {"m2"}, 360); }, 180s)) << logs();
  ASSERT_TRUE(test::wait_until([&] { return applied_whole_log({"m2"}); }, 60s)) << logs();
  auto stats = json::parse(test::get(m2.port, "/v1/stats"));
  std::size_t checked = 0;
  for (const auto& row : stats["partitions"]) {
    const auto p = row["partition"].get<std::int32_t>();
    if (!taken_over.count(p))
      continue;
    ++checked;
    EXPECT_GE(row["assignedAt"].get<std::int64_t>(), end_before[p])
        << "partition " << p << ": the catch-up starts where the standby stood";
    EXPECT_GT(end_before[p], 0) << p;
    EXPECT_EQ(row["readSinceAssignment"].get<std::int64_t>(),
              row["appliedOffset"].get<std::int64_t>() - row["assignedAt"].get<std::int64_t>())
        << "partition " << p << ": each record past the standby's position read once: " << row.dump();
    std::printf("partition %d: the standby stood at %lld (end before the kill %lld), read %lld after taking over\n", p,
                static_cast<long long>(row["assignedAt"].get<std::int64_t>()), static_cast<long long>(end_before[p]),
                static_cast<long long>(row["readSinceAssignment"].get<std::int64_t>()));
  }
  EXPECT_EQ(checked, taken_over.size());

  ASSERT_EQ(m2.process->terminate(15s), 0) << logs();
  expect_every_organisation_as_a_single_store("m2", 360);
}

// engram-log's partition count is part of every organisation's address: a member whose
// store was built with 12 partitions refuses to start when the topic has another count.
// A member lets go of what it no longer owns (store.drop_after_ms): m1 applies everything
// alone, m2 joins and takes half; m1 drops the organisations of the partitions it gave up
// (its store then holds exactly its own), answers stay the same through either member, and
// when the partitions come back (m1 alone again) it restores them from engram-log: every
// organisation's content equals a single store's.
TEST_F(Cluster, AMemberDropsWhatItLetGoAndRestoresItWhenItComesBack) {
  const auto events = evaluation::synthetic::dense_events(240, orgs_);
  const std::vector<std::string> drop_soon{"store.drop_after_ms=500"};
  start_extract();
  auto& m1 = start_member("m1", drop_soon);
  produce(events, 0, events.size());
  ASSERT_TRUE(test::wait_until([&] { return settled(m1, {"m1"}, 240); }, 120s)) << logs();
  std::map<std::string, std::vector<std::string>> before;
  for (const auto& org : orgs_)
    before[org] = test::recall_ids(m1.port, token_of(org), "budget rollout contract");

  auto& m2 = start_member("m2");
  ASSERT_TRUE(test::wait_until([&] { return settled(m2, {"m1", "m2"}, 240); }, 180s)) << logs();
  const auto given_up = owned_by(m2);
  ASSERT_FALSE(given_up.empty());
  // m1 waits for nothing more to drop, and dropped at least what m2 took.
  ASSERT_TRUE(test::wait_until(
      [&] {
        const auto v = view(m1);
        return settled(m1, {"m1", "m2"}, 240) && v["waitingToDrop"].empty() &&
               v["dropped"].get<std::size_t>() >= given_up.size() && owned_by(m2) == given_up &&
               v["dropsCompacted"].get<std::size_t>() >= 1;
      },
      120s))
      << view(m1).dump() << "\n"
      << logs();
  EXPECT_GE(test::metric(m1.port, "engram_cluster{figure=\"dropped\"}"), double(given_up.size()));
  for (const auto& org : orgs_)
    for (const auto* m : {&m1, &m2})
      EXPECT_EQ(test::recall_ids(m->port, token_of(org), "budget rollout contract"), before[org])
          << org << " via " << m->name;
  const auto kept = owned_by(m1);

  // m1's store holds exactly the organisations of its own partitions.
  ASSERT_EQ(m1.process->terminate(15s), 0) << logs();
  {
    auto store = storage::open_graph_store({dir_.sub("m1"), /*read_only=*/true});
    ASSERT_TRUE(store) << store.error();
    std::vector<std::string> expected;
    for (const auto& org : orgs_)
      if (kept.count(ingest::partition_of(org, partitions)))
        expected.push_back(org);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ((*store)->held_organizations(), expected);
    for (const auto& [p, _] : (*store)->offsets("engram-log"))
      EXPECT_TRUE(kept.count(p)) << "partition " << p << " was let go: its position goes with it";
  }
  // m2 takes everything, then goes; m1 comes back alone and restores what it had dropped.
  ASSERT_TRUE(test::wait_until([&] { return settled(m2, {"m2"}, 240); }, 180s)) << logs();
  ASSERT_EQ(m2.process->terminate(15s), 0) << logs();
  members_.erase("m2");
  auto& again = start_member("m1", drop_soon);
  ASSERT_TRUE(test::wait_until([&] { return settled(again, {"m1"}, 240); }, 180s)) << logs();
  for (const auto& org : orgs_)
    EXPECT_EQ(test::recall_ids(again.port, token_of(org), "budget rollout contract"), before[org]) << org;
  ASSERT_EQ(again.process->terminate(15s), 0) << logs();
  expect_every_organisation_as_a_single_store("m1", 240);
}

TEST_F(Cluster, AMemberRefusesAStoreBuiltWithAnotherPartitionCount) {
  auto& m = start_member("m1");
  ASSERT_EQ(m.process->terminate(15s), 0) << logs();
  EXPECT_EQ(test::file_text(dir_.sub("m1/cluster-partitions")), "engram-log 12\n");
  auto other = test::start_broker(4);
  test::engramd again(
      test::engramd_args(other->bootstrap(), dir_.sub("m1"),
                         {"roles=[store]", "store.cluster=true", "store.advertised_url=http://127.0.0.1:0", tokens_}),
      dir_.sub("again.log"));
  ASSERT_TRUE(test::wait_until([&] { return !again.alive(); }, 60s)) << test::tail(dir_.sub("again.log"));
  EXPECT_NE(again.exit_code(), 0);
  const auto log = test::file_text(dir_.sub("again.log"));
  EXPECT_NE(log.find("engram-log has 4 partitions, but this store was built when it had 12"), std::string::npos) << log;
}

// The "retry after N s" of a restoring partition: its records left at ~400 records/s, 1 to 60.
TEST(ClusterRetry, RetryAfterFollowsTheRecordsLeftAtTheRestoreRate) {
  EXPECT_EQ(engine::retry_after_seconds(-5), 1);
  EXPECT_EQ(engine::retry_after_seconds(0), 1);
  EXPECT_EQ(engine::retry_after_seconds(1), 1);
  EXPECT_EQ(engine::retry_after_seconds(400), 1);
  EXPECT_EQ(engine::retry_after_seconds(401), 2);
  EXPECT_EQ(engine::retry_after_seconds(4000), 10);
  EXPECT_EQ(engine::retry_after_seconds(23999), 60);
  EXPECT_EQ(engine::retry_after_seconds(1000000000), 60);
}

}  // namespace
