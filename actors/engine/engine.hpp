#pragma once
// engramd as a library: opens the store, starts the embedded broker when asked, the actor
// pipeline, the engram-log consumer, the sequencer and the HTTP server; stops them in
// reverse order. Tests run it in-process; engramd's main() is a thin shell around it.

#include "services/clock.hpp"
#include "actors/timers/timers.hpp"
#include "services/metrics.hpp"
#include "actors/common/status.hpp"
#include "actors/ingest/sequencer.hpp"
#include "config/config.hpp"
#include "base/result.hpp"
#include "storage/graph_store.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace engram::engine {

struct engine_options {
  ingest::sequencer_options sequencer;
  /// "Now" for MCP and the timers (null: the system clock).
  std::shared_ptr<const services::clock> clock;
  /// Run the timer actor (a round every timers.interval_ms); false: only tick_timers().
  bool timers_thread = true;
  /// Replay (engramctl replay): only engram-log -> pipeline -> store. No sequencer, no
  /// timers, no MCP, no HTTP, no samples: nothing is written to any topic.
  bool replay = false;
  /// With replay: read every message again with today's extractor and encoder instead of
  /// applying what the log says was read (a new digest, by design).
  bool re_extract = false;
  /// With replay: records deleted from engram-log are accepted as lost (engramctl replay
  /// --accept-partial); without it a gap stops its partition and the replay fails.
  bool accept_partial = false;
  /// Asked while start-up waits for Kafka to answer: true stops the wait (start then fails
  /// with "stopped while waiting for Kafka"). Null: wait until it answers.
  std::function<bool()> stopping;
  /// Called once HTTP serves, with its port (the kernel's choice for http.listen's port 0);
  /// an error stops start-up with it. Null: nothing.
  std::function<engram::result<void>(std::uint16_t port)> serving;
};

class engine {
public:
  /// Starts everything, or an error naming what failed (what had started is stopped).
  [[nodiscard]] static engram::result<std::unique_ptr<engine>> start(const config::engram_config& cfg,
                                                                     engine_options opts);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// One round of the timers now (expiry sweeps, reminders), on the caller's thread.
  actors::timers_round tick_timers();

  /// Stops the sequencer, drains the pipeline, stops the HTTP server and the actors. Idempotent.
  void stop();
  /// True when a component failed for good (the store refused a write, an applier stopped
  /// unasked): exit and restart.
  [[nodiscard]] bool failed() const;
  /// What failed, when failed() and something said what ("" otherwise).
  [[nodiscard]] std::string failure() const;

  /// The bootstrap servers in use (the embedded broker's address when embedded).
  [[nodiscard]] const std::string& brokers() const;
  [[nodiscard]] std::uint16_t http_port() const;
  [[nodiscard]] const storage::graph_store& store() const;
  [[nodiscard]] services::metrics& metrics();
  [[nodiscard]] actors::ingest_status& status();
  /// Records deleted from the broker before they were read: open (a partition stopped
  /// there) and accepted since start.
  [[nodiscard]] const actors::gap_registry& gaps() const;
  /// The /v1/stats document.
  [[nodiscard]] std::string stats_json();

private:
  engine() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace engram::engine
