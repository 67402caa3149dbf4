#pragma once
// librdkafka helpers shared by the sequencer, the log consumer and the producer.
// Internal to actors/ingest.

#include "base/result.hpp"

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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
/// own and never jumping to another offset on its own (auto.offset.reset=error: an offset
/// that is no longer on the broker is an ERR__AUTO_OFFSET_RESET error, and that partition
/// stops fetching until it is assigned again). `rebalance` may be null (librdkafka assigns
/// the committed offsets). An error names `who`.
[[nodiscard]] engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> make_consumer(
    const std::string& brokers, const properties& user, const std::string& group, const std::string& topic,
    RdKafka::RebalanceCb* rebalance, const char* who);

/// A KafkaConsumer that reads `offsets` (partition -> first offset) of `topic` by assignment:
/// never in a group's rebalance, never committing, a fetch waiting at most 10 ms; an offset no
/// longer on the broker goes to `offset_reset` ("earliest", or "error"). What reads a topic
/// back whole (the key ring, a forget's log source). An error names `who`.
[[nodiscard]] engram::result<std::unique_ptr<RdKafka::KafkaConsumer>> make_reader(
    const std::string& brokers, const properties& user, const std::string& group, const std::string& topic,
    const std::map<std::int32_t, std::int64_t>& offsets, const char* offset_reset, const char* who);

/// Headers of a dead letter: the reason ("field: reason"), its kind and where the record was.
std::vector<std::pair<std::string, std::string>> dead_letter_headers(const std::string& reason, std::string_view kind,
                                                                     const RdKafka::Message& msg);

/// Polls up to `max` messages: waits up to `wait` for the first, then takes what is ready.
/// An offset that is no longer on the broker (ERR__AUTO_OFFSET_RESET: its partition and the
/// offset asked for) goes to `resets` and ends the batch; other errors are logged and
/// dropped from the result.
std::vector<std::unique_ptr<RdKafka::Message>> consume_batch(
    RdKafka::KafkaConsumer& consumer, std::size_t max, std::chrono::milliseconds wait, const char* who,
    std::vector<std::pair<std::int32_t, std::int64_t>>* resets = nullptr);

/// The oldest offset a partition still has and its high-water mark, asking the broker (three
/// tries); nullopt when it does not answer.
std::optional<std::pair<std::int64_t, std::int64_t>> watermarks(RdKafka::KafkaConsumer& consumer,
                                                                const std::string& topic, std::int32_t partition,
                                                                const char* who);

/// Assigns `offsets` (partition -> next offset) of `topic`, replacing the assignment: how a
/// partition stopped by an offset reset error fetches again (a seek cannot restart it).
void reassign(RdKafka::KafkaConsumer& consumer, const std::string& topic,
              const std::map<std::int32_t, std::int64_t>& offsets, const char* who);

/// The value of the last header `name`, or "" when absent.
std::string header(RdKafka::Message& msg, const std::string& name);

}  // namespace engram::ingest::detail
