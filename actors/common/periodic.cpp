#include "actors/common/periodic.hpp"
#include "actors/common/busy_clock.hpp"
#include "actors/common/supervisor.hpp"

#include <caf/all.hpp>

#include <utility>

namespace engram::actors {

namespace {
using work_atom = caf::atom_constant<caf::atom("work")>;
}  // namespace

caf::behavior periodic(caf::event_based_actor* self, std::string name, std::chrono::milliseconds interval,
                       std::function<void()> work, services::metrics* m) {
  self->set_exception_handler([](caf::scheduled_actor*, std::exception_ptr& x) { return exception_reason(x); });
  self->send(self, work_atom::value);
  return {
      [self, name = std::move(name), interval, work = std::move(work), m](work_atom) {
        {
          busy_clock clock(m, name, self);
          work();
        }
        self->delayed_send(self, interval, work_atom::value);
      },
  };
}

}  // namespace engram::actors
