#pragma once
// Recall's query head: a map applied to a query's vector before it is searched, trained here
// (tools/train/recall/train.py, from the question → evidence pairs of
// tools/train/data/conversations/) so that a question lands near the messages that answer it
// rather than near other questions. Only the query is mapped: the vectors on the log and in the
// indexes stay as the encoder made them, and dedup compares them raw.
//
// The map is low-rank and residual: q' = (q + (q U) V) / |q + (q U) V|, U dim × rank,
// V rank × dim. Arithmetic in double in a fixed order: the same query gives the same bits.
//
// Model file (format 1, little-endian):
//   "ENGHEAD1"
//   u32 n, n bytes of JSON: {"format": 1, "name": "...", "encoder": "use-lite-int8",
//       "dim": D, "rank": R}
//   D x R float32: U (row-major), then R x D float32: V (row-major)

#include "base/result.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace engram::embedding {

class query_head {
public:
  /// The head compiled into this binary (embedding/models/query_head.bin).
  [[nodiscard]] static std::shared_ptr<const query_head> builtin();

  /// Reads a head file; the error names the path and what is wrong.
  [[nodiscard]] static engram::result<std::shared_ptr<const query_head>> load(const std::string& path);

  /// Reads a model file's bytes; the error names what is wrong.
  [[nodiscard]] static std::variant<std::shared_ptr<const query_head>, std::string> parse(std::string_view bytes);

  /// The mapped unit vector of a query's vector `q` (dim() values); `q` itself when its size
  /// is not dim() or the map gives a zero vector.
  [[nodiscard]] std::vector<float> apply(std::span<const float> q) const;

  [[nodiscard]] std::size_t dim() const { return dim_; }
  [[nodiscard]] std::size_t rank() const { return rank_; }
  /// The encoder the head was trained on ("use-lite-int8").
  [[nodiscard]] const std::string& encoder() const { return encoder_; }
  /// "query-head-1/<16 hex digits of the file's FNV-1a>".
  [[nodiscard]] const std::string& version() const { return version_; }

private:
  query_head() = default;
  std::size_t dim_ = 0, rank_ = 0;
  std::string encoder_, version_;
  std::vector<float> u_, v_;
};

}  // namespace engram::embedding
