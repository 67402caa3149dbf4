// docker-compose.yml and its Dockerfile, checked without a Docker engine (none runs here):
// the services, that engramd reaches the Kafka service, the topics with their partitions
// and engram-log's unlimited retention, the ports, and that Prometheus scrapes engramd.

#include "config/config.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
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

}  // namespace
