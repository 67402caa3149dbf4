#pragma once
// Benchmarks of semantic memory: the sentence encoder, the vector index, and dedup /
// contradiction quality tables. They print figures; nothing here asserts a speed.

#include <string>
#include <vector>

namespace engram::bench {

struct embed_figures {
  double single_ms = 0;   ///< ms per sentence, one at a time (median of the runs)
  double batched_ms = 0;  ///< ms per sentence, in runs of 64
  double avg_tokens = 0;
};

/// ms per sentence on one core (thread CPU time), one at a time and in runs of 64; prints them.
embed_figures embed(const std::string& model_path, const std::vector<std::string>& sentences, int runs);

/// Recall@10 against brute force and query µs at `n` vectors of the GloVe set.
int index(const std::string& glove_json, std::size_t n, std::size_t queries);

/// Dedup and contradiction tables on the labelled and held-out sets (run from the source root).
int semantic(const std::string& model_path);

}  // namespace engram::bench
