#pragma once
// The Universal Sentence Encoder Lite model file and tokenizer, shared by the float encoder
// (use_lite.cpp) and the int8 encoder (use_lite_int8.cpp). Internal to embedding/.
//
// File (written by tools/embedder/convert-use.js): "EGUSE001", u32 8000, then per piece
// f64 score, u32 length, UTF-8 bytes; u32 tensor count, then per tensor u32 name length,
// name, u32 element count, float32 elements (little-endian throughout).

#include "base/result.hpp"
#include "embedding/embedder.hpp"

#include <unicode/uversion.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

U_NAMESPACE_BEGIN
class Normalizer2;
U_NAMESPACE_END

namespace engram::embedding::detail {

/// At most this many tokens of a sentence are read by the model.
inline constexpr std::size_t use_lite_max_tokens = 128;
/// Attention heads of both layers.
inline constexpr int use_lite_heads = 4;

/// The float tensors of one transformer layer (pointers into use_lite_model::weights; weight
/// matrices are row-major [in, out]).
struct use_lite_layer {
  const float *ln1_scale = nullptr, *ln1_bias = nullptr;
  const float *qkv_w = nullptr, *qkv_b = nullptr;  // [in, 3 * width]: q | k | v
  const float *out_w = nullptr, *out_b = nullptr;  // [width, 512]
  const float *res_w = nullptr, *res_b = nullptr;  // layer 0: [256, 512]; layer 1: none (identity)
  const float *ln2_scale = nullptr, *ln2_bias = nullptr;
  const float *ffn1_w = nullptr, *ffn1_b = nullptr;  // [512, 1536]
  const float *ffn2_w = nullptr, *ffn2_b = nullptr;  // [1536, 512]
  float q_scale = 0;
  int in = 0, width = 0;  // input width; attention width (256 in layer 0, 512 in layer 1)
};

/// The converted model: vocabulary and tensors, read once, immutable afterwards.
struct use_lite_model {
  /// Every tensor's floats, copied out of the file (where they sit at any byte offset) so
  /// that each is aligned for float; the tensor pointers below point into it.
  std::vector<float> weights;
  /// The pieces as a trie over code points (ids 0..5 are never matched): (node << 21 | code
  /// point) -> child node, node 0 the root; piece_of[node] is the (score, id) of the piece
  /// ending there, id -1 when none. Tokenizing walks it from each start instead of hashing
  /// every substring.
  std::unordered_map<std::uint64_t, std::uint32_t> trie;
  std::vector<std::pair<double, std::int32_t>> piece_of{{0.0, -1}};
  const float* embeddings = nullptr;  // [8002, 256]
  const float* timing_inv = nullptr;  // [128]
  const float* tanh_w = nullptr;      // [512, 512]
  const float* tanh_b = nullptr;      // [512]
  float ln_eps = 1e-6f, l2_eps = 1e-12f;
  use_lite_layer layers[2];
  const icu::Normalizer2* nfkc = nullptr;
};

/// Reads the converted model file, its tensors changed by `adapter` when given; an error
/// naming the path and the reason.
[[nodiscard]] engram::result<std::unique_ptr<use_lite_model>> load_use_lite_model(
    const std::string& path, const encoder_adapter* adapter = nullptr);

/// Tensors by name, in the order of their table.
using named_tensors = std::vector<std::pair<std::string, std::vector<float>>>;

/// A tensor table (u32 count, then per tensor u32 name length, name, u32 element count,
/// float32 elements) from `bytes` at `at`, which is moved past it; an error saying what is
/// truncated. The model file's format, and the type model file's (type_model.hpp).
[[nodiscard]] engram::result<named_tensors> read_tensors(std::string_view bytes, std::size_t& at);

/// The token ids the model reads for `text` (NFKC, SentencePiece unigram), unclipped.
[[nodiscard]] std::vector<std::int32_t> tokenize(const use_lite_model& model, std::string_view text);

}  // namespace engram::embedding::detail
