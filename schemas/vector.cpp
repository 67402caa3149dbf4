#include "schemas/vector.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace engram::schemas {

vector8 quantise(std::span<const float> v) {
  vector8 out;
  float top = 0;
  for (float x : v) {
    if (!std::isfinite(x))
      return out;  // no direction to keep
    top = std::max(top, std::fabs(x));
  }
  if (!(top > 0))
    return out;
  const float k = 127.0f / top;
  out.q.resize(v.size());
  std::int64_t norm2 = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float r = std::nearbyint(v[i] * k);  // round half to even, the default mode
    const auto c = static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
    out.q[i] = c;
    norm2 += std::int64_t(c) * c;
  }
  // norm2 <= dim · 127², exact in a float for any dim below 1,040: one sqrt, one division.
  out.scale = 1.0f / std::sqrt(static_cast<float>(norm2));
  return out;
}

namespace {

// Integer sums give the same result in any order, so every kernel below gives the same dot
// product to the bit; which one runs is a matter of speed only.

// The compiler vectorises this as it likes: one clone per instruction set, picked at load.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
std::int32_t
dot_loop(const std::int8_t* a, const std::int8_t* b, std::size_t n) noexcept {
  std::int32_t s = 0;
  for (std::size_t i = 0; i < n; ++i)
    s += std::int32_t(a[i]) * std::int32_t(b[i]);
  return s;
}

#if defined(__x86_64__) && defined(__GNUC__)
/// AVX-512 VNNI: vpdpbusd multiplies unsigned bytes by signed ones, so a is read as a + 128
/// (its sign bit flipped) and 128 · Σb taken off: Σ(a + 128)·b − 128·Σb = Σa·b, exact for
/// every int8 (|Σ(a + 128)·b| ≤ n · 255 · 128 fits an int32 for n below 65,000). 64 bytes a
/// step, the tail by a masked load.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) std::int32_t dot_vnni(const std::int8_t* a, const std::int8_t* b,
                                                                             std::size_t n) noexcept {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80)), ones = _mm512_set1_epi8(1);
  __m512i ab = _mm512_setzero_si512(), sb = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i va = _mm512_loadu_si512(a + i), vb = _mm512_loadu_si512(b + i);
    ab = _mm512_dpbusd_epi32(ab, _mm512_xor_si512(va, flip), vb);
    sb = _mm512_dpbusd_epi32(sb, ones, vb);
  }
  if (i < n) {
    const __mmask64 m = n - i == 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i va = _mm512_maskz_loadu_epi8(m, a + i), vb = _mm512_maskz_loadu_epi8(m, b + i);
    // Masked-off lanes: b is 0 there, so (0 ^ 0x80)·0 adds nothing.
    ab = _mm512_dpbusd_epi32(ab, _mm512_xor_si512(va, flip), vb);
    sb = _mm512_dpbusd_epi32(sb, ones, vb);
  }
  return _mm512_reduce_add_epi32(ab) - 128 * _mm512_reduce_add_epi32(sb);
}
#endif

using dot_kernel = std::int32_t (*)(const std::int8_t*, const std::int8_t*, std::size_t) noexcept;

dot_kernel pick_dot() noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
    return &dot_vnni;
#endif
  return &dot_loop;
}

}  // namespace

std::int32_t dot_i8(const std::int8_t* a, const std::int8_t* b, std::size_t n) noexcept {
  static const dot_kernel chosen = pick_dot();  // here, not at load: a static's initialiser may call it
  return chosen(a, b, n);
}

std::int32_t dot_i8_portable(const std::int8_t* a, const std::int8_t* b, std::size_t n) noexcept {
  return dot_loop(a, b, n);
}

float similarity(const vector8& a, const vector8& b) noexcept {
  if (a.q.empty() || a.q.size() != b.q.size())
    return 0;
  return similarity_of(dot_i8(a.q.data(), b.q.data(), a.q.size()), a.scale, b.scale);
}

std::vector<float> dequantise(const vector8& v) {
  std::vector<float> out(v.q.size());
  for (std::size_t i = 0; i < v.q.size(); ++i)
    out[i] = static_cast<float>(v.q[i]) * v.scale;
  return out;
}

std::string to_bytes(const vector8& v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v.scale, 4);
  std::string out(4 + v.q.size(), '\0');
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 4, v.q.data(), v.q.size());
  return out;
}

std::optional<vector8> from_bytes(std::string_view bytes) {
  if (bytes.size() < 4)
    return std::nullopt;
  std::uint32_t bits = 0;
  for (int i = 0; i < 4; ++i)
    bits |= std::uint32_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  vector8 v;
  std::memcpy(&v.scale, &bits, 4);
  v.q.resize(bytes.size() - 4);
  std::memcpy(v.q.data(), bytes.data() + 4, v.q.size());
  return v;
}

namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> decoding = [] {
  std::array<std::int8_t, 256> t{};
  t.fill(-1);
  for (int i = 0; i < 64; ++i)
    t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return t;
}();

}  // namespace

std::string to_base64(std::span<const std::int8_t> q) {
  std::string out;
  out.reserve((q.size() + 2) / 3 * 4);
  auto byte = [&](std::size_t i) { return std::uint32_t(static_cast<std::uint8_t>(q[i])); };
  std::size_t i = 0;
  for (; i + 3 <= q.size(); i += 3) {
    const std::uint32_t w = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int s = 18; s >= 0; s -= 6)
      out.push_back(alphabet[(w >> s) & 63]);
  }
  if (const auto rest = q.size() - i; rest > 0) {
    const std::uint32_t w = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out.push_back(alphabet[(w >> 18) & 63]);
    out.push_back(alphabet[(w >> 12) & 63]);
    out.push_back(rest == 2 ? alphabet[(w >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::vector<std::int8_t>> from_base64(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::vector<std::int8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (pad == 1 && text[i + 2] == '=')
      return std::nullopt;  // "x=y=" is not padding
    std::uint32_t w = 0;
    for (int k = 0; k < 4 - pad; ++k) {
      const auto d = decoding[static_cast<unsigned char>(text[i + k])];
      if (d < 0)
        return std::nullopt;
      w |= std::uint32_t(d) << (18 - 6 * k);
    }
    for (int k = 0; k < 3 - pad; ++k)
      out.push_back(static_cast<std::int8_t>(static_cast<std::uint8_t>(w >> (16 - 8 * k))));
  }
  return out;
}

}  // namespace engram::schemas
