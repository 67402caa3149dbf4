#pragma once
// engramctl entities search|show|export: the entity graph of one organisation, read from a
// store opened read-only (beside a running engramd, as engramctl digest does), without an agent.

#include <cstddef>
#include <ostream>
#include <string>

namespace engram::ctl {

struct entities_options {
  std::string data_dir, organization;
  std::string query;          // search: the words; show: the entity's name
  std::size_t limit = 20;     // search
  std::string format = "jsonl";  // export: jsonl (the memory server's file format) or mermaid
};

/// Exit status: 0, or 1 with the reason on `err`.
int entities_search(const entities_options& o, std::ostream& out, std::ostream& err);
int entities_show(const entities_options& o, std::ostream& out, std::ostream& err);
int entities_export(const entities_options& o, std::ostream& out, std::ostream& err);

}  // namespace engram::ctl
