#pragma once
// engramctl forget (forget_knowledge over engramd's MCP endpoint, answered once applied with
// what was removed) and engramctl audit (GET /v1/audit: who forgot what kind, and when).
// docs/forgetting.md.

#include <ostream>
#include <string>

namespace engram::ctl {

struct forget_options {
  std::string url = "http://127.0.0.1:8700";
  /// Bearer token (default: $ENGRAM_TOKEN).
  std::string token;
  /// entry | organization.
  std::string kind;
  std::string id;
};

/// Exit 0 with the answer's JSON; 1 with the reason (the tool's own message) on stderr.
int forget(const forget_options& o, std::ostream& out, std::ostream& err);

/// Exit 0 with one line per forget (issuedAt, issuedBy, what, id); 1 on error.
int audit(const forget_options& o, std::ostream& out, std::ostream& err);

}  // namespace engram::ctl
