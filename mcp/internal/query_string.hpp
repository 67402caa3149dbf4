#pragma once
// The /v1 API's request targets and query strings (mcp/query_string.cpp): no handler, no
// store, so the fuzz target of these parsers builds them alone.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace engram::mcp {

using json = nlohmann::json;

/// `text` cut at commas ("" gives none; "a,,b" gives "a", "", "b").
[[nodiscard]] std::vector<std::string> split_commas(const std::string& text);

/// The query string of `target` as (name, value) pairs, percent-decoded ('+' is a space), in
/// order; the path percent-decoded segment by segment into `segments` (empty ones dropped).
void split_target(const std::string& target, std::vector<std::string>& segments,
                  std::vector<std::pair<std::string, std::string>>& query);

/// Tool arguments from query parameters, typed by the tool's inputSchema: an integer,
/// number or boolean property is converted when the text is one (else left a string, so the
/// argument check names the field and the reason); an array of strings is split at commas.
/// A name given twice is an error naming it.
[[nodiscard]] std::optional<std::string> arguments_from_query(
    const std::vector<std::pair<std::string, std::string>>& query, const json& input_schema, json& arguments);

}  // namespace engram::mcp
