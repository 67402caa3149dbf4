#pragma once
// Watches the store's actors (each applier, and the router in front of several): one that
// stops for any reason but a shutdown is reported once, by name and reason. What it held in
// memory (an organisation's vector index, with the record it failed on half resolved) may
// be ahead of RocksDB, so nothing tries to carry on: the engine stops (engramd exits 1), and
// the next start rebuilds that state from RocksDB and resumes from the stored offsets,
// where each record's write put its offset. The watch itself runs under a supervisor
// (actors/common/supervisor.hpp): started again, it watches the same actors.

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace engram::actors {

struct store_watch_state {
  static inline const char* name = "store-watch";
  std::map<caf::actor_addr, std::string> names;
  std::function<void(const std::string& why)> failed;
};

/// `watched`: each actor with the name it is reported by. `failed` is called (on the watch's
/// thread) with "<name> stopped: <reason>" for the first actor that stops unasked. The watch
/// quits once every actor it watches has stopped, so when the actor system has joined them
/// all, `failed` has been told.
caf::behavior store_watch(caf::stateful_actor<store_watch_state>* self,
                          std::vector<std::pair<std::string, caf::actor>> watched,
                          std::function<void(const std::string& why)> failed);

/// An exception out of an applier's handler, as the reason it stops with (its text kept).
caf::error applier_exception(const std::string& applier, std::exception_ptr& x);

}  // namespace engram::actors
