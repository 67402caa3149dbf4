#pragma once
// A message with what was read from it, as the extract stage appends it to engram-log:
// record kind "extracted-message", key = organizationId. Extraction (rules or the LLM) and
// embedding happen once, before the log of record; the store stage applies what the record
// says and a replay never extracts or embeds again (docs/architecture.md).
//
//   {"formatVersion": 3,
//    "message": {…the inbound message, schemas/inbound_message.hpp…},
//    "extraction": {"extractor": "rules", "reader": "names-1/…+relations-1/…+types-3/…" (the models that read, "+" between),
//                   "droppedLowConfidence": 0,
//                   "mentions": [{"kind": "person", "text": "Sarah Lee", "value": "Sarah Lee", …}],
//                   "senderSignature": {…a mention…},                              (optional)
//                   "entries": [{"type": "fact", "title": "…", "content": "…", "confidence": 0.8,
//                                "positive": true, "mentions": [0],
//                                "signature": {"numbers": [], "dates": [], "amounts": [],
//                                              "entities": [], "words": "…", "key": "…"},
//                                "subject", "slot", "value", "dueAt", "suspicious", "tags",
//                                "expiresAt"                                      (when set)
//                                "vector": {"scale": 0.0071, "q": "<base64 int8>"}}],  (when embedded)
//                   "passages": [{"text": "…", "words": "…BM25 terms…",
//                                 "dates": ["2026-03-04"] (when any), "suspicious": true (when set),
//                                 "vector": {…as an entry's…}}]},                  (when any)
//    "embedder": "use-lite"}
//
// Format versions of message records: 1 is "inbound-message" (the message alone, extracted
// when applied; what earlier releases wrote, still applied), 2 is this record without
// passages (still applied: the message then has none), 3 is this record.

#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace engram::schemas {

inline constexpr const char* kind_extracted_message = "extracted-message";
inline constexpr int extracted_format_version = 3;

struct extracted_message {
  inbound_message message;
  extraction knowledge;
  /// The encoder that made the vectors (embedder.kind), for people reading the log.
  std::string embedder;

  friend bool operator==(const extracted_message&, const extracted_message&) = default;
};

[[nodiscard]] std::string to_json(const extracted_message& x);

/// Decodes a record; returns "field: reason" on failure (the message part is held to
/// `limits`, as an inbound event is).
[[nodiscard]] std::optional<std::string> decode(std::string_view bytes, const decode_limits& limits,
                                                extracted_message& out);

}  // namespace engram::schemas
