#pragma once
// librdkafka helpers shared by the sequencer, the log consumer and the producer.
// Internal to actors/ingest.

#include "schemas/result.hpp"

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace engram::ingest::detail {

using properties = std::map<std::string, std::string>;

enum class client_role : std::uint8_t { consumer, producer };

/// Builds a client configuration: `user` (kafka.rdkafka) first, then `required`, which
/// correctness depends on and the user cannot override. User properties that librdkafka
/// documents for the other role only (session.timeout.ms for a producer, acks for a
/// consumer) are left out, so kafka.rdkafka can hold both kinds without warnings.
/// An error names the property librdkafka refused.
[[nodiscard]] engram::result<std::unique_ptr<RdKafka::Conf>> make_conf(client_role role, const std::string& brokers,
                                                                       const properties& user,
                                                                       const properties& required);

/// A KafkaConsumer in consumer group `group`, subscribed to `topic`, never committing on its
/// own. `rebalance` may be null (librdkafka assigns the committed offsets). An error names
/// `who`.
[[nodiscard]] engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> make_consumer(
    const std::string& brokers, const properties& user, const std::string& group, const std::string& topic,
    RdKafka::RebalanceCb* rebalance, const char* who);

/// Headers of a dead letter: the reason ("field: reason"), its kind and where the record was.
std::vector<std::pair<std::string, std::string>> dead_letter_headers(const std::string& reason, std::string_view kind,
                                                                     const RdKafka::Message& msg);

/// Polls up to `max` messages: waits up to `wait` for the first, then takes what is ready.
/// Errors other than timeouts are logged and dropped from the result.
std::vector<std::unique_ptr<RdKafka::Message>> consume_batch(RdKafka::KafkaConsumer& consumer,
                                                             std::size_t max,
                                                             std::chrono::milliseconds wait,
                                                             const char* who);

/// The value of the last header `name`, or "" when absent.
std::string header(RdKafka::Message& msg, const std::string& name);

}  // namespace engram::ingest::detail
