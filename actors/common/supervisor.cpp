#include "actors/common/supervisor.hpp"
#include "logging/log.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <deque>
#include <mutex>
#include <utility>

namespace engram::actors {

struct supervisor::shared {
  supervision s;
  mutable std::mutex mutex;
  caf::actor current;
};

namespace {

using stop_atom = caf::atom_constant<caf::atom("stop")>;

/// Why an actor stopped: the exception's text when it stopped with exception_reason.
std::string reason_text(const caf::error& reason) {
  const auto& context = reason.context();
  if (context.match_elements<std::string>())
    return context.get_as<std::string>(0);
  return caf::to_string(reason);
}

bool asked(const caf::error& reason) {
  return reason == caf::none || reason == caf::exit_reason::normal || reason == caf::exit_reason::user_shutdown;
}

struct watcher_state {
  static inline const char* name = "supervisor";
  std::shared_ptr<supervisor::shared> shared;
  /// When the actor stopped unasked, oldest first, within the window.
  std::deque<std::chrono::steady_clock::time_point> stops;
  bool stopping = false;
};

caf::behavior watcher(caf::stateful_actor<watcher_state>* self, std::shared_ptr<supervisor::shared> sh) {
  self->state.shared = std::move(sh);
  {
    auto& st = *self->state.shared;
    std::lock_guard lock(st.mutex);
    self->monitor(st.current);
  }
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& w = self->state;
    auto& st = *w.shared;
    if (w.stopping || asked(dm.reason)) {
      self->quit();
      return;
    }
    const auto why = reason_text(dm.reason);
    auto& log = logging::get(logging::module::engine);
    const auto now = std::chrono::steady_clock::now();
    w.stops.push_back(now);
    while (!w.stops.empty() && now - w.stops.front() > st.s.window)
      w.stops.pop_front();
    if (w.stops.size() >= st.s.limit) {
      const auto gave = st.s.name + " stopped " + std::to_string(w.stops.size()) + " times within " +
                        std::to_string(st.s.window.count()) + " s; last: " + why;
      log.critical("{}: not started again", gave);
      if (st.s.gave_up)
        st.s.gave_up(gave);
      self->quit();
      return;
    }
    auto next = st.s.spawn();
    self->monitor(next);
    {
      std::lock_guard lock(st.mutex);
      st.current = next;
    }
    log.error("{} stopped: {}; started again", st.s.name, why);
    if (st.s.restarted)
      st.s.restarted(st.s.name, why);
  });
  return {
      // The stop: the actor is told to shut down; its down message ends the watcher.
      [self](stop_atom) {
        self->state.stopping = true;
        auto& st = *self->state.shared;
        std::lock_guard lock(st.mutex);
        self->send_exit(st.current, caf::exit_reason::user_shutdown);
      },
  };
}

}  // namespace

std::string exception_text(std::exception_ptr& x) {
  try {
    std::rethrow_exception(x);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return "an exception of unknown type";
}

caf::error exception_reason(std::exception_ptr& x) {
  const auto what = exception_text(x);
  return caf::error(static_cast<std::uint8_t>(caf::exit_reason::unhandled_exception), caf::atom("exit"),
                    caf::make_message(what));
}

supervisor::supervisor(caf::actor_system& sys, supervision s) : sys_(sys), shared_(std::make_shared<shared>()) {
  shared_->s = std::move(s);
  shared_->current = shared_->s.spawn();
  watcher_ = sys_.spawn(watcher, shared_);
}

supervisor::~supervisor() { stop(); }

caf::actor supervisor::current() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->current;
}

void supervisor::stop() {
  if (!watcher_)
    return;
  caf::scoped_actor self{sys_};
  self->send(watcher_, stop_atom::value);
  self->wait_for(watcher_);
  {
    // The last actor has stopped as well (the watcher quits on its down message), unless
    // the watcher had given up: then it stopped before.
    std::lock_guard lock(shared_->mutex);
    shared_->current = nullptr;
  }
  watcher_ = nullptr;
}

}  // namespace engram::actors
