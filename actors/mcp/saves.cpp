#include "actors/mcp/saves.hpp"
#include "actors/common/busy_clock.hpp"
#include "actors/common/supervisor.hpp"
#include "base/faults.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <utility>

namespace engram::actors {

namespace {
using appended_atom = caf::atom_constant<caf::atom("appended")>;
using applied_atom = caf::atom_constant<caf::atom("applied")>;
using timeout_atom = caf::atom_constant<caf::atom("timeout")>;

using state = services::save_outcome::state;

/// What the metrics call it.
const std::string metrics_name = "mcp-saves";

using waiting_map = decltype(saves_state::waiting);

/// Answers the save at `it` with `outcome` and stops tracking it; with `forget`, it stops
/// waiting for the store first.
void finish(saves_state& st, waiting_map::iterator it, services::save_outcome outcome, bool forget) {
  auto save = std::move(it->second.save);
  st.waiting.erase(it);
  if (forget)
    st.links.notifier->forget(save.organization_id(), save.event_id());
  save.answer(std::move(outcome));
}
}  // namespace

saves_state::~saves_state() {
  // Stopped with saves waiting: the notifier must not call into this actor any more; each
  // save is answered "stopped" as its last copy goes.
  for (auto& [id, w] : waiting)
    links.notifier->forget(w.save.organization_id(), w.save.event_id());
}

caf::behavior saves(caf::stateful_actor<saves_state>* self, save_links links) {
  self->state.links = std::move(links);
  // A fault stops it with its reason (its supervisor says it and starts it again); each save
  // waiting is answered as the state goes.
  self->set_exception_handler([](caf::scheduled_actor*, std::exception_ptr& x) { return exception_reason(x); });
  return {
      [self](services::pending_save& save) {
        busy_clock clock(self->state.links.metrics, metrics_name, self);
        auto& st = self->state;
        const auto id = st.next++;
        st.waiting.emplace(id, saves_state::waiting_save{save});
        const auto me = caf::actor_cast<caf::actor>(self);
        // Registered before the append, so the store's answer cannot be missed.
        st.links.notifier->expect(save.organization_id(), save.event_id(), [me, id](services::applied_event what) {
          caf::anon_send(me, applied_atom::value, id, std::move(what));
        });
        save.appending();
        st.links.append(save.record(), [me, id](engram::result<void> appended) {
          caf::anon_send(me, appended_atom::value, id, appended ? std::string() : appended.error());
        });
        self->delayed_send(self, save.wait(), timeout_atom::value, id);
        throw_if_fault_at("saves");  // the failure tests: stopped with this save on its way
      },
      [self](appended_atom, std::uint64_t id, const std::string& refused) {
        busy_clock clock(self->state.links.metrics, metrics_name, self);
        auto it = self->state.waiting.find(id);
        if (it == self->state.waiting.end())
          return;  // applied already
        if (!refused.empty())
          finish(self->state, it, {state::not_appended, {}, refused}, true);
        else if (it->second.late)
          finish(self->state, it, {state::not_applied_in_time, {}, {}}, true);
        else
          it->second.appended = true;
      },
      [self](applied_atom, std::uint64_t id, services::applied_event& what) {
        busy_clock clock(self->state.links.metrics, metrics_name, self);
        if (auto it = self->state.waiting.find(id); it != self->state.waiting.end())
          finish(self->state, it, {state::applied, std::move(what), {}}, false);
      },
      // How many saves wait, and how many of them for a delivery report past their wait.
      [self](caf::get_atom) {
        const auto& w = self->state.waiting;
        const auto late = std::count_if(w.begin(), w.end(), [](const auto& kv) { return kv.second.late; });
        return caf::make_message(w.size(), static_cast<std::size_t>(late));
      },
      [self](timeout_atom, std::uint64_t id) {
        busy_clock clock(self->state.links.metrics, metrics_name, self);
        auto it = self->state.waiting.find(id);
        if (it == self->state.waiting.end())
          return;
        if (it->second.appended)
          finish(self->state, it, {state::not_applied_in_time, {}, {}}, true);
        else
          it->second.late = true;  // the delivery report decides (within the delivery timeout)
      },
  };
}

}  // namespace engram::actors
