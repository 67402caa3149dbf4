#pragma once
// Reading messages into knowledge, in two places:
// - read_messages(): what the extract stage (the sequencer, before engram-log) does to each
//   batch of inbound messages: rules (or the LLM), the validator, then the embedding of every
//   entry (all the batch's sentences in runs of the encoder). The result goes on engram-log
//   (an extracted-message record), so it is computed once.
// - extractor_stage: the pipeline stage after engram-log, for records that carry no
//   extraction (format 1, written by earlier releases; agents' saves without a vector): it
//   reads them the same way, then hands the batch on, in order. Records that carry their
//   extraction pass through untouched.

#include "actors/common/metrics.hpp"
#include "actors/common/pipeline.hpp"
#include "actors/extractor/embedder.hpp"
#include "actors/extractor/extract.hpp"
#include "schemas/result.hpp"

#include <memory>

namespace engram::actors {

/// What reading needs: the extractor's options, the encoder (null: no vectors) and the
/// counters (null: not counted).
struct reader_context {
  extractor::extractor_options options;
  std::shared_ptr<const extractor::embedder> embedder;
  metrics* counters = nullptr;
  /// Entries embedded per message at most (its first ones); the others are kept without a
  /// vector, so a huge mail costs the encoder a bounded time. 0: no bound.
  std::size_t max_embedded = 64;
};

/// Reads each message (in order) and embeds every entry. `threads` > 1 extracts messages
/// on that many threads (the results keep the messages' order). When the encoder fails the
/// entries keep no vector (dedup then matches exact titles only); counted and logged.
[[nodiscard]] std::vector<schemas::extraction> read_messages(std::span<const schemas::inbound_message> messages,
                                                             const reader_context& ctx, unsigned threads = 1);

struct extractor_state {
  static inline const char* name = "extractor";
  stage_actor next;
  reader_context ctx;
};

stage_actor::behavior_type extractor_stage(stage_actor::stateful_pointer<extractor_state> self, stage_actor next,
                                           reader_context ctx);

/// Embeds the content of the entries of `xs` (at most `max_per_message` of each extraction,
/// its first ones; 0: all) in runs of at most 64 sentences, then gives each passage the sum
/// of the vectors of the entries read from it when they say nearly all of it; the passage of
/// a message of one passage (chat, a short mail) is otherwise embedded as itself, the
/// passages of a longer mail keep their entries' vectors (or none: BM25 finds them). An error when the embedder failed; entries and passages are then left without
/// embeddings.
[[nodiscard]] engram::result<void> embed_entries(const extractor::embedder& e,
                                                 std::span<schemas::extraction* const> xs,
                                                 std::size_t max_per_message = 0);

}  // namespace engram::actors
