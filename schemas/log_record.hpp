#pragma once
// One record of engram-log, the log of record (docs/architecture.md): its kind (the Kafka header
// "kind"), its key (the organisation) and its value (the kind's JSON). Every producer of
// engram-log encodes here and the consumer decodes here, so a field the producer sets is a
// field the store reads: the round-trip tests in tests/unit/schemas run over every kind and,
// for commands, every op.
//
//   kind header         value                               written by
//   inbound-message     schemas/inbound_message.hpp         format 1: the message alone (earlier
//                                                           releases; read by the log consumer)
//   extracted-message   schemas/extracted_message.hpp       the extract stage: format 3 (2 is still
//                                                           read), the message with its entries,
//                                                           entities, passages and vectors
//   knowledge-save      schemas/knowledge_save.hpp          MCP save_knowledge
//   knowledge-command   schemas/knowledge_command.hpp       MCP (validate, branches, review), timers
//   entity-command      schemas/entity_command.hpp          MCP entity tools (the entity graph)
//   kg-bundle           schemas/kg_bundle.hpp               engramctl kg apply|delete (bundles)
//
// A record without a kind header is an inbound message (what the first releases wrote).

#include "schemas/entity_command.hpp"
#include "schemas/extracted_message.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/kg_bundle.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/knowledge_save.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace engram::schemas {

/// The Kafka header that names a record's kind.
inline constexpr const char* kind_header = "kind";

/// In the order of log_payload's alternatives.
enum class record_kind : std::uint8_t {
  inbound_message,
  knowledge_save,
  knowledge_command,
  extracted_message,
  entity_command,
  kg_bundle
};

inline constexpr std::array all_record_kinds{record_kind::inbound_message,   record_kind::knowledge_save,
                                             record_kind::knowledge_command, record_kind::extracted_message,
                                             record_kind::entity_command,    record_kind::kg_bundle};

/// The header value: "inbound-message", "knowledge-save", "knowledge-command", "extracted-message",
/// "entity-command", "kg-bundle".
[[nodiscard]] std::string_view to_string(record_kind k);
/// The kind a header value names; an empty header is an inbound message; nullopt: unknown.
[[nodiscard]] std::optional<record_kind> parse_record_kind(std::string_view header);

/// A decoded record's value.
using log_payload =
    std::variant<inbound_message, knowledge_save, knowledge_command, extracted_message, entity_command, kg_command>;

[[nodiscard]] record_kind kind_of(const log_payload& p);
[[nodiscard]] const std::string& organization_of(const log_payload& p);
[[nodiscard]] const std::string& event_id_of(const log_payload& p);

/// A record ready for the producer: key = organizationId, the kind header, the JSON value.
struct encoded_record {
  std::string key;
  std::string kind;
  std::string value;
};

[[nodiscard]] encoded_record encode(const log_payload& p);

/// Why a record could not be decoded: for people ("knowledge-command /op: unknown operation
/// 'x'") and for the dead-letter metric's reason label (too_large, invalid_utf8,
/// invalid_json, schema, unknown_kind).
struct record_error {
  std::string reason;
  std::string label;
};

/// Decodes a record by its kind header. Messages (inbound, extracted) are held to `limits`.
[[nodiscard]] std::variant<log_payload, record_error> decode_record(std::string_view kind_header_value,
                                                                    std::string_view value,
                                                                    const decode_limits& limits);

}  // namespace engram::schemas
