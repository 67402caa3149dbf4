#pragma once
// What every command on engram-log begins with (knowledge, entity and bundle commands): its
// event, its organisation, when and by whom it was issued. One struct, one encoder and one
// decoder (schemas/internal/json_fields.hpp: put_envelope, read_envelope).

#include <cstdint>
#include <string>

namespace engram::schemas {

struct command_envelope {
  std::string event_id;
  std::string organization_id;
  /// RFC 3339; issued_at_ms is the same instant in milliseconds since the epoch (decoded).
  std::string issued_at;
  std::int64_t issued_at_ms = 0;
  /// Who issued it (a token's name, "timers", "engramctl"); may be empty.
  std::string issued_by;

  friend bool operator==(const command_envelope&, const command_envelope&) = default;
};

}  // namespace engram::schemas
