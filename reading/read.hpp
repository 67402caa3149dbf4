#pragma once
// Reading messages into knowledge, a batch at a time: rules (or the LLM), the validator, then
// the embedding of every entry (all the batch's sentences in runs of the encoder).
// - read_messages(): what the extract stage (the sequencer, before engram-log) does to each
//   batch of inbound messages. The result goes on engram-log (an extracted-message record),
//   so it is computed once.
// - read_unread(): what the engram-log consumer does to the few records that carry no
//   reading (format 1, written by earlier releases; `engramctl replay --re-extract`; agents'
//   saves that came without a vector), so the store applies every record as logged.

#include "base/result.hpp"
#include "embedding/embedder.hpp"
#include "reading/extract.hpp"
#include "reading/observer.hpp"
#include "schemas/log_record.hpp"

#include <atomic>
#include <memory>
#include <span>

namespace engram::reading {

/// What reading needs: the extractor's options, the encoder (null: no vectors) and the
/// counters (null: not counted).
struct reader_context {
  extractor_options options;
  std::shared_ptr<const embedding::embedder> embedder;
  read_observer* counters = nullptr;
  /// Entries embedded per message at most (its first ones); the others are kept without a
  /// vector, so a huge mail costs the encoder a bounded time. 0: no bound.
  std::size_t max_embedded = 64;
  /// Set: read_messages() stops between messages once it turns true, and what it returns is
  /// then incomplete (messages left unread, nothing embedded): the caller drops it. The
  /// extract stage's stop request, so a stop waits for one message a thread at most.
  const std::atomic<bool>* stop = nullptr;
};

/// Reads each message (in order) and embeds every entry. `threads` > 1 extracts messages
/// on that many threads (the results keep the messages' order). `ctx.stop` may cut it short. When the encoder fails the
/// entries keep no vector (dedup then matches exact titles only); counted and logged.
[[nodiscard]] std::vector<schemas::extraction> read_messages(std::span<const schemas::inbound_message> messages,
                                                             const reader_context& ctx, unsigned threads = 1);

/// Reads, in place, what the records of one engram-log batch leave unread: a message of
/// format 1 becomes an extracted message; with `re_extract`, every extracted message is read
/// again (what it says was read is dropped); a save without a vector gets one. Commands and
/// everything else are left as they are. The messages are read as one batch, in order.
void read_unread(std::span<schemas::log_payload* const> records, const reader_context& ctx, bool re_extract);

/// Embeds the content of the entries of `xs` (at most `max_per_message` of each extraction,
/// its first ones; 0: all) in runs of at most 64 sentences, then gives each passage the sum
/// of the vectors of the entries read from it when they say nearly all of it; the passage of
/// a message of one passage (chat, a short mail) is otherwise embedded as itself, the
/// passages of a longer mail keep their entries' vectors (or none: BM25 finds them). An error
/// when the embedder failed; entries and passages are then left without embeddings.
[[nodiscard]] engram::result<void> embed_entries(const embedding::embedder& e, std::span<schemas::extraction* const> xs,
                                                 std::size_t max_per_message = 0);

}  // namespace engram::reading
