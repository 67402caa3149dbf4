#pragma once
// Read-your-writes: whoever appended an event to engram-log (an MCP save) waits here until
// the store stage has applied it, and learns what dedup and contradiction decided.

#include "schemas/knowledge.hpp"
#include "storage/graph_store.hpp"

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace engram::actors {

struct applied_event {
  storage::errc error = storage::errc::ok;
  /// True when the eventId had been applied before (a redelivery).
  bool duplicate = false;
  std::vector<schemas::resolution> resolutions;
  /// A command's answer (JSON), or why it did not apply (`rejected`).
  std::string result;
  std::string rejected;
};

class apply_notifier {
public:
  /// Register before appending the event, so the answer cannot be missed.
  [[nodiscard]] std::future<applied_event> expect(const std::string& organization_id, const std::string& event_id);
  /// Stop waiting (a timeout).
  void forget(const std::string& organization_id, const std::string& event_id);
  /// Called by the store stage for every applied event; cheap when nobody waits.
  void applied(const std::string& organization_id, const std::string& event_id, applied_event what);

private:
  std::mutex mutex_;
  std::map<std::string, std::promise<applied_event>> waiting_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace engram::actors
