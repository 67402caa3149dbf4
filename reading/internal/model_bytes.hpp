#pragma once
// Reading the little-endian integers of a model file (name_tagger.cpp, relation_classifier.cpp).
// Internal to reading/.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading::detail {

/// The u32 at `pos`, then `pos` past it; false when `in` is cut short.
inline bool read_u32(std::string_view in, std::size_t& pos, std::uint32_t& v) {
  if (in.size() - std::min(pos, in.size()) < 4)
    return false;
  v = 0;
  for (int i = 0; i < 4; ++i)
    v |= std::uint32_t(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 4;
  return true;
}

/// `n` i32 from `pos` into `out`; false when `in` is cut short.
inline bool read_i32s(std::string_view in, std::size_t& pos, std::size_t n, std::vector<std::int32_t>& out) {
  out.resize(n);
  for (auto& v : out) {
    std::uint32_t u = 0;
    if (!read_u32(in, pos, u))
      return false;
    v = static_cast<std::int32_t>(u);
  }
  return true;
}

/// `v` as 16 lower-case hex digits (a model's version).
inline std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace engram::reading::detail
