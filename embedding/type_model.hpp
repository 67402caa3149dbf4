#pragma once
// The entry-type model: a linear softmax classifier over a sentence's embedding and its words
// and word pairs (hashed) that says how likely the sentence is each entry type, or none. The
// embedding is the int8 Universal Sentence Encoder's 512-d vector with the encoder changed by
// an adapter trained for types (builtin_type_adapter: rank-8 updates of its matrices, its
// biases and layer norms, merged before quantising), so the model runs an encoder of its own.
// The cue lists of classify.cpp know the phrasings they were written for; the model
// generalises from labelled examples to other wordings ("Mei Chen joined Contoso as CTO last
// month" reads like the labelled events, not like a relationship). The rules extractor
// combines the two (rules.cpp: type_choice).
//
// Both parts are trained from the development sets (tests/data/extraction/labelled.jsonl and
// the messages and statements written for training, the typed statements of
// tests/data/dedup/pairs.jsonl and tests/data/contradiction/cases.jsonl; never a held-out set):
// the adapter by tools/train/types/encoder.py (PyTorch, one thread, seeded), the weights over
// the adapted encoder's vectors by `engram_train_types`, deterministically: plain full-batch
// gradient descent from zero weights, every sum in a fixed order, no randomness. Both are
// compiled in (models/type_adapter.bin, pinned by its checksum, and type_weights.inc); a
// test trains the weights again and checks the file is what training gives, bit for bit.

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

/// A sentence's words as the model reads them: its lower-case ASCII words and the pairs of
/// words that follow each other (a run of digits is one "0"; '@' and apostrophes belong to a
/// word), each hashed (FNV-1a) into one of `buckets`, counted, and scaled to length `scale`.
/// Sorted by bucket, each once.
struct word_feature {
  std::uint32_t bucket;
  float value;
};
[[nodiscard]] std::vector<word_feature> word_features(std::string_view text, std::size_t buckets, float scale);

struct type_weights {
  std::size_t dim = 0;
  /// type_classes rows of `dim` weights, then one bias per class.
  std::vector<float> w;
  std::array<float, type_classes> bias{};
  /// The words' part (none when 0): type_classes rows of `buckets` weights over
  /// word_features(text, buckets, word_scale).
  std::size_t buckets = 0;
  float word_scale = 0.0f;
  std::vector<float> words;
};

/// The weights trained from the development sets (type_weights.inc).
[[nodiscard]] const type_weights& builtin_type_weights();

/// Softmax of the model's scores for one embedding of weights.dim floats and the sentence's
/// word features (word_features with the weights' buckets and scale).
[[nodiscard]] type_probabilities type_probabilities_of(const type_weights& weights, std::span<const float> x,
                                                       std::span<const word_feature> words = {});

struct type_training {
  std::size_t iterations = 800;
  float learning_rate = 8.0f;
  /// L2 penalty on the weights (not the biases).
  float l2 = 1e-4f;
  /// The words' part: hash buckets (0: the embedding alone) and the length of a sentence's
  /// word vector beside the unit-length embedding.
  std::size_t buckets = 8192;
  float word_scale = 2.0f;
};

/// Trains the model from embeddings (each of the same size), the texts they embed and their
/// classes (< type_classes). Deterministic: the same examples in the same order give the
/// same bits.
[[nodiscard]] type_weights train_type_model(std::span<const std::vector<float>> x, std::span<const std::string> texts,
                                            std::span<const std::uint8_t> y, const type_training& t = {});

/// type_weights.inc's text for `w` (floats written so they read back exactly).
[[nodiscard]] std::string type_weights_source(const type_weights& w, std::string_view provenance);

/// How the rules extractor weighs the model against the cues. Chosen on the second development
/// set of messages (tests/data/extraction/dev2.jsonl, which neither the cues nor the model were
/// trained on: engram_train_types --grid); cross-validation over the first development set
/// (--cv 5) favours the cues, which were written against it.
struct type_choice_options {
  /// The model's first class replaces the cues' type when it has at least this probability
  /// and the cues' type at most rules_max.
  float override_min = 0.3f;
  float rules_max = 0.3f;
  /// A sentence the cues found no type for is read as the model's first class (not none)
  /// when it has at least this probability, with confidence added_confidence.
  float add_min = 0.5f;
  double added_confidence = 0.65;
  /// A sentence the cues typed is dropped when the model gives none at least this (above 1:
  /// never): small talk the cues read as a statement ("Hope the winter is treating you kindly!").
  float drop_min = 0.6f;
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

/// An adapter file: the int8 encoder's change trained for entry types (tools/train/types/
/// encoder.py), under which the built-in weights are trained. Format 1, little-endian:
///   "ENGADPT1"
///   u32 n, n bytes of JSON: {"encoder": "use-lite-int8", "format": 1, "rank": R}
///   a tensor table in the USE Lite model file's layout (internal/use_lite_model.hpp):
///       "<matrix>.a" [rows, R] then "<matrix>.b" [R, columns] for each matrix updated, and
///       the encoder's tensors replaced, under their own names (biases, layer norms).
/// Its digest is the FNV-1a of the bytes. An error says what is wrong with them.
[[nodiscard]] engram::result<encoder_adapter> parse_encoder_adapter(std::string_view bytes);

/// The adapter compiled in (embedding/models/type_adapter.bin), which the built-in weights
/// (type_weights.inc) were trained under.
[[nodiscard]] const encoder_adapter& builtin_type_adapter();

/// The model bound to the encoder it was trained on. Thread-safe.
class type_model {
public:
  /// `encoder` gives the vectors `weights` were trained on (for the built-in weights, the int8
  /// encoder under builtin_type_adapter()).
  type_model(std::shared_ptr<const embedder> encoder, type_weights weights = builtin_type_weights(),
             type_choice_options choice = {});
  [[nodiscard]] const type_choice_options& choice() const noexcept { return choice_; }

  /// The class probabilities of each text, in order; an error when the encoder fails or
  /// its vectors are not the weights' size.
  [[nodiscard]] engram::result<std::vector<type_probabilities>> classify(std::span<const std::string_view> texts) const;

  [[nodiscard]] const embedder& encoder() const noexcept { return *encoder_; }

  /// "types-3/<16 hex digits of the FNV-1a of the encoder's name and the weights>": the
  /// reader's version, for the log (types-3: the encoder changed by an adapter, whose digest
  /// its name carries).
  [[nodiscard]] const std::string& version() const noexcept { return version_; }

private:
  std::shared_ptr<const embedder> encoder_;
  type_weights weights_;
  type_choice_options choice_;
  std::string version_;
};

/// The built-in model on an int8 encoder of its own, loaded from cfg.model_path and changed by
/// builtin_type_adapter(); an error naming the path when that fails.
[[nodiscard]] engram::result<std::shared_ptr<const type_model>> make_type_model(const config::embedder_config& cfg);

/// make_type_model with the USE Lite weights at `model_path` (engramctl extract, the
/// benchmarks, the tests).
[[nodiscard]] engram::result<std::shared_ptr<const type_model>> load_type_model(const std::string& model_path);

}  // namespace engram::embedding
