#pragma once
// librdkafka helpers shared by the sequencer, the log consumer and the producer.
// Internal to actors/ingest.

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace engram::ingest::detail {

using properties = std::map<std::string, std::string>;

enum class client_role : std::uint8_t { consumer, producer };

/// Builds a client configuration: `user` (kafka.rdkafka) first, then `required`, which
/// correctness depends on and the user cannot override. User properties that librdkafka
/// documents for the other role only (session.timeout.ms for a producer, acks for a
/// consumer) are left out, so kafka.rdkafka can hold both kinds without warnings.
/// Returns null and sets `error`.
std::unique_ptr<RdKafka::Conf> make_conf(client_role role, const std::string& brokers, const properties& user,
                                         const properties& required, std::string* error);

/// Polls up to `max` messages: waits up to `wait` for the first, then takes what is ready.
/// Errors other than timeouts are logged and dropped from the result.
std::vector<std::unique_ptr<RdKafka::Message>> consume_batch(RdKafka::KafkaConsumer& consumer,
                                                             std::size_t max,
                                                             std::chrono::milliseconds wait,
                                                             const char* who);

/// The value of the last header `name`, or "" when absent.
std::string header(RdKafka::Message& msg, const std::string& name);

}  // namespace engram::ingest::detail
