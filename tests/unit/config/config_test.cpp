#include "config/config.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace {

using engram::config::load;

/// The load error, or "" when the file loaded: the tests look for words in it either way.
std::string error_of(const engram::result<engram::config::engram_config>& r) {
  return r.ok() ? std::string() : r.error();
}

class ConfigTest : public ::testing::Test {
protected:
  std::string write(const std::string& yaml) {
    path_ = std::filesystem::temp_directory_path() /
            ("engram-config-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
    std::ofstream(path_) << yaml;
    return path_.string();
  }
  ~ConfigTest() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(ConfigTest, EmbeddedDefaultFileLoadsWithDesignDefaults) {
  auto r = load(std::string(ENGRAM_SOURCE_DIR) + "/config/engram.yaml", {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_TRUE(r->kafka.embedded());
  EXPECT_EQ(r->kafka.group_id, "engram");
  EXPECT_EQ(r->kafka.topics.inbound, "inbound-messages");
  EXPECT_EQ(r->kafka.topics.log, "engram-log");
  EXPECT_EQ(r->kafka.topics.reminders, "engram-reminders");
  EXPECT_EQ(r->kafka.topics.dead_letter, "engram-dlq");
  EXPECT_EQ(r->storage.path, "./data/engram");
  EXPECT_EQ(r->storage.memory_mb, 32u);
  EXPECT_EQ(r->storage.snapshot_every, 5000u);
  EXPECT_EQ(r->http.listen, "127.0.0.1:8700");
  EXPECT_TRUE(r->samples.load);
  EXPECT_EQ(r->ingest.max_event_bytes, 1048576u);
  EXPECT_EQ(r->embedder.kind, "use-lite-int8");
  EXPECT_EQ(r->embedder.isa, "auto");
}

TEST_F(ConfigTest, EmptyFileGivesDefaults) {
  auto r = load(write(""), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->kafka.brokers, "embedded");
}

TEST_F(ConfigTest, UnknownKeyIsAnErrorThatNamesIt) {
  auto r = load(write("kafka:\n  brokerz: x\n"), {}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(error_of(r).find("'kafka.brokerz'"), std::string::npos) << error_of(r);
  auto top = load(write("nonsense: 1\n"), {}, nullptr);
  EXPECT_NE(error_of(top).find("'nonsense'"), std::string::npos) << error_of(top);
}

TEST_F(ConfigTest, SetOverridesWinOverFileAndEnvironment) {
  std::string env_brokers = "ENGRAM_KAFKA__BROKERS=env:9092";
  std::string env_group = "ENGRAM_KAFKA__GROUP_ID=from-env";
  std::string env_script = "ENGRAM_JOBS=4";  // not config: no "__"
  char* env[] = {env_brokers.data(), env_group.data(), env_script.data(), nullptr};
  auto r = load(write("kafka:\n  brokers: file:9092\n"), {"kafka.brokers=cli:9092", "samples.load=false"}, env);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->kafka.brokers, "cli:9092");
  EXPECT_EQ(r->kafka.group_id, "from-env");
  EXPECT_FALSE(r->samples.load);
}

TEST_F(ConfigTest, RdkafkaPropertiesKeepTheirDots) {
  std::string env_prop = "ENGRAM_KAFKA__RDKAFKA__FETCH_WAIT_MAX_MS=50";
  char* env[] = {env_prop.data(), nullptr};
  auto r =
      load(write("kafka:\n  rdkafka:\n    socket.timeout.ms: 1000\n"), {"kafka.rdkafka.session.timeout.ms=6000"}, env);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->kafka.rdkafka.at("session.timeout.ms"), "6000");
  EXPECT_EQ(r->kafka.rdkafka.at("socket.timeout.ms"), "1000");
  EXPECT_EQ(r->kafka.rdkafka.at("fetch.wait.max.ms"), "50");
}

TEST_F(ConfigTest, UnknownKeyFromEnvironmentNamesTheVariable) {
  std::string env_bad = "ENGRAM_KAFKA__BROKERZ=x";
  char* env[] = {env_bad.data(), nullptr};
  auto r = load(write(""), {}, env);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(error_of(r).find("'kafka.brokerz'"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, WrongTypesAndRangesNameTheKey) {
  auto r = load(write("samples:\n  load: maybe\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'samples.load'"), std::string::npos) << error_of(r);
  r = load(write("ingest:\n  max_event_bytes: -5\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'ingest.max_event_bytes'"), std::string::npos) << error_of(r);
  r = load(write("ingest:\n  max_event_bytes: 10\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("between 1024"), std::string::npos) << error_of(r);
  r = load(write("storage:\n  memory_mb: 4\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'storage.memory_mb'"), std::string::npos) << error_of(r);
  r = load(write("storage:\n  memory_mb: 256\n  snapshot_every: 0\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.memory_mb, 256u);
  EXPECT_EQ(r->storage.snapshot_every, 0u) << "0: snapshots only at a stop";
  r = load(write("storage:\n  snapshot_every: -1\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'storage.snapshot_every'"), std::string::npos) << error_of(r);
  r = load(write("http:\n  listen: nowhere\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'http.listen'"), std::string::npos) << error_of(r);
  r = load(write("kafka:\n  topics:\n    log: same\n    inbound: same\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("distinct"), std::string::npos) << error_of(r);
  r = load(write("embedder:\n  isa: sse2\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'embedder.isa'"), std::string::npos) << error_of(r);
  EXPECT_NE(error_of(r).find("portable"), std::string::npos) << error_of(r);
  r = load(write("embedder:\n  kind: use-lite-int4\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'embedder.kind'"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, AClusteredStoreNeedsASharedBrokerAndAnAddress) {
  auto r = load(write(""), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_FALSE(r->store.cluster);
  EXPECT_EQ(r->kafka.topics.members, "engram-members");
  r = load(write("store:\n  cluster: true\n  advertised_url: http://10.0.0.1:8700\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'store.cluster'"), std::string::npos) << error_of(r);
  EXPECT_NE(error_of(r).find("embedded"), std::string::npos) << error_of(r);
  r = load(write("kafka:\n  brokers: k1:9092\nstore:\n  cluster: true\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'store.advertised_url'"), std::string::npos) << error_of(r);
  r = load(write("kafka:\n  brokers: k1:9092\nstore:\n  cluster: true\n  advertised_url: http://10.0.0.1:8700\n"), {},
           nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->store.name(), "http://10.0.0.1:8700");
  r = load(write("store:\n  standby_replicas: 1\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->store.standby_replicas, 1u);
  r = load(write("store:\n  standby_replicas: 17\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'store.standby_replicas'"), std::string::npos) << error_of(r);
  EXPECT_EQ(engram::config::engram_config{}.store.drop_after_ms, 300000u);
  r = load(write("store:\n  drop_after_ms: 0\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->store.drop_after_ms, 0u);
  r = load(write("store:\n  drop_after_ms: -1\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'store.drop_after_ms'"), std::string::npos) << error_of(r);
  r = load(write("kafka:\n  topics:\n    members: engram-log\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("distinct"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, EntityTypeParentsAreAMapOfNames) {
  auto r = load(write("entities:\n  type_parents: {saas_company: company, fintech: saas_company}\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->entities.type_parents,
            (std::map<std::string, std::string>{{"saas_company", "company"}, {"fintech", "saas_company"}}));
  r = load(write("entities:\n  type_parents: [company]\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'entities.type_parents'"), std::string::npos) << error_of(r);
  r = load(write("entities:\n  type_parents: {a: ''}\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("entities.type_parents.a"), std::string::npos) << error_of(r);
  r = load(write("entities:\n  parents: {}\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("'entities.parents'"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, BulkMailPolicyAndTokenBundlesAreRead) {
  auto r = load(write("extraction:\n  bulk: low_confidence\nauth:\n  tokens:\n    - {token: 0123456789abcdef0123, "
                      "organization_id: acme, scopes: [read], bundles: [legal-kb, shop]}\n"),
                {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->extraction.bulk, "low_confidence");
  EXPECT_EQ(r->auth.tokens.at(0).bundles, (std::vector<std::string>{"legal-kb", "shop"}));
  EXPECT_EQ(load(write(""), {}, nullptr)->extraction.bulk, "skip");
  r = load(write("extraction:\n  bulk: drop\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("extraction.bulk"), std::string::npos) << error_of(r);
  EXPECT_NE(error_of(r).find("must be skip, low_confidence or keep"), std::string::npos) << error_of(r);
  r = load(write("auth:\n  tokens:\n    - {token: 0123456789abcdef0123, organization_id: acme, bundles: shop}\n"), {},
           nullptr);
  EXPECT_NE(error_of(r).find("bundles"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, TheTypeModelIsOnByDefaultAndCanBeTurnedOff) {
  EXPECT_TRUE(load(write(""), {}, nullptr)->extraction.type_model);
  auto r = load(write("extraction:\n  type_model: false\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_FALSE(r->extraction.type_model);
  r = load(write("extraction:\n  type_model: maybe\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("extraction.type_model"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, TheRelationModelIsOffByDefaultAndCanBeTurnedOn) {
  EXPECT_FALSE(load(write(""), {}, nullptr)->extraction.relation_model);
  auto r = load(write("extraction:\n  relation_model: true\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_TRUE(r->extraction.relation_model);
  r = load(write("extraction:\n  relation_model: 2\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("extraction.relation_model"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, PassagesAreOnByDefaultAndCanBeTurnedOff) {
  EXPECT_TRUE(load(write(""), {}, nullptr)->extraction.passages);
  auto r = load(write("extraction:\n  passages: false\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_FALSE(r->extraction.passages);
  r = load(write("extraction:\n  passages: 3\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("extraction.passages"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, HybridRecallIsOffByDefaultAndCanBeTurnedOn) {
  EXPECT_FALSE(load(write(""), {}, nullptr)->recall.graph_expansion);
  auto r = load(write("recall:\n  graph_expansion: true\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_TRUE(r->recall.graph_expansion);
  r = load(write("recall:\n  graph_expansions: true\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("recall.graph_expansions"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, TheQueryHeadAndTheAnswerFloorHaveDefaultsAndBadValuesNameTheirKey) {
  auto d = load(write(""), {}, nullptr);
  ASSERT_TRUE(d.ok()) << error_of(d);
  EXPECT_EQ(d->recall.query_head, "builtin");
  EXPECT_DOUBLE_EQ(d->recall.answer_floor, 0.25);
  auto r = load(write("recall:\n  query_head: none\n  answer_floor: 0\n"), {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->recall.query_head, "none");
  EXPECT_DOUBLE_EQ(r->recall.answer_floor, 0.0);
  r = load(write("recall:\n  answer_floor: 1.5\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("recall.answer_floor"), std::string::npos) << error_of(r);
  r = load(write("recall:\n  query_head: ''\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("recall.query_head"), std::string::npos) << error_of(r);
}

TEST_F(ConfigTest, AuthTokensAreReadAndCheckedAndAnonymousNeedsLoopback) {
  auto r = load(write("auth:\n  tokens:\n    - {token: 0123456789abcdef0123, organization_id: acme, scopes: [read]}\n"
                      "  anonymous_organization: null\n"),
                {}, nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  ASSERT_EQ(r->auth.tokens.size(), 1u);
  EXPECT_EQ(r->auth.tokens[0].organization_id, "acme");
  EXPECT_EQ(r->auth.tokens[0].scopes, std::vector<std::string>{"read"});
  r = load(write("auth:\n  tokens:\n    - {token: short, organization_id: acme, scopes: [read]}\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("auth.tokens[0].token"), std::string::npos) << error_of(r);
  r = load(write("auth:\n  tokens:\n    - {token: 0123456789abcdef0123, organization_id: acme, scopes: [root]}\n"), {},
           nullptr);
  EXPECT_NE(error_of(r).find("unknown scope 'root'"), std::string::npos) << error_of(r);
  r = load(write("http:\n  listen: 0.0.0.0:8700\nauth:\n  anonymous_organization: acme\n"), {}, nullptr);
  EXPECT_NE(error_of(r).find("auth.anonymous_organization"), std::string::npos) << error_of(r);
  r = load(write("auth:\n  anonymous_organization: acme\n"), {}, nullptr);
  EXPECT_TRUE(r.ok()) << error_of(r);
  // A token may be given as its SHA-256 instead (no secret in the file); one of the two.
  const std::string digest(64, 'a');
  r = load(write("auth:\n  tokens:\n    - {token_sha256: " + digest + ", organization_id: acme, scopes: [read]}\n"), {},
           nullptr);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->auth.tokens[0].token_sha256, digest);
  EXPECT_TRUE(r->auth.tokens[0].token.empty());
  for (const auto& [entry, says] : std::vector<std::pair<std::string, std::string>>{
           {"{token_sha256: " + digest + ", token: 0123456789abcdef0123, organization_id: acme}", "not both"},
           {"{organization_id: acme, scopes: [read]}", "not neither"},
           {"{token_sha256: ABC, organization_id: acme}", "64 lower-case hex digits"},
           {"{token_sha256: " + std::string(64, 'g') + ", organization_id: acme}", "64 lower-case hex digits"}}) {
    r = load(write("auth:\n  tokens:\n    - " + entry + "\n"), {}, nullptr);
    ASSERT_FALSE(r.ok()) << entry;
    EXPECT_NE(error_of(r).find("auth.tokens[0].token"), std::string::npos) << error_of(r);
    EXPECT_NE(error_of(r).find(says), std::string::npos) << error_of(r);
  }
}

TEST_F(ConfigTest, MissingFileAndBadOverrideAreClearErrors) {
  auto r = load("/nonexistent/engram.yaml", {}, nullptr);
  EXPECT_NE(error_of(r).find("cannot read config file '/nonexistent/engram.yaml'"), std::string::npos);
  r = load(write(""), {"kafka.brokers"}, nullptr);
  EXPECT_NE(error_of(r).find("expected key=value"), std::string::npos) << error_of(r);
  r = load(write(""), {"kafka..brokers=x"}, nullptr);
  EXPECT_NE(error_of(r).find("not a valid key"), std::string::npos) << error_of(r);
}

}  // namespace

namespace {

TEST_F(ConfigTest, AcceptGapsNamesPartitionsAndIsEmptyByDefault) {
  auto none = load(std::string(ENGRAM_SOURCE_DIR) + "/config/engram.yaml", {}, nullptr);
  ASSERT_TRUE(none.ok()) << error_of(none);
  EXPECT_TRUE(none->ingest.accept_gaps.empty());
  EXPECT_FALSE(none->ingest.accepts_gap("engram-log", 0));
  EXPECT_EQ(none->kafka.min_inbound_retention_ms, 604800000u);

  auto list = load(write("ingest:\n  accept_gaps: [engram-log:3, inbound-messages:0]\n"), {}, nullptr);
  ASSERT_TRUE(list.ok()) << error_of(list);
  EXPECT_TRUE(list->ingest.accepts_gap("engram-log", 3));
  EXPECT_TRUE(list->ingest.accepts_gap("inbound-messages", 0));
  EXPECT_FALSE(list->ingest.accepts_gap("engram-log", 0));
  EXPECT_FALSE(list->ingest.accepts_gap("inbound-messages", 3));

  auto one = load(write(""), {"ingest.accept_gaps=engram-log:12"}, nullptr);
  ASSERT_TRUE(one.ok()) << error_of(one);
  EXPECT_TRUE(one->ingest.accepts_gap("engram-log", 12));

  for (const char* bad : {"engram-log", "engram-log:", ":3", "engram-log:x", "engram-log:-1"}) {
    auto r = load(write(""), {std::string("ingest.accept_gaps=") + bad}, nullptr);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(error_of(r).find("'ingest.accept_gaps'"), std::string::npos) << error_of(r);
    EXPECT_NE(error_of(r).find("topic:partition"), std::string::npos) << error_of(r);
  }
}

}  // namespace

namespace {

TEST_F(ConfigTest, RetentionIsForEverByDefaultAndSetPerOrganisation) {
  auto none = load(std::string(ENGRAM_SOURCE_DIR) + "/config/engram.yaml", {}, nullptr);
  ASSERT_TRUE(none.ok()) << error_of(none);
  EXPECT_EQ(none->retention.days_for("acme"), 0u);
  EXPECT_TRUE(none->kafka.create_key_topic);

  auto set = load(write("retention:\n  messages_days: 365\n  organizations: {acme: 30, globex: 0}\n"), {}, nullptr);
  ASSERT_TRUE(set.ok()) << error_of(set);
  EXPECT_EQ(set->retention.days_for("acme"), 30u);
  EXPECT_EQ(set->retention.days_for("globex"), 0u);
  EXPECT_EQ(set->retention.days_for("initech"), 365u);

  auto one = load(write(""), {"retention.organizations.acme=7", "kafka.create_key_topic=false"}, nullptr);
  ASSERT_TRUE(one.ok()) << error_of(one);
  EXPECT_EQ(one->retention.days_for("acme"), 7u);
  EXPECT_FALSE(one->kafka.create_key_topic);

  auto bad = load(write(""), {"retention.organizations.acme=-3"}, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(error_of(bad).find("'retention.organizations.acme'"), std::string::npos) << error_of(bad);
  bad = load(write("retention:\n  organizations: [acme]\n"), {}, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(error_of(bad).find("organisation id to days"), std::string::npos) << error_of(bad);
}

}  // namespace
