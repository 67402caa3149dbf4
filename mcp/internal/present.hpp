#pragma once
// The JSON the knowledge tools and the console's API answer with, built from the query
// service's typed results (internal to mcp/): an entry as presented (knowledge::present, its
// confidence decayed), a recall or search hit, get_knowledge's entry with its source, a
// review item.

#include "mcp/registry.hpp"
#include "query/query.hpp"

#include <vector>

namespace engram::mcp {

/// An entry as the tools return it, its confidence decayed to now.
[[nodiscard]] json present_entry(const query::query_service& q, const knowledge::stored_entry& e);

/// A recall or search result: {"kind": "entry", the presented entry, "eventId", "sources"
/// (each {eventId, sourceId, sentAt}: the first and the latest), "sourceCount" (all of them),
/// "dates" and, for an event, "occurredAt", "evidence"
/// ({passageId, text}) when recall found the passage it was read from, "score"} or {"kind":
/// "passage", "id", "text", "eventId", "sourceType", "sourceId", "threadId", "sentAt",
/// "from" ({name, address, contactId}), "dates" when it names any, "suspicious" when set,
/// "score"}.
[[nodiscard]] json present_hit(const query::query_service& q, const query::hit& h);
[[nodiscard]] std::vector<json> present_hits(const query::query_service& q, const std::vector<query::hit>& hits);

/// {"entry": presented, "source": the message or save it came from, or null}.
[[nodiscard]] json present_found(const query::query_service& q, const query::entry_with_source& f);

/// Each {"entry", "contradictedBy" (presented, or null)}.
[[nodiscard]] std::vector<json> present_review(const query::query_service& q,
                                               const std::vector<query::review_item>& items);

}  // namespace engram::mcp
