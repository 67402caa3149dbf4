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

pipeline spawn_pipeline(caf::actor_system& sys, std::shared_ptr<storage::graph_store> store, metrics& m,
                        ingest_status& status, const extractor::extractor_options& options) {
  pipeline p;
  // RocksDB writes block: the store gets its own thread.
  stage_actor next = sys.spawn<caf::detached>(store_writer, std::move(store), &m, &status);
  p.stages.push_back(next);
  for (const char* stage : {"branch", "contradiction", "dedup"}) {
    (void)stage;  // named for the reader: each becomes its own actor with its issue
    next = sys.spawn(pass_through, next);
    p.stages.insert(p.stages.begin(), next);
  }
  // An LLM call blocks for up to its timeout: that stage gets its own thread.
  next = options.kind == extractor::extractor_kind::llm ? sys.spawn<caf::detached>(extractor_stage, next, options, &m)
                                                        : sys.spawn(extractor_stage, next, options, &m);
  p.stages.insert(p.stages.begin(), next);
  p.head = next;
  return p;
}

}  // namespace engram::actors
