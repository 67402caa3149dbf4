#pragma once
// Spawns the actor pipeline: extractor (+ embeddings) -> branch -> store (dedup,
// contradiction, apply). Stages whose issue has not landed pass batches through unchanged.

#include "actors/common/metrics.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/common/status.hpp"
#include "actors/extractor/embedder.hpp"
#include "actors/extractor/extract.hpp"
#include "actors/store/store_writer.hpp"
#include "storage/graph_store.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <vector>

namespace engram::actors {

struct pipeline {
  /// Where the engram-log consumer sends batches.
  stage_actor head;
  /// Every stage, head first, for shutdown.
  std::vector<stage_actor> stages;
};

[[nodiscard]] pipeline spawn_pipeline(caf::actor_system& sys, std::shared_ptr<storage::graph_store> store,
                                      std::shared_ptr<resolver> resolve,
                                      std::shared_ptr<const extractor::embedder> embedder, metrics& m,
                                      ingest_status& status, apply_notifier* notifier,
                                      const extractor::extractor_options& options, std::size_t max_embedded);

}  // namespace engram::actors
