#pragma once
// librdkafka's mock cluster: a real Kafka-protocol broker inside this process, listening
// on 127.0.0.1 at a random port. It keeps everything in memory and starts empty, and each
// partition keeps only about 5 MiB (and at most 100,000 produce batches): past that it
// silently drops the partition's oldest records, as a real Kafka does with a retention limit
// (Engram then stops at the gap: actors/ingest/gaps.hpp).

#include "base/result.hpp"

#include <cstdint>
#include <functional>
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

  /// Takes the cluster's brokers down (connections closed, new ones refused) or up again;
  /// what they hold is kept. An outage for tests and `engramctl devbroker`. An error when
  /// librdkafka refuses.
  [[nodiscard]] engram::result<void> set_up(bool up);

  /// Called once when the broker is destroyed, before it stops: the test harness and the
  /// benchmarks check there that no partition dropped records under them.
  void before_stop(std::function<void(const embedded_broker&)> f) { before_stop_ = std::move(f); }

private:
  embedded_broker() = default;
  struct handles;
  std::unique_ptr<handles> h_;
  std::string bootstrap_;
  std::function<void(const embedded_broker&)> before_stop_;
};

}  // namespace engram::ingest
