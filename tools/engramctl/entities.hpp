#pragma once
// engramctl entities search|show|export: the entity graph of one organisation, read from a
// store opened read-only (beside a running engramd, as engramctl digest does), without an agent.

#include "query/entity_graph.hpp"

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace engram::ctl {

struct entities_options {
  std::string data_dir, organization;
  std::string query;             // search: the words; show: the entity's name
  std::size_t limit = 20;        // search
  std::string format = "jsonl";  // export: jsonl (the memory server's file format) or mermaid
};

/// The entity graph of the store at `data_dir`, opened read-only; null with the reason on
/// `err` (prefixed with `command`).
[[nodiscard]] std::unique_ptr<query::entity_reader> open_reader(const std::string& data_dir, std::string_view command,
                                                                std::ostream& err);

/// Exit status: 0, or 1 with the reason on `err`.
int entities_search(const entities_options& o, std::ostream& out, std::ostream& err);
int entities_show(const entities_options& o, std::ostream& out, std::ostream& err);
int entities_export(const entities_options& o, std::ostream& out, std::ostream& err);

}  // namespace engram::ctl
