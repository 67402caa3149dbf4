#pragma once
// The store's front door when several appliers run (store.appliers > 1): takes the
// consumers' batches (the same stage_actor handle one applier offers) and gives each
// applier its partitions' records, partition p to applier p mod appliers, in the order they
// came. A batch with records of several appliers is split; its promise is fulfilled once
// every part is applied (batch_join). A partition drop goes to the partition's applier, so it
// runs between that partition's batches.

#include "services/metrics.hpp"
#include "actors/common/pipeline.hpp"

#include <vector>

namespace engram::actors {

struct store_router_state {
  static inline const char* name = "store-router";
  std::vector<stage_actor> appliers;
  /// Told each batch's time and the mailbox left (null: not counted).
  services::metrics* metrics = nullptr;
};

stage_actor::behavior_type store_router(stage_actor::stateful_pointer<store_router_state> self,
                                        std::vector<stage_actor> appliers, services::metrics* metrics);

}  // namespace engram::actors
