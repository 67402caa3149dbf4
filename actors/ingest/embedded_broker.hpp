#pragma once
// librdkafka's mock cluster: a real Kafka-protocol broker inside this process, listening
// on 127.0.0.1 at a random port. It keeps everything in memory and starts empty, and each
// partition keeps only about 5 MiB (older messages are evicted).

#include "schemas/result.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace engram::ingest {

class embedded_broker {
public:
  /// Starts a one-broker cluster and creates `topics` with `partitions` partitions each.
  /// An error when librdkafka cannot make the cluster or a topic.
  [[nodiscard]] static engram::result<std::unique_ptr<embedded_broker>> start(const std::vector<std::string>& topics,
                                                                              int partitions);
  ~embedded_broker();
  embedded_broker(const embedded_broker&) = delete;
  embedded_broker& operator=(const embedded_broker&) = delete;

  /// "127.0.0.1:PORT", for bootstrap.servers.
  [[nodiscard]] const std::string& bootstrap() const { return bootstrap_; }

private:
  embedded_broker() = default;
  struct handles;
  std::unique_ptr<handles> h_;
  std::string bootstrap_;
};

}  // namespace engram::ingest
