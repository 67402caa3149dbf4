// engramd as a library: engine::start takes the start-up steps in order (startup.cpp) and
// engine::stop undoes what they started in reverse.
#include "actors/engine/engine.hpp"
#include "actors/engine/internal/engine_impl.hpp"
#include "logging/log.hpp"

#include <spdlog/spdlog.h>

namespace engram::engine {

void started_services::add(std::string name, std::function<void()> stop, std::function<void()> release) {
  parts_.push_back({std::move(name), std::move(stop), std::move(release)});
}

void started_services::stop_all() {
  auto& log = logging::get(logging::module::engine);
  for (auto p = parts_.rbegin(); p != parts_.rend(); ++p)
    if (p->stop) {
      log.debug("stopping: {}", p->name);
      p->stop();
    }
  for (auto p = parts_.rbegin(); p != parts_.rend(); ++p)
    if (p->release)
      p->release();
  parts_.clear();
}

engram::result<std::unique_ptr<engine>> engine::start(const config::engram_config& cfg, engine_options opts) {
  std::unique_ptr<engine> e(new engine());
  e->impl_ = std::make_unique<impl>();
  auto& m = *e->impl_;
  m.cfg = cfg;
  m.clock = opts.clock ? opts.clock : std::make_shared<services::system_clock>();
  if (auto started = m.start(std::move(opts)); !started) {
    e->stop();  // what had started, in reverse
    return engram::fail(started.error());
  }
  return e;
}

actors::timers_round engine::tick_timers() {
  if (!impl_ || !impl_->timers)
    return {.problem = "the timers are not running"};
  return impl_->timers->tick();
}

engine::~engine() { stop(); }

void engine::stop() {
  if (!impl_ || impl_->stopped)
    return;
  impl_->stopped = true;
  impl_->started.stop_all();
  logging::get(logging::module::engine).info("stopped");
}

bool engine::failed() const { return impl_->store_failed || (impl_->consumer && impl_->consumer->failed()); }
std::string engine::failure() const {
  std::lock_guard lock(impl_->failure_mutex);
  return impl_->store_failure;
}
const std::string& engine::brokers() const { return impl_->brokers; }
std::uint16_t engine::http_port() const { return impl_->http ? impl_->http->port() : 0; }
const storage::graph_store& engine::store() const { return *impl_->store; }
services::metrics& engine::metrics() { return impl_->metrics; }
actors::ingest_status& engine::status() { return impl_->status; }
const actors::gap_registry& engine::gaps() const { return impl_->gaps; }

std::string engine::stats_json() { return impl_->stats(mcp::grant{"", {"admin"}, "engine", {}}); }

}  // namespace engram::engine
