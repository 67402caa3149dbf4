#pragma once
// Read-your-writes: whoever appended an event to engram-log (an MCP save) waits here until
// the store stage has applied it, and learns what dedup and contradiction decided.

#include "schemas/knowledge.hpp"
#include "storage/graph_store.hpp"

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace engram::services {

struct applied_event {
  storage::errc error = storage::errc::ok;
  /// True when the eventId had been applied before (a redelivery).
  bool duplicate = false;
  std::vector<schemas::resolution> resolutions;
  /// A knowledge command's result, typed: MCP builds the tool's JSON from it, the timers
  /// read their counts. Empty for other records.
  std::optional<storage::command_result> command;
  /// An entity command's or a bundle record's answer, or a branch save's (JSON).
  std::string result;
  /// Why the record did not apply.
  std::string rejected;
  /// A bundle record made a version visible or deleted one.
  bool bundles_changed = false;
};

class apply_notifier {
public:
  /// Register before appending the event, so the answer cannot be missed: `then` is called
  /// once, on the store's applying thread, when the event is applied (keep it cheap: send a
  /// message). The same event registered again replaces the first.
  void expect(const std::string& organization_id, const std::string& event_id, std::function<void(applied_event)> then);
  /// The same, as a future (a thread that waits for the answer: the timers).
  [[nodiscard]] std::future<applied_event> expect(const std::string& organization_id, const std::string& event_id);
  /// Stop waiting (a timeout); `then` is not called.
  void forget(const std::string& organization_id, const std::string& event_id);
  /// Called by the store stage for every applied event; cheap when nobody waits.
  void applied(const std::string& organization_id, const std::string& event_id, applied_event what);

  /// Calls `fn(organization)` whenever the store made a bundle version visible or deleted
  /// one (the MCP side regenerates that organisation's bundle tools). Register before
  /// the store starts applying.
  void on_bundles_changed(std::function<void(const std::string& organization_id)> fn);
  /// Called by the store stage after such a change is durable.
  void bundles_changed(const std::string& organization_id);

  /// Calls `fn(organization)` after every applied event (the console's live view); `fn` must
  /// be cheap: it runs on the store stage's thread.
  void on_applied(std::function<void(const std::string& organization_id)> fn);

private:
  using listeners = std::vector<std::function<void(const std::string&)>>;
  std::shared_ptr<const listeners> applied_listeners_ = std::make_shared<const listeners>();
  std::vector<std::function<void(const std::string&)>> bundle_listeners_;
  std::mutex mutex_;
  std::map<std::string, std::function<void(applied_event)>> waiting_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace engram::services
