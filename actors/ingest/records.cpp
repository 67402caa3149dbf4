#include "actors/ingest/internal/records.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "actors/ingest/sealing.hpp"

namespace engram::ingest::detail {

read_record read_log_record(RdKafka::Message& msg, const schemas::decode_limits& limits, key_ring* keys) {
  read_record out;
  std::string kind = header(msg, schemas::kind_header);
  std::string_view bytes(static_cast<const char*>(msg.payload()), msg.len());
  std::string clear;
  if (kind == sealed_kind) {
    std::string why;
    auto envelope = read_envelope(bytes, &why);
    if (!envelope) {
      out.rejection = why;
      out.label = "schema";
      return out;
    }
    auto key = keys ? keys->get(key_name(envelope->organization_id, envelope->event_id, envelope->key_id))
                    : std::optional<std::string>();
    if (!key) {
      out.forgotten = true;
      out.rejection = "forgotten: the data key of " + envelope->organization_id + "/" + envelope->event_id +
                      (keys ? " was deleted" : " cannot be read here (no key topic)");
      return out;
    }
    auto opened = open(*envelope, *key);
    if (!opened) {
      out.rejection = "sealed: does not open with its data key (altered bytes)";
      out.label = "schema";
      return out;
    }
    clear = std::move(*opened);
    kind = envelope->kind;
    bytes = clear;
  }
  auto decoded = schemas::decode_record(kind, bytes, limits);
  if (auto* bad = std::get_if<schemas::record_error>(&decoded)) {
    out.rejection = std::move(bad->reason);
    out.label = std::move(bad->label);
  } else {
    out.payload = std::move(std::get<schemas::log_payload>(decoded));
  }
  return out;
}

}  // namespace engram::ingest::detail
