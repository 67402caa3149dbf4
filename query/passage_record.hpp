#pragma once
// A stored passage record as recall reads it. Storage writes each passage as one JSON object
// (storage/passages.cpp: id, eventId, index, text, sourceType, sourceId, threadId, sentAt,
// from {name, address, contactId}, contactIds, and dates, suspicious and, for a reply's first
// passage, after when they hold); recall reads at least thirty of them a call, so they are
// read with simdjson's on-demand parser, one pass over the object, and nothing is built but
// the passage.

#include "query/query.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::query {

/// The passage a record holds and, when `contacts` is given, the contacts it belongs to.
/// nullopt when the record is not one JSON object, or a field read is not of its type (a
/// string, an array of strings, an object, a bool); a field absent reads as empty (false).
/// Fields it does not read (index, after) are skipped by their brackets and quotes, not
/// checked: a malformed value there is not noticed. Storage writes every record with
/// nlohmann, so none is malformed.
[[nodiscard]] std::optional<passage_hit> read_passage(std::string_view raw,
                                                      std::vector<std::string>* contacts = nullptr);

}  // namespace engram::query
