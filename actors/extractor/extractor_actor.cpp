#include "actors/extractor/extractor_actor.hpp"
#include "actors/common/log.hpp"

#include "actors/extractor/extract.hpp"
#include "actors/extractor/rules.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace engram::actors {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::extractor); }
}  // namespace

engram::result<void> embed_entries(const extractor::embedder& e, std::span<schemas::extraction* const> xs) {
  constexpr std::size_t run = 64;
  std::vector<schemas::entry*> entries;
  for (auto* x : xs)
    for (auto& en : x->entries)
      entries.push_back(&en);
  std::vector<std::string_view> texts;
  for (std::size_t b = 0; b < entries.size(); b += run) {
    auto n = std::min(run, entries.size() - b);
    texts.clear();
    for (std::size_t i = 0; i < n; ++i)
      texts.push_back(entries[b + i]->content);
    auto vectors = e.embed(texts);
    if (!vectors)
      return engram::fail(vectors.error());
    for (std::size_t i = 0; i < n; ++i)
      entries[b + i]->embedding = std::move((*vectors)[i]);
  }
  return {};
}

stage_actor::behavior_type extractor_stage(stage_actor::stateful_pointer<extractor_state> self, stage_actor next,
                                           extractor::extractor_options options,
                                           std::shared_ptr<const extractor::embedder> embedder, metrics* m) {
  self->state.next = std::move(next);
  self->state.options = options;
  self->state.embedder = std::move(embedder);
  self->state.counters = m;
  return {
      [self](event_batch& batch) {
        auto& st = self->state;
        std::vector<std::shared_ptr<schemas::extraction>> read;
        for (auto& rec : batch.records) {
          if (!rec.message)
            continue;
          if (rec.save) {
            // An agent's statement is taken as given: its type, title and confidence.
            auto x = std::make_shared<schemas::extraction>(extractor::read_save(*rec.save));
            read.push_back(x);
            rec.knowledge = std::move(x);
            continue;
          }
          extractor::validation_report report;
          extractor::llm_failure fallback = extractor::llm_failure::none;
          auto x = std::make_shared<schemas::extraction>(
              extractor::extract_message(*rec.message, st.options, &report, &fallback));
          if (fallback != extractor::llm_failure::none)
            st.counters->count_llm_fallback(extractor::to_string(fallback));
          st.counters->count_extraction(x->entries.size(), report.dropped_low_confidence,
                                        report.injection_signals.empty() ? 0 : x->entries.size(),
                                        report.dropped_injected);
          read.push_back(x);
          rec.knowledge = std::move(x);
        }
        if (st.embedder) {
          std::vector<schemas::extraction*> xs;
          for (auto& x : read)
            xs.push_back(x.get());
          if (auto embedded = embed_entries(*st.embedder, xs); !embedded) {
            // Entries keep no vector: dedup falls back to exact titles for them. Counted.
            logger().warn("embedding failed, entries of this batch are stored without vectors: {}", embedded.error());
            st.counters->count_embedding_failure();
            for (auto* x : xs)
              for (auto& en : x->entries)
                en.embedding.clear();
          }
        }
        self->send(st.next, std::move(batch));
      },
  };
}

}  // namespace engram::actors
