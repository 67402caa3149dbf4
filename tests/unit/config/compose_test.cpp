// docker-compose.yml and its Dockerfile, checked without a Docker engine (none runs here):
// the services, that engramd reaches the Kafka service, the topics with their partitions
// and engram-log's unlimited retention, the ports, and that Prometheus scrapes engramd.

#include "config/config.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace {

using namespace engram;

const std::string root = ENGRAM_SOURCE_DIR;

std::string read(const std::string& path) {
  std::ifstream in(root + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// engramd's `--set k=v` arguments in the compose file.
std::map<std::string, std::string> sets(const YAML::Node& command) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < command.size(); ++i)
    if (command[i].as<std::string>() == "--set") {
      auto kv = command[i + 1].as<std::string>();
      out[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    }
  return out;
}

TEST(Compose, KafkaKraftEngramdAndPrometheusFitTogether) {
  const auto compose = YAML::LoadFile(root + "/docker-compose.yml");
  const auto services = compose["services"];
  for (const char* s : {"kafka", "kafka-init", "engramd", "prometheus"})
    ASSERT_TRUE(services[s]) << s;

  // Kafka: one KRaft node, listening on kafka:9092, no auto-created topics.
  const auto kenv = services["kafka"]["environment"];
  EXPECT_EQ(kenv["KAFKA_PROCESS_ROLES"].as<std::string>(), "broker,controller");
  EXPECT_EQ(kenv["KAFKA_ADVERTISED_LISTENERS"].as<std::string>(), "PLAINTEXT://kafka:9092");
  EXPECT_EQ(kenv["KAFKA_AUTO_CREATE_TOPICS_ENABLE"].as<std::string>(), "false");
  EXPECT_TRUE(services["kafka"]["healthcheck"]);

  // Topics: every topic engramd uses, 4 partitions, engram-log kept forever.
  const config::topics_config topics;
  const auto script = services["kafka-init"]["command"][0].as<std::string>();
  for (const auto& t : {topics.inbound, topics.log, topics.reminders, topics.dead_letter}) {
    auto at = script.find("--topic " + t + " ");
    ASSERT_NE(at, std::string::npos) << t;
    auto line = script.substr(at, script.find('\n', at) - at);
    EXPECT_NE(line.find("--partitions 4"), std::string::npos) << line;
    if (t == topics.log) {
      EXPECT_NE(line.find("retention.ms=-1"), std::string::npos) << line;
      EXPECT_NE(line.find("retention.bytes=-1"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(services["kafka-init"]["depends_on"]["kafka"]["condition"].as<std::string>(), "service_healthy");

  // engramd: built from this repository, pointed at the Kafka service, after the topics.
  const auto engramd = services["engramd"];
  const auto dockerfile = engramd["build"]["dockerfile"].as<std::string>();
  EXPECT_TRUE(std::filesystem::exists(root + "/" + dockerfile)) << dockerfile;
  EXPECT_EQ(engramd["depends_on"]["kafka-init"]["condition"].as<std::string>(), "service_completed_successfully");
  auto set = sets(engramd["command"]);
  EXPECT_EQ(set["kafka.brokers"], "kafka:9092");
  EXPECT_EQ(set["samples.load"], "false");
  EXPECT_EQ(set["http.listen"], "0.0.0.0:8700");
  ASSERT_TRUE(engramd["ports"]);
  EXPECT_EQ(engramd["ports"][0].as<std::string>(), "127.0.0.1:8700:8700");
  const auto volume = engramd["volumes"][0].as<std::string>();
  EXPECT_EQ(volume.substr(volume.find(':') + 1), set["storage.path"]);
  // The config the command names, with its overrides, is one engramd accepts.
  std::vector<std::string> overrides;
  for (const auto& [k, v] : set)
    overrides.push_back(k + "=" + v);
  char* no_env[] = {nullptr};
  auto loaded = config::load(root + "/" + engramd["command"][1].as<std::string>(), overrides, no_env);
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  const auto cfg = loaded.ok() ? loaded.value() : config::engram_config{};
  EXPECT_EQ(cfg.kafka.brokers, "kafka:9092");

  // The image carries the binaries, the config and the encoder where the config expects it.
  const auto df = read(dockerfile);
  EXPECT_NE(df.find("tools/dev.sh setup && tools/dev.sh build"), std::string::npos);
  EXPECT_NE(df.find("ENTRYPOINT [\"engramd\"]"), std::string::npos);
  EXPECT_NE(df.find("COPY --from=build /src/config config"), std::string::npos);
  EXPECT_NE(df.find(" " + cfg.embedder.model_path + "\n"), std::string::npos)
      << "the runtime image must hold " << cfg.embedder.model_path;
  for (const char* lib : {"libcaf-core0.17", "librocksdb7.8", "librdkafka++1", "libyaml-cpp0.7", "libspdlog1.10",
                          "libprometheus-cpp-core1.0", "libstemmer0d", "libicu72", "libgmime-3.0-0"})
    EXPECT_NE(df.find(lib), std::string::npos) << lib;

  // Prometheus scrapes engramd's /metrics on the compose network.
  const auto prom = services["prometheus"];
  const auto mount = prom["volumes"][0].as<std::string>();
  const auto file = mount.substr(2, mount.find(':') - 2);  // "./tools/docker/prometheus.yml:..."
  const auto scrape = YAML::LoadFile(root + "/" + file);
  EXPECT_EQ(scrape["scrape_configs"][0]["static_configs"][0]["targets"][0].as<std::string>(), "engramd:8700");
}

// docker-compose.cluster.yml (docs/scaling-out.md): three KRaft brokers forming one quorum,
// topics of 12 partitions with three replicas (engram-members compacted), one extract member
// and three clustered store members, each with its own store, its own address as
// store.advertised_url, the same tokens, and a configuration engramd accepts.
TEST(Compose, ThreeBrokersThreeMembersFitTogether) {
  const auto compose = YAML::LoadFile(root + "/docker-compose.cluster.yml");
  const auto services = compose["services"];
  const std::vector<std::string> kafkas{"kafka-1", "kafka-2", "kafka-3"};
  const std::vector<std::string> members{"engramd-1", "engramd-2", "engramd-3"};
  for (const auto& s : kafkas)
    ASSERT_TRUE(services[s]) << s;
  for (const auto& s : members)
    ASSERT_TRUE(services[s]) << s;
  for (const char* s : {"kafka-init", "engramd-extract", "prometheus"})
    ASSERT_TRUE(services[s]) << s;

  // One KRaft quorum of three: distinct node ids, the same cluster id and voters.
  std::set<std::string> node_ids, cluster_ids, voters;
  for (std::size_t i = 0; i < kafkas.size(); ++i) {
    const auto env = services[kafkas[i]]["environment"];
    node_ids.insert(env["KAFKA_NODE_ID"].as<std::string>());
    cluster_ids.insert(env["CLUSTER_ID"].as<std::string>());
    voters.insert(env["KAFKA_CONTROLLER_QUORUM_VOTERS"].as<std::string>());
    EXPECT_EQ(env["KAFKA_ADVERTISED_LISTENERS"].as<std::string>(), "PLAINTEXT://" + kafkas[i] + ":9092");
    EXPECT_EQ(env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"].as<int>(), 3);
    EXPECT_EQ(env["KAFKA_MIN_INSYNC_REPLICAS"].as<int>(), 2);
    EXPECT_EQ(env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"].as<std::string>(), "false");
    EXPECT_NE(voters.begin()->find(env["KAFKA_NODE_ID"].as<std::string>() + "@" + kafkas[i] + ":9093"),
              std::string::npos);
  }
  EXPECT_EQ(node_ids.size(), 3u);
  EXPECT_EQ(cluster_ids.size(), 1u);
  EXPECT_EQ(voters.size(), 1u);

  // Every topic engramd uses, on all three brokers, with 12 partitions and three replicas.
  const config::topics_config topics;
  const auto script = services["kafka-init"]["command"][0].as<std::string>();
  EXPECT_NE(script.find("--bootstrap-server kafka-1:9092,kafka-2:9092,kafka-3:9092"), std::string::npos);
  for (const auto& t :
       {topics.inbound, topics.log, topics.reminders, topics.dead_letter, topics.keys, topics.members}) {
    auto at = script.find("--topic " + t + " ");
    ASSERT_NE(at, std::string::npos) << t;
    auto line = script.substr(at, script.find('\n', at) - at);
    EXPECT_NE(line.find("--replication-factor 3"), std::string::npos) << line;
    const bool one = t == topics.keys || t == topics.members;
    EXPECT_NE(line.find(one ? "--partitions 1 " : "--partitions 12 "), std::string::npos) << line;
    if (t == topics.log)
      EXPECT_NE(line.find("retention.ms=-1 --config retention.bytes=-1"), std::string::npos) << line;
    if (one)
      EXPECT_NE(line.find("cleanup.policy=compact"), std::string::npos) << line;
  }
  for (const auto& k : kafkas)
    EXPECT_EQ(services["kafka-init"]["depends_on"][k]["condition"].as<std::string>(), "service_healthy") << k;

  // The engramd services: one configuration each that engramd accepts (the token given as
  // compose would substitute it), all on the three brokers, with the same tokens.
  char* no_env[] = {nullptr};
  std::set<std::string> ports, volumes, tokens, names, urls;
  auto load = [&](const std::string& service) {
    auto set = sets(services[service]["command"]);
    std::vector<std::string> overrides;
    for (auto [k, v] : set) {
      if (auto at = v.find("${ENGRAM_TOKEN:?set ENGRAM_TOKEN}"); at != std::string::npos)
        v.replace(at, std::string("${ENGRAM_TOKEN:?set ENGRAM_TOKEN}").size(), "a-token-compose-would-put-here");
      overrides.push_back(k + "=" + v);
    }
    tokens.insert(set["auth.tokens"]);
    ports.insert(services[service]["ports"][0].as<std::string>());
    const auto volume = services[service]["volumes"][0].as<std::string>();
    volumes.insert(volume.substr(0, volume.find(':')));
    EXPECT_EQ(volume.substr(volume.find(':') + 1), set["storage.path"]) << service;
    EXPECT_EQ(services[service]["depends_on"]["kafka-init"]["condition"].as<std::string>(),
              "service_completed_successfully");
    auto loaded = config::load(root + "/" + services[service]["command"][1].as<std::string>(), overrides, no_env);
    EXPECT_TRUE(loaded.ok()) << service << ": " << loaded.error();
    return loaded.ok() ? loaded.value() : config::engram_config{};
  };
  const auto extract = load("engramd-extract");
  EXPECT_TRUE(extract.roles.extract);
  EXPECT_FALSE(extract.roles.store);
  EXPECT_FALSE(extract.store.cluster);
  for (const auto& m : members) {
    const auto cfg = load(m);
    EXPECT_EQ(cfg.kafka.brokers, "kafka-1:9092,kafka-2:9092,kafka-3:9092") << m;
    EXPECT_TRUE(cfg.roles.store && !cfg.roles.extract) << m;
    EXPECT_TRUE(cfg.store.cluster) << m;
    EXPECT_EQ(cfg.store.advertised_url, "http://" + m + ":8700") << "its address on the compose network";
    EXPECT_EQ(cfg.http.listen, "0.0.0.0:8700");
    EXPECT_EQ(cfg.kafka.group_id, "engram") << "one consumer group";
    names.insert(cfg.store.name());
    ASSERT_EQ(cfg.auth.tokens.size(), 1u);
    EXPECT_EQ(cfg.auth.tokens[0].token, "a-token-compose-would-put-here");
  }
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(ports.size(), 4u) << "a host port each";
  EXPECT_EQ(volumes.size(), 4u) << "a store each";
  EXPECT_EQ(tokens.size(), 1u) << "every member accepts the same tokens";
  for (const auto& v : volumes)
    EXPECT_TRUE(compose["volumes"][v]) << v;

  // Prometheus scrapes every engramd.
  const auto mount = services["prometheus"]["volumes"][0].as<std::string>();
  const auto scrape = YAML::LoadFile(root + "/" + mount.substr(2, mount.find(':') - 2));
  std::set<std::string> targets;
  for (const auto& t : scrape["scrape_configs"][0]["static_configs"][0]["targets"])
    targets.insert(t.as<std::string>());
  EXPECT_EQ(targets,
            (std::set<std::string>{"engramd-1:8700", "engramd-2:8700", "engramd-3:8700", "engramd-extract:8700"}));
}

}  // namespace
