#include "actors/store/store_watch.hpp"
#include "actors/common/supervisor.hpp"
#include "base/faults.hpp"
#include "logging/log.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <exception>

namespace engram::actors {

caf::behavior store_watch(caf::stateful_actor<store_watch_state>* self,
                          std::vector<std::pair<std::string, caf::actor>> watched,
                          std::function<void(const std::string& why)> failed) {
  self->state.failed = std::move(failed);
  self->set_exception_handler([](caf::scheduled_actor*, std::exception_ptr& x) { return exception_reason(x); });
  throw_if_fault_at("store-watch");  // the failure tests: a watch that fails as it starts
  for (auto& [name, actor] : watched) {
    self->monitor(actor);
    self->state.names[actor.address()] = name;
  }
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    const auto name = st.names.count(dm.source) ? st.names[dm.source] : std::string("a store actor");
    st.names.erase(dm.source);
    if (st.names.empty())
      self->quit();  // all it watched has stopped (engramd's stop, or a failure and then the stop)
    if (dm.reason == caf::none || dm.reason == caf::exit_reason::normal || dm.reason == caf::exit_reason::user_shutdown)
      return;  // engramd stops it
    const auto why = name + " stopped: " + caf::to_string(dm.reason);
    logging::get(logging::module::store).critical("{}", why);
    if (st.failed)
      std::exchange(st.failed, nullptr)(why);  // the first failure is the one reported
  });
  return {[](caf::ok_atom) {}};  // it only watches
}

caf::error applier_exception(const std::string& applier, std::exception_ptr& x) {
  logging::get(logging::module::store).critical("{}: {}", applier, exception_text(x));
  return exception_reason(x);
}

}  // namespace engram::actors
