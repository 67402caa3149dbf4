#include "actors/engine/pipeline.hpp"

#include "actors/extractor/extractor_actor.hpp"
#include "actors/store/store_writer.hpp"

#include <caf/all.hpp>

namespace engram::actors {
namespace {

/// A stage whose logic has not landed yet: forwards each batch, in order.
stage_actor::behavior_type pass_through(stage_actor::pointer self, stage_actor next) {
  return {[self, next](event_batch& batch) { self->send(next, std::move(batch)); }};
}

}  // namespace

pipeline spawn_pipeline(caf::actor_system& sys, std::shared_ptr<storage::graph_store> store,
                        std::shared_ptr<resolver> resolve, std::shared_ptr<const extractor::embedder> embedder,
                        metrics& m, ingest_status& status, apply_notifier* notifier,
                        const extractor::extractor_options& options, std::size_t max_embedded) {
  pipeline p;
  // RocksDB writes block: the store gets its own thread. Dedup and contradiction run in it,
  // just before each record is applied, so every decision sees every earlier record.
  stage_actor next = sys.spawn<caf::detached>(store_writer, std::move(store), std::move(resolve), &m, &status, notifier);
  p.stages.push_back(next);
  next = sys.spawn(pass_through, next);  // branch: its own actor with its issue
  p.stages.insert(p.stages.begin(), next);
  // Records of format 1 (and saves without a vector) are read here: the encoder runs for
  // milliseconds per batch and an LLM call blocks for up to its timeout, so the extractor
  // gets its own thread.
  next = sys.spawn<caf::detached>(extractor_stage, next, reader_context{options, std::move(embedder), &m, max_embedded});
  p.stages.insert(p.stages.begin(), next);
  p.head = next;
  return p;
}

}  // namespace engram::actors
