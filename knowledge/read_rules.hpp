#pragma once
// The read-time rules of knowledge (docs/extraction.md): decay, visibility (superseded, expired,
// faded below decay.hide_below), what an entry looks like to an agent, and a branch's life.
// Pure functions of a stored entry and "now": wall-clock time never enters stored state,
// it enters here. Used by the query service, the MCP tools and the timers.

#include "config/config.hpp"
#include "knowledge/entry.hpp"
#include "schemas/knowledge_save.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace engram::knowledge {

using json = nlohmann::json;

/// Reciprocal rank fusion's constant (Cormack, Clarke, Büttcher 2009): a list's i-th
/// result (from 1) adds 1 / (rrf_k + i).
inline constexpr double rrf_k = 60.0;

/// Content longer than this is cut in what tools return (the stored entry keeps it whole).
inline constexpr std::size_t max_presented_content = 2000;

struct read_policy {
  /// Half-lives per type and the fade-out threshold. Default: config's defaults.
  config::decay_config decay;
  /// branches.ttl: a branch idle for longer is gone. Default: 24 h.
  std::int64_t branch_ttl_ms = 24ll * 3600 * 1000;
  /// recall.graph_expansion: the statements kag_query's walk finds for the query (those
  /// behind its relations, then its entities') join recall's fusion. Default: false.
  bool graph_expansion = false;
  /// recall.answer_floor: when the query's vector is this close (cosine) to nothing the
  /// organisation holds, recall answers nothing, with a note, rather than the nearest
  /// unrelated statement. 0: always answer. Default: 0.25 (calibrated on the development
  /// conversations, docs/recall.md).
  double answer_floor = 0.25;
};

/// An entry's confidence decayed to `at_ms` (its own confidence when it has no
/// lastValidatedAt).
[[nodiscard]] double effective_confidence(const stored_entry& e, std::int64_t at_ms, const read_policy& p);

/// Not superseded and not expired at `now` (RFC 3339, compared as text: same format).
[[nodiscard]] bool visible(const stored_entry& e, const std::string& now_rfc3339);

/// Visible and not faded below decay.hide_below: what recall and search may return.
[[nodiscard]] bool recallable(const stored_entry& e, std::int64_t at_ms, const read_policy& p);

/// An entry as tools return it: the stored fields (docs/mcp-tools.md) (and branchId, review,
/// supersededBy, reminderSentAt, suspicious), content cut to max_presented_content, and
/// effectiveConfidence at `at_ms` rounded to 6 decimals.
[[nodiscard]] json present(const stored_entry& e, std::int64_t at_ms, const read_policy& p);

/// True while a branch whose last save was at `last_save_ms` lives at `at_ms`.
[[nodiscard]] bool branch_alive(std::int64_t last_save_ms, std::int64_t at_ms, const read_policy& p);

/// A branch save as the entry it would become, for that branch's recalls.
[[nodiscard]] stored_entry branch_entry(const schemas::knowledge_save& s);

}  // namespace engram::knowledge
