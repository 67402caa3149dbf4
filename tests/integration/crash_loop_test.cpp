// A crash loop (label "long": tools/dev.sh test --long): engramd, a child process, is killed
// with SIGKILL 50 times while mail arrives and an agent saves, creates entities, merges
// branches and, in a few lives, applies a bundle, all at once. Each kill comes when the store
// has applied a random number more events than at the start of that life (observed through
// /v1/stats, never a sleep). At the end every event is applied once, everything an answer said
// was done is there, and the store's digest equals that of a replay of engram-log into a new
// store: the same records applied without interruption.
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <random>
#include <thread>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr int lives = 50;  // killed at the end of each
constexpr std::size_t total_events = 2000;
/// The agent's organisation gets no mail, and the bundle's (acme) neither: the mail applied
/// is the events of the mail's organisations. Each organisation has its own partition of
/// engram-log (librdkafka's crc32 % 16: initech 0, fabrikam 1, aperture 2, vandelay 3,
/// soylent 5, umbrella 6, globex 10, cyberdyne 11, agent-org 13, acme 14): the test broker
/// keeps ~5 MiB a partition. The agent's ~1,700 calls once shared fabrikam's partition, and
/// four mail organisations of 500 large events each (plus what the kills make the sequencer
/// append twice) once filled theirs: eight of 250 each now.
constexpr const char* agent = "crash-loop-agent-0123456789abcdef";
constexpr const char* bundler = "crash-loop-bundler-0123456789abcdef";
const std::vector<std::string> mail_organisations{"initech", "fabrikam", "aperture", "vandelay",
                                                  "soylent", "umbrella", "globex",   "cyberdyne"};

/// Mail events applied (the events of the mail's organisations in /v1/stats), -1 when
/// engramd does not answer.
long mail_applied(std::uint16_t port) {
  auto doc = json::parse(test::get(port, "/v1/stats"), nullptr, false);
  if (!doc.is_object() || !doc.contains("organizations"))
    return -1;
  long n = 0;
  for (const auto& o : doc["organizations"])
    if (std::find(mail_organisations.begin(), mail_organisations.end(), o.value("organizationId", "")) !=
        mail_organisations.end())
      n += o.value("events", 0L);
  return n;
}

/// What the agent was told was done: ids of saved and merged entries, entity names.
struct answered {
  std::mutex mutex;
  std::vector<std::string> entries;
  std::vector<std::string> entities;
  std::size_t calls = 0, errors = 0;
};

/// The agent of one life: saves, entity creations, a branch save then its merge, in turn,
/// until `stop`, at most 40 calls (the test broker keeps ~5 MiB of engram-log a partition, and
/// the agent's organisation is on one of its own). Calls that fail (engramd killed under them, not up yet)
/// are counted only.
void agent_loop(std::uint16_t port, int life, std::atomic<bool>& stop, answered& out) {
  for (int n = 0; !stop && n < 40; ++n) {
    const std::string tag = std::to_string(life) + "-" + std::to_string(n);
    json r;
    std::vector<std::string> entries, entities;
    switch (n % 3) {
      case 0:
        r = test::mcp_call(port, agent, "save_knowledge",
                           {{"type", "fact"},
                            {"title", "Crash loop fact " + tag},
                            {"content", "The crash loop fact number " + tag + " is kept."},
                            {"confidence", 0.9}});
        if (!r.contains("error") && r.contains("id"))
          entries.push_back(r["id"]);
        break;
      case 1:
        r = test::mcp_call(
            port, agent, "create_entities",
            {{"entities", {{{"name", "Crash Entity " + tag}, {"entityType", "project"}, {"observations", {tag}}}}}});
        if (!r.contains("error"))
          entities.push_back("Crash Entity " + tag);
        break;
      default: {
        const std::string branch = "crash-branch-" + tag;
        r = test::mcp_call(port, agent, "save_knowledge",
                           {{"type", "decision"},
                            {"title", "Crash loop decision " + tag},
                            {"content", "We decided on plan " + tag + " for the crash loop."},
                            {"confidence", 0.8},
                            {"branchId", branch}});
        if (!r.contains("error"))
          r = test::mcp_call(port, agent, "merge_branch", {{"branchId", branch}});
        if (!r.contains("error"))
          for (const auto& m : r["merged"])
            entries.push_back(m["id"]);
      }
    }
    std::lock_guard lock(out.mutex);
    ++out.calls;
    out.errors += r.contains("error") ? 1 : 0;
    out.entries.insert(out.entries.end(), entries.begin(), entries.end());
    out.entities.insert(out.entities.end(), entities.begin(), entities.end());
  }
}

