#pragma once
// One engram-log record as the store gets it, from the Kafka message: a sealed record opened
// with its data key (key_ring.hpp), then decoded (schemas/log_record.hpp). Shared by the log
// consumer and the log source (a forget's rebuild), so both read the log alike. Internal to
// actors/ingest.

#include "actors/ingest/key_ring.hpp"
#include "schemas/log_record.hpp"

#include <librdkafka/rdkafkacpp.h>

#include <optional>
#include <string>

namespace engram::ingest::detail {

struct read_record {
  std::optional<schemas::log_payload> payload;
  /// Why there is no payload: "forgotten: …" (a sealed record whose key was deleted: not a
  /// poison record), or why it could not be decoded.
  std::string rejection;
  /// The dead-letter label of an undecodable record; empty when forgotten.
  std::string label;
  bool forgotten = false;
};

/// Opens (when sealed, with `keys`; without keys a sealed record cannot be read) and decodes.
[[nodiscard]] read_record read_log_record(RdKafka::Message& msg, const schemas::decode_limits& limits, key_ring* keys);

}  // namespace engram::ingest::detail
