#pragma once
// A Kafka producer for Engram's own appends (engram-log, engram-dlq) and for tools:
// idempotent, acks=all, with delivery tracked between flushes.

#include "base/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace engram::ingest {

using headers = std::vector<std::pair<std::string, std::string>>;

class kafka_producer {
public:
  /// `rdkafka` holds user properties (kafka.rdkafka); idempotence and acks=all are forced,
  /// and so is `delivery_timeout` when given (message.timeout.ms: how long a message may wait
  /// for the broker before it fails). An error when librdkafka refuses the configuration or
  /// the client.
  [[nodiscard]] static engram::result<std::unique_ptr<kafka_producer>> create(
      const std::string& brokers, const std::map<std::string, std::string>& rdkafka,
      std::chrono::milliseconds delivery_timeout = {});
  ~kafka_producer();
  kafka_producer(const kafka_producer&) = delete;
  kafka_producer& operator=(const kafka_producer&) = delete;

  /// Queues one message (partition chosen from the key). Waits while the local queue is
  /// full. Returns false, with the reason in last_error(), if librdkafka refused it.
  [[nodiscard]] bool produce(const std::string& topic, std::string_view key, std::string_view value,
                             const headers& hs = {});

  /// Produces one message and waits for its own delivery report (not the whole queue's),
  /// at most the delivery timeout. Thread-safe.
  struct delivery {
    bool delivered = false;
    /// When not delivered: whether the broker may hold it all the same (it was sent and no
    /// answer came back). False means it was never written and never will be.
    bool possibly_written = false;
    std::string error;
  };
  [[nodiscard]] delivery deliver(const std::string& topic, std::string_view key, std::string_view value,
                                 const headers& hs = {});

  /// Produces one message without waiting: `done` is called once with its delivery report,
  /// within the delivery timeout, from the producer's poll thread (started by the first
  /// call; the only thread this adds). A message the producer still holds when it is
  /// destroyed is reported not delivered then. Waits only while the local queue is full.
  /// Thread-safe.
  void deliver_async(const std::string& topic, std::string_view key, std::string_view value, const headers& hs,
                     std::function<void(delivery)> done);

  /// Waits until every queued message is delivered or failed, up to `timeout`. Returns true
  /// when all messages produced since the previous flush() were acknowledged; else
  /// last_error() says why. Resets the failure count either way.
  [[nodiscard]] bool flush(std::chrono::milliseconds timeout);

  /// Looks up `topic`'s partitions and their leaders now, so that the first produce() to it
  /// does not wait for a metadata round trip and a connection (measured: 0.5-0.9 s for an
  /// agent's first save after a start). False, with last_error(), if that failed in `timeout`.
  [[nodiscard]] bool prepare(const std::string& topic, std::chrono::milliseconds timeout);

  [[nodiscard]] const std::string& last_error() const { return last_error_; }

private:
  kafka_producer() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
  std::string last_error_;
};

}  // namespace engram::ingest

namespace engram::ingest {

/// What produce_events() did.
struct produce_report {
  std::size_t produced = 0;
  std::size_t rejected = 0;
  /// "line N: field: reason" for each rejected line (at most 100 kept).
  std::vector<std::string> problems;
  /// Set when delivery failed; then nothing can be assumed delivered.
  std::string error;
};

/// Validates each line of a JSONL stream as an inbound event and produces the valid ones
/// to `topic` with key = organizationId, then flushes. Blank lines are ignored; invalid
/// lines are reported with their line number and never produced.
[[nodiscard]] produce_report produce_events(kafka_producer& producer, const std::string& topic, std::istream& in,
                                            std::uint64_t max_event_bytes);

}  // namespace engram::ingest
