#pragma once
// Looking at a store and at a running engramd: engramctl digest (a stable hash of a store's
// logical content, opened read-only; --dump: what it hashes) and engramctl stats (engramd's
// /v1/stats).

#include <ostream>
#include <string>

namespace engram::ctl {

/// Prints the digest of the store at `dir` (opened read-only), after every key it hashes
/// when `dump`; of `organization`'s content only when given; with `by_organization`, one
/// line per organisation ("id\tdigest", sorted by id). Exit 0, or 1 when the store cannot
/// be opened.
int digest(const std::string& dir, bool dump, const std::string& organization = {}, bool by_organization = false);

/// Prints engramd's /v1/stats (`url`: its base URL, or the whole address), indented when it
/// is JSON. Exit 0 on HTTP 200, else 1.
int stats(std::string url, const std::string& token);

/// Prints the cluster as the member at `url` sees it (GET /v1/cluster, admin token): one line
/// per engram-log partition (owner, state, applied of target), then one per member (live or
/// not, when last heard of, its partitions); the document itself with `as_json`. Exit 0 on
/// HTTP 200 from a clustered member, else 1.
int cluster(std::string url, const std::string& token, bool as_json, std::ostream& out);

}  // namespace engram::ctl
