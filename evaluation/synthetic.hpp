#pragma once
// Deterministic synthetic inbound events, shared by the benchmarks and the tests.

#include <cstddef>
#include <string>
#include <vector>

namespace engram::evaluation::synthetic {

/// `n` valid inbound events as JSON lines, spread round-robin over `organizations`
/// (ids "org-0".. unless `names` is given), with threads, contacts and bodies of about
/// `body_bytes`. The same arguments give the same events.
std::vector<std::string> events(std::size_t n, std::size_t body_bytes = 200,
                                const std::vector<std::string>& names = {"acme", "globex", "initech"});

/// `n` inbound events of dense business mail, round-robin over `organizations`: each body
/// holds about 8 distinct statements (a renewal date, a budget, an action item, a meeting
/// time, a preference, a goal, a role, a decision) whose names, numbers and dates vary with
/// the message, so few of them are duplicates. The same arguments give the same events.
std::vector<std::string> dense_events(std::size_t n, const std::vector<std::string>& organizations);

/// The people dense_events writes about and between.
const std::vector<std::string>& dense_people();

/// The organizationId of a JSON event.
std::string organization_of(const std::string& event_json);

}  // namespace engram::evaluation::synthetic