TEST(CrashLoop, FiftyKillsAcrossMailSavesEntitiesBundlesAndMergesLoseNothingAndMatchAReplay) {
  auto events = evaluation::synthetic::events(total_events, 200, mail_organisations);
  unsigned seed = std::random_device{}();
  if (const char* s = std::getenv("CRASH_LOOP_SEED"))
    seed = static_cast<unsigned>(std::stoul(s));
  std::printf("seed %u (CRASH_LOOP_SEED reproduces the kill moments)\n", seed);
  std::mt19937 rng(seed);

  test::temp_dir dir("crash-loop");
  const auto log = dir.sub("engramd.log");
  auto broker = test::start_broker(16);
  // Every other life applies with two store appliers (the replay below with one): how many
  // there are changes nothing stored, across kills too.
  const auto args_with = [&](int appliers) {
    return test::engramd_args(broker->bootstrap(), dir.sub("store"),
                              {std::string("auth.tokens=[{token: ") + agent +
                                   ", organization_id: agent-org, scopes: [read, write]}, {token: " + bundler +
                                   ", organization_id: acme, scopes: [read, write, admin]}]",
                               "store.appliers=" + std::to_string(appliers)});
  };
  const auto args = args_with(1);

  const std::size_t burst = total_events / lives;
  std::uniform_int_distribution<long> step(1, long(burst) - 1);
  std::size_t produced = 0;
  answered done;
  bool bundle_applied = false;
  int bundle_tries = 0;
  std::vector<long> applied_at_kill;
  for (int life = 0; life < lives; ++life) {
    test::engramd engramd(args_with(1 + life % 2), log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::assigned(port); }, 60s)) << test::tail(log);
    const long at_start = mail_applied(port);
    std::atomic<bool> stop{false};
    std::thread client([&] { agent_loop(port, life, stop, done); });
    // The sample bundle from the fifth life on until one apply succeeds, while the rest goes on.
    std::future<int> bundle;
    if (life >= 5 && !bundle_applied) {
      ++bundle_tries;
      bundle = std::async(std::launch::async, [&] {
        std::string out;
        // Its wait for engramd bounded: killed under it, the apply waits no longer than that.
        return test::apply_sample_bundle(broker->bootstrap(), port, bundler, &out, " --timeout 20");
      });
    }
    std::vector<std::pair<std::string, std::string>> kv;
    for (std::size_t i = produced; i < std::min(total_events, produced + burst); ++i)
      kv.emplace_back(test::org_of(events[i]), events[i]);
    test::produce_raw(broker->bootstrap(), "inbound-messages", kv);
    produced = std::min(total_events, produced + burst);
    const long target = std::min(long(produced) - 1, std::max(at_start, 0L) + step(rng));
    ASSERT_TRUE(test::wait_until([&] { return mail_applied(port) >= target; }, 120s, 2ms))
        << "target " << target << "\n"
        << test::tail(log);
    ASSERT_TRUE(engramd.alive()) << test::tail(log);
    engramd.kill9();
    applied_at_kill.push_back(target);
    stop = true;
    client.join();
    if (bundle.valid())
      bundle_applied = bundle.get() == 0;
  }
  std::string kills;
  for (auto a : applied_at_kill)
    kills += std::to_string(a) + " ";
  std::printf("killed once applied: %s\n", kills.c_str());
  std::printf(
      "%d kills; agent calls %zu (%zu failed under a kill), %zu entries and %zu entities answered; "
      "bundle applied after %d tries\n",
      lives, done.calls, done.errors, done.entries.size(), done.entities.size(), bundle_tries);

  // The last life, uninterrupted: everything is applied once.
  {
    test::engramd engramd(args, log);
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return mail_applied(port) == long(total_events); }, 180s))
        << mail_applied(port) << "\n"
        << test::tail(log);
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(log);
    if (!bundle_applied) {
      std::string out;
      ASSERT_EQ(test::apply_sample_bundle(broker->bootstrap(), port, bundler, &out), 0) << out;
    }
    EXPECT_EQ(mail_applied(port), long(total_events));
    // Every answered entry and entity is there.
    std::size_t missing = 0;
    for (const auto& id : done.entries)
      if (test::mcp_call(port, agent, "get_knowledge", {{"id", id}}).contains("error"))
        ADD_FAILURE() << "answered entry " << id << " is missing (" << ++missing << ")";
    for (std::size_t i = 0; i < done.entities.size(); i += 50) {
      json names = json::array();
      for (std::size_t j = i; j < std::min(done.entities.size(), i + 50); ++j)
        names.push_back(done.entities[j]);
      auto nodes = test::mcp_call(port, agent, "open_nodes", {{"names", names}});
      ASSERT_FALSE(nodes.contains("error")) << nodes;
      EXPECT_EQ(nodes["entities"].size(), names.size()) << nodes.dump().substr(0, 400);
    }
    EXPECT_GT(done.entries.size(), 0u);
    EXPECT_GT(done.entities.size(), 0u);
    EXPECT_EQ(engramd.terminate(10s), 0) << test::tail(log);
  }

  // engram-log replayed into a new store, without a kill: the same graph.
  std::string out;
  ASSERT_EQ(test::run(std::string(ENGRAMCTL_PATH) +
                          " replay --config " ENGRAM_SOURCE_DIR "/config/engram.yaml --set kafka.brokers=" +
                          broker->bootstrap() + " --set embedder.model_path=" + test::model_path + " --into " +
                          dir.sub("replayed") + " 2>&1",
                      &out),
            0)
      << out;
  EXPECT_EQ(test::digest_of(dir.sub("store")), test::digest_of(dir.sub("replayed"))) << out;
}

}  // namespace
