#pragma once
// The entry-type model: a linear softmax classifier over a sentence's embedding (the
// int8 Universal Sentence Encoder's 512-d vector) that says how likely the sentence is each
// entry type, or none. The cue lists of classify.cpp know the phrasings they were written
// for; the model generalises from labelled examples to other wordings ("Mei Chen joined
// Contoso as CTO last month" reads like the labelled events, not like a relationship). The
// rules extractor combines the two (rules.cpp: type_choice).
//
// The weights are trained from the development sets (tests/data/extraction/labelled.jsonl,
// the typed statements of tests/data/dedup/pairs.jsonl and tests/data/contradiction/
// cases.jsonl; never a held-out set) by `engram_train_types`, deterministically: plain
// full-batch gradient descent from zero weights, every sum in a fixed order, no
// randomness. The result is compiled in (type_weights.inc); a test trains again and
// checks the file is what training gives, bit for bit.

#include "embedding/embedder.hpp"
#include "schemas/knowledge.hpp"
#include "base/result.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engram::embedding {

/// Classes: the seven entry types in schemas::all_entry_types order, then none.
inline constexpr std::size_t type_classes = 8;
inline constexpr std::size_t type_none = 7;

using type_probabilities = std::array<float, type_classes>;

struct type_weights {
  std::size_t dim = 0;
  /// type_classes rows of `dim` weights, then one bias per class.
  std::vector<float> w;
  std::array<float, type_classes> bias{};
};

/// The weights trained from the development sets (type_weights.inc).
[[nodiscard]] const type_weights& builtin_type_weights();

/// Softmax of the model's scores for one embedding of weights.dim floats.
[[nodiscard]] type_probabilities type_probabilities_of(const type_weights& weights, std::span<const float> x);

struct type_training {
  std::size_t iterations = 400;
  float learning_rate = 8.0f;
  /// L2 penalty on the weights (not the biases).
  float l2 = 1e-3f;
};

/// Trains the model from embeddings (each of the same size) and their classes (< type_classes).
/// Deterministic: the same examples in the same order give the same bits.
[[nodiscard]] type_weights train_type_model(std::span<const std::vector<float>> x, std::span<const std::uint8_t> y,
                                            const type_training& t = {});

/// type_weights.inc's text for `w` (floats written so they read back exactly).
[[nodiscard]] std::string type_weights_source(const type_weights& w, std::string_view provenance);

/// How the rules extractor weighs the model against the cues. Chosen by cross-validation
/// (engram_train_types --cv 5): on the training statements, which the cues were not written
/// against, lower thresholds read more statements right; on the development messages, which
/// they were, higher ones keep more of the cues' reading; these defaults sit between.
struct type_choice_options {
  /// The model's first class replaces the cues' type when it has at least this probability
  /// and the cues' type at most rules_max.
  float override_min = 0.4f;
  float rules_max = 0.2f;
  /// A sentence the cues found no type for is read as the model's first class (not none)
  /// when it has at least this probability, with confidence added_confidence.
  float add_min = 0.5f;
  double added_confidence = 0.65;
  /// A sentence the cues typed is dropped when the model gives none at least this (above 1:
  /// never).
  float drop_min = 1.1f;
  /// Untyped sentences of one message the model reads at most (its first ones): the
  /// sentences the cues typed are embedded for their entries anyway, these are extra
  /// encoder runs, and a long mail has dozens of them.
  std::size_t max_uncued = 3;
  /// Sentences of one message the model weighs at most, typed and untyped (its first ones);
  /// past them the cues alone decide. A 200 KB mail has thousands of typed sentences, and
  /// their encoder runs were nine tenths of its reading; a message keeps at most 200
  /// entries (extraction.max_entries_per_message), so this bound leaves every ordinary
  /// message as it was. 0: no bound.
  std::size_t max_weighed = 200;
};

/// The model bound to the encoder it was trained on. Thread-safe.
class type_model {
public:
  type_model(std::shared_ptr<const embedder> encoder, type_weights weights = builtin_type_weights(),
             type_choice_options choice = {});
  [[nodiscard]] const type_choice_options& choice() const noexcept { return choice_; }

  /// The class probabilities of each text, in order; an error when the encoder fails or
  /// its vectors are not the weights' size.
  [[nodiscard]] engram::result<std::vector<type_probabilities>> classify(std::span<const std::string_view> texts) const;

  [[nodiscard]] const embedder& encoder() const noexcept { return *encoder_; }

private:
  std::shared_ptr<const embedder> encoder_;
  type_weights weights_;
  type_choice_options choice_;
};

/// The model on the configured encoder when it is the int8 one (`configured`, its cache
/// shared), else on an int8 encoder of its own loaded from cfg.model_path; an error naming
/// the path when that fails.
[[nodiscard]] engram::result<std::shared_ptr<const type_model>> make_type_model(
    const config::embedder_config& cfg, std::shared_ptr<const embedder> configured);

/// The model on an int8 encoder of its own, read from the USE Lite weights at `model_path`
/// (engramctl extract, the benchmarks, the tests).
[[nodiscard]] engram::result<std::shared_ptr<const type_model>> load_type_model(const std::string& model_path);

}  // namespace engram::embedding
