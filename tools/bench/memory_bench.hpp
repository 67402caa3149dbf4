#pragma once
// Benchmarks of semantic memory: the sentence encoder, the vector index, and dedup /
// contradiction quality tables. They print figures; nothing here asserts a speed.

#include <string>
#include <vector>

namespace engram::bench {

struct embed_figures {
  double single_ms = 0;   ///< int8 encoder, ms per sentence, one at a time (median of the runs)
  double batched_ms = 0;  ///< int8 encoder, ms per sentence, in runs of 64
  double avg_tokens = 0;
  double query_ms = 0, query_tokens = 0;             ///< int8, query-sized texts one at a time
  double float_single_ms = 0, float_batched_ms = 0;  ///< the float32 reference encoder
  double cosine_mean = 0, cosine_min = 0;            ///< int8 vs float32 vectors of the same sentences
};

/// ms per sentence on one core (thread CPU time), one at a time and in runs of 64, for the
/// int8 encoder and the float32 reference; query-sized texts; their agreement. Prints them.
embed_figures embed(const std::string& model_path, const std::vector<std::string>& sentences, int runs);

/// The first `words` words of each sentence: query-sized texts.
std::vector<std::string> first_words(const std::vector<std::string>& sentences, std::size_t words);

/// Recall@10 against brute force and query µs at `n` vectors of the GloVe set.
int index(const std::string& glove_json, std::size_t n, std::size_t queries);

/// Dedup and contradiction tables on the labelled and held-out sets (run from the source root).
int semantic(const std::string& model_path);

}  // namespace engram::bench
