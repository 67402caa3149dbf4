#pragma once
// The sequencer: reads inbound-messages in its own consumer group, validates each event
// and appends it to engram-log (key = organizationId), or sends it to the dead-letter
// topic with the reason. The inbound offset is committed only after the appends of the
// batch are acknowledged (acks=all), so an event is forwarded at least once; a duplicate
// on engram-log is a no-op when applied (the store knows every eventId).

#include "actors/common/metrics.hpp"
#include "config/config.hpp"
#include "schemas/result.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace engram::ingest {

/// The header carrying the dead-letter reason ("field: reason").
inline constexpr const char* reason_header = "reason";

struct sequencer_options {
  /// Test seam: called after a batch's appends are acknowledged and before the inbound
  /// offsets are committed. Returning false stops the sequencer right there, without
  /// committing, the way a crash at that moment would.
  std::function<bool()> before_commit;
};

class sequencer {
public:
  /// Starts the consumer thread. An error when a client cannot be made.
  [[nodiscard]] static engram::result<std::unique_ptr<sequencer>> start(const config::engram_config& cfg,
                                                                        const std::string& brokers,
                                                                        actors::metrics& metrics,
                                                                        sequencer_options opts);
  ~sequencer();
  /// Stops the thread after its current batch; leaves the consumer group.
  void stop();
  /// True while the thread runs.
  [[nodiscard]] bool running() const { return running_; }

private:
  sequencer() = default;
  void run();
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace engram::ingest
