#pragma once
// The extractor stage: reads every inbound message of a batch (rules, then the validator),
// embeds every entry's content (all of the batch's sentences in one run of the encoder),
// attaches the result to its record, then hands the batch on, in order.

#include "actors/common/metrics.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/extractor/embedder.hpp"
#include "actors/extractor/extract.hpp"
#include "schemas/result.hpp"

#include <memory>

namespace engram::actors {

struct extractor_state {
  static inline const char* name = "extractor";
  stage_actor next;
  extractor::extractor_options options;
  std::shared_ptr<const extractor::embedder> embedder;
  metrics* counters = nullptr;
};

stage_actor::behavior_type extractor_stage(stage_actor::stateful_pointer<extractor_state> self, stage_actor next,
                                           extractor::extractor_options options,
                                           std::shared_ptr<const extractor::embedder> embedder, metrics* m);

/// Embeds the content of every entry of `xs` in runs of at most 64 sentences. An error
/// when the embedder failed; entries are then left without embeddings.
[[nodiscard]] engram::result<void> embed_entries(const extractor::embedder& e,
                                                 std::span<schemas::extraction* const> xs);

}  // namespace engram::actors
