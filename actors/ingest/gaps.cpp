#include "actors/ingest/gaps.hpp"
#include "config/log.hpp"

#include <spdlog/spdlog.h>

namespace engram::ingest {

bool settle_gap(const gap_handling& h, const actors::log_gap& g, const char* who) {
  auto& log = logging::get(who);
  if (!h.accept || !h.accept(g)) {
    log.error(
        "{}: this partition stops here, the others go on (the broker's retention or size limit deleted "
        "them; {} needs every record). To go on without them: --set ingest.accept_gaps={}:{}",
        g.describe(), g.topic, g.topic, g.partition);
    h.registry->found(g);
    return false;
  }
  if (h.record && !h.record(g)) {
    log.error("{}: accepted, but the gap could not be recorded in the store: this partition stays stopped",
              g.describe());
    h.registry->found(g);
    return false;
  }
  log.error("{}: accepted by the operator; reading goes on at offset {} and the gap is recorded", g.describe(), g.to);
  h.registry->accepted(g);
  return true;
}

}  // namespace engram::ingest
