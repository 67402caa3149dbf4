#pragma once
// The inbound event (schemas/inbound-message.schema.json) as a C++ value,
// and its decoder. Pure functions: no I/O, no globals, thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::schemas {

/// The engram-log kind header of a copied inbound event (schemas/log_record.hpp).
inline constexpr const char* kind_inbound_message = "inbound-message";

/// Where a statement came from. Inbound events are email or chat; `manual` is knowledge an
/// agent or a person saved deliberately (save_knowledge), which outranks what was read
/// from a message when statements disagree.
/// file: a chunk of a document (engramctl ingest-docs), with its document_ref.
enum class source_type : std::uint8_t { email, chat, manual, file };

[[nodiscard]] std::string_view to_string(source_type t);

/// A sender or recipient: an email address or a chat handle, with an optional name.
struct participant {
  std::string name;
  std::string address;
  /// The upstream CRM contact id, empty when the bus gave none.
  std::string contact_id;

  friend bool operator==(const participant&, const participant&) = default;
};

/// The document a `file` event is a chunk of (engramctl ingest-docs): its id (the same for
/// every chunk), title, the section (headings, " > "-joined) the chunk sits in, and which
/// chunk of how many it is.
struct document_ref {
  std::string id;
  std::string title;
  std::string section;
  std::uint32_t chunk = 0;
  std::uint32_t chunks = 1;

  friend bool operator==(const document_ref&, const document_ref&) = default;
};

/// What a refused event still says of itself when it is a chunk of a document: its
/// organisation, eventId (empty when not valid) and document, each valid as the schema says.
struct refused_chunk {
  std::string organization_id, event_id;
  document_ref document;
};

/// The chunk an event that failed to decode belongs to, when its organizationId and
/// document are valid on their own (what the sequencer records a refused chunk under);
/// nullopt otherwise.
[[nodiscard]] std::optional<refused_chunk> refused_chunk_of(std::string_view bytes);

/// One decoded, validated inbound message.
struct inbound_message {
  std::string event_id;
  std::string organization_id;
  source_type source = source_type::email;
  std::string source_id;
  /// The thread the message belongs to; empty when the bus gave none.
  std::string thread_id;
  /// As written by the bus (RFC 3339).
  std::string sent_at;
  /// sent_at as milliseconds since the Unix epoch, UTC.
  std::int64_t sent_at_ms = 0;
  participant from;
  std::vector<participant> to;
  std::vector<participant> cc;
  std::string subject;
  std::string body;
  std::vector<std::string> contact_ids;
  /// Optional: headers the bus carries that say how the message was sent (list and bulk mail
  /// markers: list-id, list-unsubscribe, precedence, auto-submitted, x-spam-flag, ...),
  /// names lower-cased. Empty for most events.
  std::map<std::string, std::string> headers;
  /// sourceType file: the document this event is a chunk of (required then, refused otherwise).
  std::optional<document_ref> document;

  /// threadId, or the eventId for a message that starts no known thread.
  [[nodiscard]] const std::string& thread_or_event() const { return thread_id.empty() ? event_id : thread_id; }

  friend bool operator==(const inbound_message&, const inbound_message&) = default;
};

/// Why an event was refused: the JSON pointer of the field ("" for the whole event) and
/// the reason, both meant for people.
struct decode_error {
  enum class kind : std::uint8_t { too_large, invalid_utf8, invalid_json, schema };
  kind what = kind::schema;
  std::string field;
  std::string reason;
  /// The event's eventId when it is a JSON object with a string eventId (the event a person
  /// looks up), else empty; not part of to_string().
  std::string event_id;
  /// "field: reason", or the reason alone when it concerns the whole event.
  [[nodiscard]] std::string to_string() const;
};

[[nodiscard]] std::string_view to_string(decode_error::kind k);

/// The most headers an event may carry, and their sizes.
inline constexpr std::size_t max_headers = 32, max_header_name = 64, max_header_value = 2048;

struct decode_limits {
  /// Larger events are refused (kind too_large). Default: 1 MiB (ingest.max_event_bytes).
  std::uint64_t max_event_bytes = 1048576;
};

/// Decodes and validates one event. Returns the first problem found, or nullopt with
/// `out` filled in.
[[nodiscard]] std::optional<decode_error> decode(std::string_view bytes, const decode_limits& limits,
                                                 inbound_message& out);

/// The event as canonical JSON (fixed key order, empty optional fields left out): what the
/// store keeps as the message's provenance.
[[nodiscard]] std::string to_json(const inbound_message& m);

/// Returns the byte offset of the first invalid UTF-8 sequence, or nullopt.
[[nodiscard]] std::optional<std::size_t> find_invalid_utf8(std::string_view s);

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
[[nodiscard]] std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);

/// Parses an RFC 3339 date-time into milliseconds since the epoch, UTC.
[[nodiscard]] std::optional<std::int64_t> parse_rfc3339(std::string_view s);

}  // namespace engram::schemas
