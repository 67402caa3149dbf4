#pragma once
// Sealed records of engram-log (docs/forgetting.md, crypto-shredding): a message's record is
// encrypted with a data key of its own (AES-256-GCM, OpenSSL), kept on the compacted key topic
// (engram-keys, key_ring.hpp). Forgetting the message deletes the key; the record then stays on
// the log as bytes no one can read, and a replay reads it as forgotten.
//
//   kind header "sealed", value: one line of JSON, a newline, then the ciphertext and its 16-byte
//   tag as raw bytes (a sealed record is the clear one plus about 200 bytes):
//   {"sealed":1,"organizationId":"acme","eventId":"evt-1","keyId":"9f…","kind":"extracted-message","iv":"<base64, 12 bytes>"}\n<ciphertext><tag>
//
// The organisation, eventId, key id and inner kind are the additional authenticated data: a
// record cannot be moved to another message's key.

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace engram::ingest {

inline constexpr const char* sealed_kind = "sealed";

/// A data key: its id (hex) and its 32 bytes.
struct data_key {
  std::string id;
  std::string bytes;
};

/// A new random data key (OpenSSL's RAND_bytes).
[[nodiscard]] data_key new_data_key();

/// The key topic's record key of a message's data key: "organisation/eventId/keyId".
[[nodiscard]] std::string key_name(std::string_view org, std::string_view event_id, std::string_view key_id);

/// The sealed value of a record (its kind header becomes sealed_kind).
[[nodiscard]] std::string seal(std::string_view org, std::string_view event_id, std::string_view kind,
                               std::string_view value, const data_key& key);

/// A sealed record's clear parts, before it is opened.
struct sealed_envelope {
  std::string organization_id, event_id, key_id, kind;
  std::string iv, data;  // decoded from base64
};

/// Reads the envelope; nullopt with `why` when it is not one.
[[nodiscard]] std::optional<sealed_envelope> read_envelope(std::string_view value, std::string* why);

/// The record's clear value, with `key` (32 bytes); nullopt when it does not open (wrong key,
/// altered bytes).
[[nodiscard]] std::optional<std::string> open(const sealed_envelope& e, std::string_view key);

}  // namespace engram::ingest
