#pragma once
// Whether the Kafka cluster answers. engramd asks it once a second on a client of its own (a
// metadata request, which needs a live broker connection; the engine's "broker-watch", a
// periodic actor, calls look()): /readyz says why engramd is not
// ready while it does not answer, and start-up waits for it (docs/operations.md "Kafka
// outages").

#include "base/result.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace engram::ingest {

class broker_watch {
public:
  /// A client for `brokers` (kafka.rdkafka applies). An error when librdkafka refuses it.
  [[nodiscard]] static engram::result<std::unique_ptr<broker_watch>> create(
      const std::string& brokers, const std::map<std::string, std::string>& rdkafka);
  ~broker_watch();
  broker_watch(const broker_watch&) = delete;
  broker_watch& operator=(const broker_watch&) = delete;

  /// Asks the cluster once, waiting at most `timeout`: nothing when a broker answered, else
  /// librdkafka's reason.
  [[nodiscard]] engram::result<void> ask(std::chrono::milliseconds timeout);

  /// Asks until a broker answers: logs once that it waits (and every 30 s after), checks
  /// `stopping` between tries. False when `stopping` said so first.
  [[nodiscard]] bool wait_until_answered(const std::function<bool()>& stopping);

  /// Asks once (waiting at most `timeout`), logging a change: what unreachable() says.
  void look(std::chrono::milliseconds timeout);

  /// Empty while the cluster answers; else why not, for how long, and what waits.
  [[nodiscard]] std::optional<std::string> unreachable() const;

private:
  broker_watch() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
  std::string brokers_;
  mutable std::mutex mutex_;
  /// Set while the cluster does not answer: since when, and why.
  std::optional<std::chrono::steady_clock::time_point> down_since_;
  std::string reason_;
};

}  // namespace engram::ingest
