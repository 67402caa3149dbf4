#pragma once
// Deterministic synthetic inbound events, shared by the benchmarks and the tests.

#include <cstddef>
#include <string>
#include <vector>

namespace engram::synthetic {

/// `n` valid inbound events as JSON lines, spread round-robin over `organizations`
/// (ids "org-0".. unless `names` is given), with threads, contacts and bodies of about
/// `body_bytes`. The same arguments give the same events.
std::vector<std::string> events(std::size_t n, std::size_t body_bytes = 200,
                                const std::vector<std::string>& names = {"acme", "globex", "initech"});

/// The organizationId of a JSON event.
std::string organization_of(const std::string& event_json);

}  // namespace engram::synthetic
