#pragma once
// engramctl kg validate|apply|delete|list|show: knowledge bundles (docs/bundles.md) of one
// organisation. validate checks a bundle directory locally (kg/bundle.hpp), without engramd.
// apply checks the bundle the same way and prints every problem; then writes it to engram-log
// in chunks (kind kg-bundle) with the brokers of engramd's config, and waits, through
// engramd's GET /v1/kg/bundles, until the store has made the new version visible (or refused
// it, e.g. tool_name_collision_in_tenant). list and show read the same endpoint. (kg bowtie,
// the Bowtie harness, is kg/bowtie.hpp.)

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace engram::ctl {

struct kg_options {
  /// engramd's configuration (brokers, topics, http.listen, auth.tokens) and overrides.
  std::string config_path = "config/engram.yaml";
  std::vector<std::string> overrides;
  std::string organization;
  /// A bearer token of the organisation; default: the first of auth.tokens for it.
  std::string token;
  /// engramd's base URL; default: http://<http.listen>.
  std::string url;
  std::string bundle;  // apply: the directory; delete, show: the name
  std::chrono::seconds timeout{120};
};

/// Checks the bundle directory `dir` locally (manifest, schemas, entities, references):
/// every problem on `err`, one a line, and exit 1; or its warnings on `err`, its types,
/// entities and tools on `out`, and exit 0.
int kg_validate(const std::string& dir, std::ostream& out, std::ostream& err);

/// Exit status: 0; 1 with the reasons on `err` (invalid bundle, refused, not applied in
/// time); 2 for a usage or configuration problem.
int kg_apply(const kg_options& o, std::ostream& out, std::ostream& err);
int kg_delete(const kg_options& o, std::ostream& out, std::ostream& err);
int kg_list(const kg_options& o, std::ostream& out, std::ostream& err);
int kg_show(const kg_options& o, std::ostream& out, std::ostream& err);

}  // namespace engram::ctl
