#include "actors/extractor/extractor_actor.hpp"

#include "actors/extractor/extract.hpp"

#include <caf/all.hpp>

namespace engram::actors {

stage_actor::behavior_type extractor_stage(stage_actor::stateful_pointer<extractor_state> self, stage_actor next,
                                           extractor::extractor_options options, metrics* m) {
  self->state.next = std::move(next);
  self->state.options = options;
  self->state.counters = m;
  return {
      [self](event_batch& batch) {
        auto& st = self->state;
        for (auto& rec : batch.records) {
          if (!rec.message)
            continue;
          extractor::validation_report report;
          extractor::llm_failure fallback = extractor::llm_failure::none;
          auto x = std::make_shared<schemas::extraction>(
              extractor::extract_message(*rec.message, st.options, &report, &fallback));
          if (fallback != extractor::llm_failure::none)
            st.counters->count_llm_fallback(extractor::to_string(fallback));
          st.counters->count_extraction(x->entries.size(), report.dropped_low_confidence,
                                        report.injection_signals.empty() ? 0 : x->entries.size());
          rec.knowledge = std::move(x);
        }
        self->send(st.next, std::move(batch));
      },
  };
}

}  // namespace engram::actors
