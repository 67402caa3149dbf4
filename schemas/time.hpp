#pragma once
// Times as the records and tools write them.

#include <cstdint>
#include <string>

namespace engram::schemas {

/// Milliseconds since the Unix epoch as RFC 3339 UTC with milliseconds
/// ("2026-03-05T10:00:00.000Z"); parse_rfc3339 reads it back.
[[nodiscard]] std::string format_rfc3339(std::int64_t ms);

}  // namespace engram::schemas
