#pragma once
// A sentence vector as Engram keeps it, logs it and indexes it: int8 components and one
// scale. similarity(a, b) = (float(Σ a.q[i]·b.q[i]) · a.scale) · b.scale: the sum is an
// integer, exact on every CPU and in any order, and the two products are single IEEE
// roundings, so a decision made from two vectors is the same decision everywhere.
//
// quantise() maps a float vector v to q[i] = round(v[i] · 127 / max|v|) and scale =
// 1 / ‖q‖, so a vector's similarity with itself is 1 (to one rounding) and the similarity
// of two quantised unit vectors is their cosine to about 1e-3.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engram::schemas {

struct vector8 {
  float scale = 0;
  std::vector<std::int8_t> q;

  [[nodiscard]] bool empty() const noexcept { return q.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return q.size(); }
  bool operator==(const vector8&) const = default;
};

/// The int8 form of `v` (empty for an empty or all-zero vector, or one with a component
/// that is not finite). Pure IEEE float
/// operations in a fixed order: the same bits on every CPU.
[[nodiscard]] vector8 quantise(std::span<const float> v);

/// Σ a[i]·b[i] over min(a.size(), b.size()) components, in 32-bit integers (exact: 512
/// components of at most 127² each stay far below 2^31).
/// AVX-512 VNNI where the CPU has it, else a loop the compiler vectorises: the same sums.
[[nodiscard]] std::int32_t dot_i8(const std::int8_t* a, const std::int8_t* b, std::size_t n) noexcept;
/// The same sum by the loop alone, whatever the CPU (for tests that compare the two).
[[nodiscard]] std::int32_t dot_i8_portable(const std::int8_t* a, const std::int8_t* b, std::size_t n) noexcept;

/// (float(dot) · sa) · sb: the one formula every similarity uses, the index's included.
[[nodiscard]] inline float similarity_of(std::int32_t dot, float sa, float sb) noexcept {
  return static_cast<float>(dot) * (sa * sb);  // sa·sb first: symmetric in a and b
}

/// Cosine of two quantised vectors; 0 when either is empty or their sizes differ.
[[nodiscard]] float similarity(const vector8& a, const vector8& b) noexcept;

/// The float vector `v` approximates (q[i] · scale): for reports and tests.
[[nodiscard]] std::vector<float> dequantise(const vector8& v);

/// Binary form (stored in the `vectors` column family and in branch saves): the scale as 4
/// little-endian bytes of its IEEE bits, then the components. 4 + dim bytes.
[[nodiscard]] std::string to_bytes(const vector8& v);
/// Reads to_bytes(); nullopt when shorter than 4 bytes.
[[nodiscard]] std::optional<vector8> from_bytes(std::string_view bytes);

/// JSON form on engram-log: {"scale": <number>, "q": "<base64 of the components>"}; the
/// components travel as base64 (684 characters for 512 dimensions, not ~2,000).
[[nodiscard]] std::string to_base64(std::span<const std::int8_t> q);
/// Reads to_base64(); nullopt on a character outside the alphabet or bad padding.
[[nodiscard]] std::optional<std::vector<std::int8_t>> from_base64(std::string_view text);

}  // namespace engram::schemas
