#pragma once
// The store stage: the only actor that writes the graph store. Applies each record of a
// batch in its own WriteBatch (mutations + offset advance), in order, then fulfils the
// batch's promise. Spawn it detached: RocksDB writes block.

#include "actors/common/metrics.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/common/status.hpp"
#include "storage/graph_store.hpp"

#include <memory>

namespace engram::actors {

struct store_writer_state {
  static inline const char* name = "store";
  std::shared_ptr<storage::graph_store> store;
  actors::metrics* counters = nullptr;
  /// Told each partition's next offset as soon as it is durable.
  ingest_status* status = nullptr;
};

stage_actor::behavior_type store_writer(stage_actor::stateful_pointer<store_writer_state> self,
                                        std::shared_ptr<storage::graph_store> store, metrics* m,
                                        ingest_status* status);

}  // namespace engram::actors
