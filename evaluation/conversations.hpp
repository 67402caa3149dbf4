#pragma once
// recall-conversations: long multi-session chats (tests/data/conversations: dev/ and the
// held-out heldout/, written by helpers that never saw the code) produced as chat events
// into an engine, then every question asked at the end of its conversation with
// recall_knowledge (limit 10, over MCP). A question is answered at k when one of its answer
// messages is among the first k results' sources (an entry's eventId and sources, a passage's
// eventId). Beside it, a BM25 over the raw message texts (no knowledge at all): recall@1, @5
// and @10 of both per kind of question, in one run.
//
// Dates: each conversation is moved by whole weeks (weekdays keep their meaning) so that it
// ends in the week before the run (questions are asked at its end; decay runs on the wall clock).

#include "config/config.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace engram::evaluation {

struct conversation_figures {
  /// Ranks recall is counted at: 1, 5 and 10.
  static constexpr std::size_t ranks[3] = {1, 5, 10};
  struct row {
    std::size_t questions = 0, engram = 0, bm25 = 0;  // hits at 10
    std::size_t engram_at[3] = {}, bm25_at[3] = {};   // hits at each of ranks
  };
  /// Per kind of question ("single", "multi", "temporal", "inference") and "all" of them, which
  /// have answers: a hit is an answer message among the results. "none": questions with no answer
  /// (`answers` []), where a hit is an empty answer.
  std::map<std::string, row> by_kind;
  std::size_t messages = 0, conversations = 0;
};

/// Runs one set (the .json files of `dir`) on an engine with the settings of `engine` (its
/// reading, recall and encoder: recall.query_head is "builtin", "none" or a head file) over a
/// broker and a store of the run's own (a broker in this process; a store in a temporary
/// directory, removed after), and prints its table under `label`. Throws std::runtime_error
/// when the engine does not start, apply the conversations or answer.
conversation_figures recall_conversations(const std::string& dir, const std::string& label,
                                          config::engram_config engine);

}  // namespace engram::evaluation
