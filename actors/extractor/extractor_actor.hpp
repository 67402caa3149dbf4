#pragma once
// The extractor stage: reads every inbound message of a batch (rules, then the validator)
// and attaches the result to its record, then hands the batch on, in order.

#include "actors/common/metrics.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/extractor/extract.hpp"

namespace engram::actors {

struct extractor_state {
  static inline const char* name = "extractor";
  stage_actor next;
  extractor::extractor_options options;
  metrics* counters = nullptr;
};

stage_actor::behavior_type extractor_stage(stage_actor::stateful_pointer<extractor_state> self, stage_actor next,
                                           extractor::extractor_options options, metrics* m);

}  // namespace engram::actors
