// Universal Sentence Encoder Lite with int8 dense layers, the same bits on every CPU path.
//
// The graph is the float encoder's (use_lite.cpp; tokens and tensors from
// use_lite_model.cpp). What differs is the arithmetic, chosen so that a sentence embeds to
// the same bits alone or in any batch, with one thread or two, on the AVX-512 VNNI, the
// AVX2 and the portable path, and on any machine:
//   dense   every product (qkv, attention output, layer 0's residual dense, ffn1, ffn2 and
//           the final tanh dense): weights int8 symmetric, one float scale per output
//           column (quantised at load); activations int8 symmetric, one scale per token row
//           (scale = maxabs / 127, q = round-half-even(x * (127 / maxabs)) within +-127, a
//           zero row gives zeros); sums in int32, which are exact, so any order gives the
//           same integer; then y = ((float)acc * sx[row]) * sw[col] + b[col], each a
//           separate IEEE operation (no FMA: the file is built with -ffp-contract=off).
//           AVX-512: vpdpbusd (u8 x s8) on activations + 128, the accumulators starting at
//           -128 * (column sum of the weights); AVX2: exact int16 products (vpmaddwd);
//           portable: plain loops over int16 products summed in int32.
//   float   layer norm, attention (float, per sentence and head), softmax, ReLU, pooling,
//           tanh and the l2 norm use only +, -, *, / and sqrt in one fixed order: every sum
//           runs sequentially in its index; vector code only computes independent outputs
//           side by side (the same source is compiled for each path: ENGRAM_FLOAT_KERNELS).
//           exp and tanh are ours (lanes::exp, lanes::tanh); the timing signal's sin and cos
//           are ours too, tabulated at load. No libm call runs in the forward pass.
// Nothing depends on the batch: scales are per row, attention is per sentence.
//
// Built without -march (baseline x86-64); the AVX-512 and AVX2 functions carry their own
// target attributes and run only when the CPU has the features (checked at load).

#include "embedding/embedder.hpp"
#include "embedding/internal/use_lite_model.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <new>
#include <thread>

// The ABI of 32- and 64-byte vectors without AVX does not matter here: the functions that
// take or return them are internal and always inlined.
#pragma GCC diagnostic ignored "-Wpsabi"
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns about the "undefined value" idiom inside its own AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace engram::embedding {

std::optional<encoder_isa> parse_encoder_isa(std::string_view s) {
  if (s == "auto")
    return encoder_isa::automatic;
  if (s == "avx512")
    return encoder_isa::avx512;
  if (s == "avx2")
    return encoder_isa::avx2;
  if (s == "portable")
    return encoder_isa::portable;
  return std::nullopt;
}

std::string_view to_string(encoder_isa isa) {
  switch (isa) {
    case encoder_isa::automatic: return "auto";
    case encoder_isa::avx512: return "avx512";
    case encoder_isa::avx2: return "avx2";
    case encoder_isa::portable: return "portable";
  }
  return "?";
}

namespace {

constexpr std::size_t max_tokens = detail::use_lite_max_tokens;
constexpr int heads = detail::use_lite_heads;

/// Uninitialised storage aligned to 64 bytes (one cache line, one zmm load), for trivial T.
template <class T>
class aligned_buffer {
public:
  void resize(std::size_t n) {
    if (n > capacity_) {
      data_.reset(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))));
      capacity_ = n;
    }
    size_ = n;
  }
  T* data() noexcept { return data_.get(); }
  const T* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }

private:
  struct release {
    void operator()(T* p) const noexcept { ::operator delete(p, std::align_val_t(64)); }
  };
  std::unique_ptr<T, release> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

// ---------------------------------------------------------------------------------------
// Exact scalar arithmetic: IEEE +, -, *, / and sqrt only, so every machine rounds alike.

#define ENGRAM_INLINE __attribute__((always_inline)) inline

/// Round half to even for |v| < 2^22 (adding 1.5 * 2^23 leaves no fraction bits).
ENGRAM_INLINE float round_even(float v) {
  constexpr float magic = 12582912.0f;
  return (v + magic) - magic;
}

ENGRAM_INLINE float sqrt_exact(float v) {
#if defined(__x86_64__)
  return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(v)));  // sqrtss: correctly rounded, no errno path
#else
  return __builtin_sqrtf(v);
#endif
}

/// L float lanes: the path's vector register (16 on AVX-512, 8 on AVX2, 4 portable). Their
/// operations are lane by lane, so the width changes no result.
typedef float vf4 __attribute__((vector_size(16)));
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf16 __attribute__((vector_size(64)));
typedef std::int32_t vi4 __attribute__((vector_size(16)));
typedef std::int32_t vi8 __attribute__((vector_size(32)));
typedef std::int32_t vi16 __attribute__((vector_size(64)));
typedef std::uint32_t vu4 __attribute__((vector_size(16)));
typedef std::uint32_t vu8 __attribute__((vector_size(32)));
typedef std::uint32_t vu16 __attribute__((vector_size(64)));

template <int L>
struct vector_types;
template <>
struct vector_types<4> {
  using f = vf4;
  using i = vi4;
  using u = vu4;
};
template <>
struct vector_types<8> {
  using f = vf8;
  using i = vi8;
  using u = vu8;
};
template <>
struct vector_types<16> {
  using f = vf16;
  using i = vi16;
  using u = vu16;
};

template <int L>
struct lanes {
  using f = typename vector_types<L>::f;
  using i = typename vector_types<L>::i;
  using u = typename vector_types<L>::u;

  ENGRAM_INLINE static f splat(float v) { return f{} + v; }

  ENGRAM_INLINE static f load(const float* p) {
    f v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }

  ENGRAM_INLINE static void store(float* p, const f& v) { std::memcpy(p, &v, sizeof v); }

  /// e^x per lane, within a few ulp, for x <= 88; 0 for x <= -80 (so never a subnormal)
  /// and for NaN. x = k ln2 + r with |r| <= ln2 / 2; e^r by its Taylor polynomial of
  /// degree 7 (the first term left out is below 1e-8); k added to the exponent bits.
  ENGRAM_INLINE static f exp(const f& x) {
    const f xc = x < splat(88.0f) ? x : splat(88.0f);
    const f k = (xc * 1.44269502f + 12582912.0f) - 12582912.0f;  // round(x log2 e), half to even
    const f r = (xc - k * 0.693145751953125f)                    // ln2's first 16 bits: k * this is exact
                - k * 1.42860677e-6f;                            // the rest of ln2
    f p = splat(1.0f / 5040.0f);
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const u scaled = std::bit_cast<u>(p) + (std::bit_cast<u>(__builtin_convertvector(k, i)) << 23);
    return x > splat(-80.0f) ? std::bit_cast<f>(scaled) : f{};
  }

  /// tanh per lane from exp: sign(y) (1 - e) / (1 + e), e = e^(-2|y|).
  ENGRAM_INLINE static f tanh(const f& y) {
    const u bits = std::bit_cast<u>(y);
    const u sign = bits & 0x80000000u, magnitude = bits & 0x7fffffffu;
    const f e = exp(std::bit_cast<f>(magnitude) * -2.0f);
    const f t = (1.0f - e) / (1.0f + e);
    return std::bit_cast<f>(std::bit_cast<u>(t) | sign);
  }
};

/// sin and cos of a in double (for |a| < 2^20): a = n pi/2 + r, |r| <= pi/4, Taylor series
/// of sin r and cos r to r^17 and r^18 (the rest below 1e-17), the quadrant from n.
void sincos_fixed(double a, double& s, double& c) {
  constexpr double half_pi = 1.5707963267948966;
  constexpr double magic = 6755399441055744.0;  // 1.5 * 2^52: rounds to an integer
  const double n = (a * (1.0 / half_pi) + magic) - magic;
  const double r = a - n * half_pi;
  const double r2 = r * r;
  auto factorial = [](int n) {
    double f = 1;
    for (int i = 2; i <= n; ++i)
      f *= i;
    return f;
  };
  // Horner from the highest term down: sin r = r (1 - r^2/3! + r^4/5! - ...),
  // cos r = 1 - r^2/2! + r^4/4! - ...
  double ps = 0, pc = 0;
  for (int m = 8; m >= 0; --m)
    ps = ps * r2 + (m % 2 == 0 ? 1.0 : -1.0) / factorial(2 * m + 1);
  for (int m = 9; m >= 0; --m)
    pc = pc * r2 + (m % 2 == 0 ? 1.0 : -1.0) / factorial(2 * m);
  const double sr = ps * r, cr = pc;
  switch (static_cast<long long>(n) & 3) {
    case 0:
      s = sr;
      c = cr;
      break;
    case 1:
      s = cr;
      c = -sr;
      break;
    case 2:
      s = -sr;
      c = -cr;
      break;
    default:
      s = -cr;
      c = sr;
      break;
  }
}

// ---------------------------------------------------------------------------------------
// Quantised operands.

/// A dense layer's weights: int8, one scale per output column, in the layout of the path.
struct qweights {
  int in = 0, out = 0;
  aligned_buffer<std::int8_t> w;
  aligned_buffer<std::int16_t> w16;   // AVX2 and portable: the values widened to int16
  aligned_buffer<std::int32_t> corr;  // AVX-512: -128 * column sum (the accumulators' start)
  std::vector<float> scale;           // per output column
  const float* bias = nullptr;
};

/// Activations of one product: int8 values in the layout of the path (AVX-512: uint8 q +
/// 128; AVX2 and portable: int16), row-major [rows, in]; one scale per row.
struct qacts {
  int rows = 0, in = 0;
  aligned_buffer<unsigned char> bytes;
  std::vector<float> scale;
};

/// Weights [in, out] row-major -> int8 column-major [out, in] and the column scales.
void quantise_weights(const float* w, int in, int out, std::vector<std::int8_t>& q, std::vector<float>& scale) {
  q.assign(std::size_t(in) * out, 0);
  scale.assign(out, 0.0f);
  for (int c = 0; c < out; ++c) {
    std::uint32_t mb = 0;
    for (int i = 0; i < in; ++i)
      mb = std::max(mb, std::bit_cast<std::uint32_t>(w[std::size_t(i) * out + c]) & 0x7fffffffu);
    const float m = std::bit_cast<float>(mb);
    if (!(m > 0.0f && m <= FLT_MAX))
      continue;
    const float inv = 127.0f / m;
    scale[c] = m / 127.0f;
    for (int i = 0; i < in; ++i) {
      float t = round_even(w[std::size_t(i) * out + c] * inv);
      t = t < -127.0f ? -127.0f : t;
      t = t > 127.0f ? 127.0f : t;
      q[std::size_t(c) * in + i] = static_cast<std::int8_t>(static_cast<int>(t));
    }
  }
}

/// One row of activations -> int8 (as Out, plus `offset`), returning the row's scale.
/// maxabs is the largest magnitude, found on the bits (a non-negative float's bits order
/// as integers); a zero row, or one with an infinity or NaN, quantises to zeros.
template <class Out, int offset, bool relu>
ENGRAM_INLINE float quantise_row(const float* x, int in, Out* q) {
  std::uint32_t mb = 0;
  if (relu) {
    std::int32_t sb = 0;  // negative floats (and -0) have negative bits: ReLU drops them
    for (int i = 0; i < in; ++i)
      sb = std::max(sb, std::bit_cast<std::int32_t>(x[i]));
    mb = static_cast<std::uint32_t>(sb);
  } else {
    for (int i = 0; i < in; ++i)
      mb = std::max(mb, std::bit_cast<std::uint32_t>(x[i]) & 0x7fffffffu);
  }
  const float m = std::bit_cast<float>(mb);
  float inv = 0, scale = 0;
  if (m > 0.0f && m <= FLT_MAX) {
    inv = 127.0f / m;
    scale = m / 127.0f;
  }
  for (int i = 0; i < in; ++i) {
    const float v = relu ? (x[i] > 0.0f ? x[i] : 0.0f) : x[i];
    float t = round_even(v * inv);
    t = t < -127.0f ? -127.0f : t;
    t = t > 127.0f ? 127.0f : t;
    q[i] = static_cast<Out>(static_cast<int>(t) + offset);
  }
  return scale;
}

template <class Out, int offset>
ENGRAM_INLINE void quantise_rows(const float* x, std::size_t ld, int rows, int in, bool relu, qacts& a) {
  a.rows = rows;
  a.in = in;
  a.bytes.resize(std::size_t(rows) * in * sizeof(Out));
  a.scale.resize(rows);
  auto* q = reinterpret_cast<Out*>(a.bytes.data());
  for (int r = 0; r < rows; ++r)
    a.scale[r] = relu ? quantise_row<Out, offset, true>(x + r * ld, in, q + std::size_t(r) * in)
                      : quantise_row<Out, offset, false>(x + r * ld, in, q + std::size_t(r) * in);
}

// ---------------------------------------------------------------------------------------
// The float steps, written once. Each path compiles them into its own functions (below),
// with its vector width; no step sums in another order than its index, so the widths
// change nothing.

namespace generic {

/// y = (scale * r) * (x - mean) + bias per row, r = 1 / sqrt(var + eps). Eight rows side
/// by side, each summed in its own index order.
ENGRAM_INLINE void layer_norm(const float* x, std::size_t ldx, int rows, int d, const float* scale, const float* bias,
                              float eps, float* y, std::size_t ldy) {
  constexpr int group = 8;
  for (int r0 = 0; r0 < rows; r0 += group) {
    const int g = std::min(group, rows - r0);
    float mean[group] = {}, var[group] = {}, rs[group] = {};
    const float* xr = x + r0 * ldx;
    for (int i = 0; i < d; ++i)
      for (int k = 0; k < g; ++k)
        mean[k] += xr[k * ldx + i];
    for (int k = 0; k < g; ++k)
      mean[k] /= static_cast<float>(d);
    for (int i = 0; i < d; ++i)
      for (int k = 0; k < g; ++k) {
        const float t = xr[k * ldx + i] - mean[k];
        var[k] += t * t;
      }
    for (int k = 0; k < g; ++k) {
      var[k] /= static_cast<float>(d);
      rs[k] = 1.0f / sqrt_exact(var[k] + eps);
    }
    for (int k = 0; k < g; ++k) {
      const float* in = xr + k * ldx;
      float* out = y + (r0 + k) * ldy;
      const float m = mean[k], r = rs[k];
      for (int i = 0; i < d; ++i)
        out[i] = (scale[i] * r) * (in[i] - m) + bias[i];
    }
  }
}

/// One head of one sentence: rows [0, T) of the q, k and v columns (at qoff, koff, voff
/// of `qkv`, row stride ld) -> `o`. Scores q.k summed over d in order, L keys side by side
/// for 4 queries; softmax with lanes::exp, its denominator summed over keys in order;
/// o = the sum over keys in order of p v, 2L output columns side by side for 2 queries.
/// kt: dh * 128 floats; sc: 4 * 128; qs: 4 * 128.
template <int L>
ENGRAM_INLINE void attention_head(const float* qkv, std::size_t ld, int T, int qoff, int koff, int voff, int dh,
                                  float q_scale, float* o, std::size_t ldo, float* kt, float* sc, float* qs) {
  using V = lanes<L>;
  using vf = typename V::f;
  const int tp = (T + 15) & ~15;
  for (int j = 0; j < T; ++j) {
    const float* k = qkv + j * ld + koff;
    for (int d = 0; d < dh; ++d)
      kt[d * tp + j] = k[d];
  }
  for (int d = 0; d < dh; ++d)
    for (int j = T; j < tp; ++j)
      kt[d * tp + j] = 0.0f;
  constexpr int group = 4;
  for (int i0 = 0; i0 < T; i0 += group) {
    const int g = std::min(group, T - i0);
    for (int r = 0; r < group; ++r)
      for (int d = 0; d < dh; ++d)
        qs[r * 128 + d] = r < g ? qkv[(i0 + r) * ld + qoff + d] * q_scale : 0.0f;
    for (int jb = 0; jb < tp; jb += L) {
      vf a0 = {}, a1 = {}, a2 = {}, a3 = {};
      for (int d = 0; d < dh; ++d) {
        const vf k = V::load(kt + d * tp + jb);
        a0 = a0 + qs[d] * k;
        a1 = a1 + qs[128 + d] * k;
        a2 = a2 + qs[256 + d] * k;
        a3 = a3 + qs[384 + d] * k;
      }
      V::store(sc + jb, a0);
      V::store(sc + 128 + jb, a1);
      V::store(sc + 256 + jb, a2);
      V::store(sc + 384 + jb, a3);
    }
    for (int r = 0; r < g; ++r) {
      float* p = sc + r * 128;
      float m = p[0];
      for (int j = 1; j < T; ++j)
        m = p[j] > m ? p[j] : m;
      for (int jb = 0; jb < tp; jb += L)  // lanes past T are computed and never read
        V::store(p + jb, V::exp(V::load(p + jb) - m));
      float sum = 0.0f;
      for (int j = 0; j < T; ++j)
        sum += p[j];
      for (int j = 0; j < T; ++j)
        p[j] = p[j] / sum;
    }
    for (int r = 0; r < g; r += 2) {
      const bool two = r + 1 < g;
      const float* p0 = sc + r * 128;
      const float* p1 = sc + (two ? r + 1 : r) * 128;
      for (int db = 0; db < dh; db += 2 * L) {
        vf a0 = {}, a1 = {}, b0 = {}, b1 = {};
        for (int j = 0; j < T; ++j) {
          const float* v = qkv + j * ld + voff + db;
          const vf v0 = V::load(v), v1 = V::load(v + L);
          a0 = a0 + p0[j] * v0;
          a1 = a1 + p0[j] * v1;
          b0 = b0 + p1[j] * v0;
          b1 = b1 + p1[j] * v1;
        }
        float* out = o + (i0 + r) * ldo + db;
        V::store(out, a0);
        V::store(out + L, a1);
        if (two) {
          V::store(out + ldo, b0);
          V::store(out + ldo + L, b1);
        }
      }
    }
  }
}

ENGRAM_INLINE void add(const float* a, const float* b, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    y[i] = a[i] + b[i];
}

/// Mean of rows [start, start + len) of x (width 512), summed in row order.
ENGRAM_INLINE void mean_rows(const float* x, std::size_t start, std::size_t len, float* p) {
  for (int j = 0; j < 512; ++j)
    p[j] = 0.0f;
  for (std::size_t t = 0; t < len; ++t) {
    const float* r = x + (start + t) * 512;
    for (int j = 0; j < 512; ++j)
      p[j] = p[j] + r[j];
  }
  const float count = static_cast<float>(std::max<std::size_t>(len, 1));
  for (int j = 0; j < 512; ++j)
    p[j] = p[j] / count;
}

/// out = l2normalise(tanh(y)) for one 512-wide row; the squares summed in order.
template <int L>
ENGRAM_INLINE void finish(float* y, float l2_eps, float* out) {
  using V = lanes<L>;
  for (int j = 0; j < 512; j += L)
    V::store(y + j, V::tanh(V::load(y + j)));
  float ss = 0;
  for (int j = 0; j < 512; ++j)
    ss += y[j] * y[j];
  const float scale = 1.0f / sqrt_exact(std::max(ss, l2_eps));
  for (int j = 0; j < 512; ++j)
    out[j] = y[j] * scale;
}

}  // namespace generic

// ---------------------------------------------------------------------------------------
// The paths.

/// What a path provides; the forward pass (use_lite_int8_embedder::embed) calls through it.
struct kernels {
  encoder_isa isa;
  /// Lays out int8 column-major weights [out, in] for gemm.
  void (*pack)(const std::vector<std::int8_t>& q, qweights& w);
  void (*quantise)(const float* x, std::size_t ld, int rows, int in, bool relu, qacts& a);
  /// Rows [r0, r1) and columns [c0, c1) of y = dequantised (a . w) + bias.
  void (*gemm)(const qacts& a, const qweights& w, float* y, std::size_t ldy, int r0, int r1, int c0, int c1);
  void (*layer_norm)(const float* x, std::size_t ldx, int rows, int d, const float* scale, const float* bias, float eps,
                     float* y, std::size_t ldy);
  void (*attention_head)(const float* qkv, std::size_t ld, int T, int qoff, int koff, int voff, int dh, float q_scale,
                         float* o, std::size_t ldo, float* kt, float* sc, float* qs);
  void (*add)(const float* a, const float* b, float* y, std::size_t n);
  void (*mean_rows)(const float* x, std::size_t start, std::size_t len, float* p);
  void (*finish)(float* y, float l2_eps, float* out);
};

/// The float steps for one path: the generic code inlined into functions with the path's
/// target attribute, L float lanes wide.
#define ENGRAM_FLOAT_KERNELS(prefix, attr, L)                                                                      \
  attr void prefix##_layer_norm(const float* x, std::size_t ldx, int rows, int d, const float* scale,              \
                                const float* bias, float eps, float* y, std::size_t ldy) {                         \
    generic::layer_norm(x, ldx, rows, d, scale, bias, eps, y, ldy);                                                \
  }                                                                                                                \
  attr void prefix##_attention_head(const float* qkv, std::size_t ld, int T, int qoff, int koff, int voff, int dh, \
                                    float q_scale, float* o, std::size_t ldo, float* kt, float* sc, float* qs) {   \
    generic::attention_head<L>(qkv, ld, T, qoff, koff, voff, dh, q_scale, o, ldo, kt, sc, qs);                     \
  }                                                                                                                \
  attr void prefix##_add(const float* a, const float* b, float* y, std::size_t n) { generic::add(a, b, y, n); }    \
  attr void prefix##_mean_rows(const float* x, std::size_t start, std::size_t len, float* p) {                     \
    generic::mean_rows(x, start, len, p);                                                                          \
  }                                                                                                                \
  attr void prefix##_finish(float* y, float l2_eps, float* out) { generic::finish<L>(y, l2_eps, out); }

// --- portable -------------------------------------------------------------------------

ENGRAM_FLOAT_KERNELS(portable, , 4)

// Weights column-major [out, in] and activations, both widened to int16: compilers turn the
// int16 dot products below into multiply-add vector instructions (pmaddwd, smlal).

void portable_pack(const std::vector<std::int8_t>& q, qweights& w) {
  w.w16.resize(q.size());
  std::copy(q.begin(), q.end(), w.w16.data());
}

void portable_quantise(const float* x, std::size_t ld, int rows, int in, bool relu, qacts& a) {
  quantise_rows<std::int16_t, 0>(x, ld, rows, in, relu, a);
}

void portable_gemm(const qacts& a, const qweights& w, float* y, std::size_t ldy, int r0, int r1, int c0, int c1) {
  const int in = w.in;
  const auto* X = reinterpret_cast<const std::int16_t*>(a.bytes.data());
  int r = r0;
  for (; r + 4 <= r1; r += 4) {  // four rows share each weight load
    const std::int16_t* x0 = X + std::size_t(r) * in;
    const std::int16_t *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in;
    for (int c = c0; c < c1; ++c) {
      const std::int16_t* wc = w.w16.data() + std::size_t(c) * in;
      std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int i = 0; i < in; ++i) {
        s0 += x0[i] * wc[i];
        s1 += x1[i] * wc[i];
        s2 += x2[i] * wc[i];
        s3 += x3[i] * wc[i];
      }
      const std::int32_t acc[4] = {s0, s1, s2, s3};
      for (int k = 0; k < 4; ++k)
        y[std::size_t(r + k) * ldy + c] = (static_cast<float>(acc[k]) * a.scale[r + k]) * w.scale[c] + w.bias[c];
    }
  }
  for (; r < r1; ++r) {
    const std::int16_t* xr = X + std::size_t(r) * in;
    for (int c = c0; c < c1; ++c) {
      const std::int16_t* wc = w.w16.data() + std::size_t(c) * in;
      std::int32_t acc = 0;
      for (int i = 0; i < in; ++i)
        acc += xr[i] * wc[i];
      y[std::size_t(r) * ldy + c] = (static_cast<float>(acc) * a.scale[r]) * w.scale[c] + w.bias[c];
    }
  }
}

constexpr kernels portable_kernels{encoder_isa::portable, portable_pack,       portable_quantise,
                                   portable_gemm,         portable_layer_norm, portable_attention_head,
                                   portable_add,          portable_mean_rows,  portable_finish};

#if defined(__x86_64__)

#define ENGRAM_AVX512 __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define ENGRAM_AVX2 __attribute__((target("avx2")))

// --- AVX2 -----------------------------------------------------------------------------
// Weights widened to int16, in blocks of 16 columns; per pair of inputs 64 bytes: columns
// 0..7 then 8..15, each column's two weights side by side. vpmaddwd multiplies them by the
// row's pair of activations (int16): exact products, exact int32 sums.

ENGRAM_FLOAT_KERNELS(avx2, ENGRAM_AVX2, 8)

void avx2_pack(const std::vector<std::int8_t>& q, qweights& w) {
  const int in = w.in, out = w.out;
  w.w16.resize(q.size());
  std::int16_t* p = w.w16.data();
  for (int cb = 0; cb < out / 16; ++cb)
    for (int pr = 0; pr < in / 2; ++pr)
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 8; ++j)
          for (int k = 0; k < 2; ++k)
            *p++ = q[std::size_t(cb * 16 + h * 8 + j) * in + 2 * pr + k];
}

ENGRAM_AVX2 void avx2_quantise(const float* x, std::size_t ld, int rows, int in, bool relu, qacts& a) {
  quantise_rows<std::int16_t, 0>(x, ld, rows, in, relu, a);
}

template <int R>
ENGRAM_AVX2 ENGRAM_INLINE void avx2_tile(const std::int16_t* x, int in, const std::int16_t* wb, const float* sx,
                                         const float* sw, const float* b, float* y, std::size_t ldy) {
  __m256i acc0[R], acc1[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc0[r] = _mm256_setzero_si256();
    acc1[r] = _mm256_setzero_si256();
  }
  for (int pr = 0; pr < in / 2; ++pr) {
    const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(wb + pr * 32));
    const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(wb + pr * 32 + 16));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      std::int32_t v;
      std::memcpy(&v, x + std::size_t(r) * in + 2 * pr, 4);
      const __m256i a = _mm256_set1_epi32(v);
      acc0[r] = _mm256_add_epi32(_mm256_madd_epi16(a, w0), acc0[r]);
      acc1[r] = _mm256_add_epi32(_mm256_madd_epi16(a, w1), acc1[r]);
    }
  }
  const __m256 s0 = _mm256_loadu_ps(sw), s1 = _mm256_loadu_ps(sw + 8);
  const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m256 sr = _mm256_set1_ps(sx[r]);
    float* yr = y + std::size_t(r) * ldy;
    _mm256_storeu_ps(yr, _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc0[r]), sr), s0), b0));
    _mm256_storeu_ps(yr + 8, _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc1[r]), sr), s1), b1));
  }
}

ENGRAM_AVX2 void avx2_gemm(const qacts& a, const qweights& w, float* y, std::size_t ldy, int r0, int r1, int c0,
                           int c1) {
  constexpr int tile = 4, chunk = 192;
  const int in = w.in;
  const auto* X = reinterpret_cast<const std::int16_t*>(a.bytes.data());
  for (int rc = r0; rc < r1; rc += chunk) {
    const int re = std::min(r1, rc + chunk);
    for (int cb = c0 / 16; cb < c1 / 16; ++cb) {
      const std::int16_t* wb = w.w16.data() + std::size_t(cb) * in * 16;
      const float* sw = w.scale.data() + cb * 16;
      const float* b = w.bias + cb * 16;
      for (int r = rc; r < re; r += tile) {
        const std::int16_t* xr = X + std::size_t(r) * in;
        float* yr = y + std::size_t(r) * ldy + cb * 16;
        const float* sx = a.scale.data() + r;
        switch (std::min(tile, re - r)) {
          case 4: avx2_tile<4>(xr, in, wb, sx, sw, b, yr, ldy); break;
          case 3: avx2_tile<3>(xr, in, wb, sx, sw, b, yr, ldy); break;
          case 2: avx2_tile<2>(xr, in, wb, sx, sw, b, yr, ldy); break;
          default: avx2_tile<1>(xr, in, wb, sx, sw, b, yr, ldy); break;
        }
      }
    }
  }
}

constexpr kernels avx2_kernels{encoder_isa::avx2,   avx2_pack, avx2_quantise,  avx2_gemm,  avx2_layer_norm,
                               avx2_attention_head, avx2_add,  avx2_mean_rows, avx2_finish};

// --- AVX-512 VNNI ---------------------------------------------------------------------
// Weights in blocks of 32 columns; per quad of inputs 128 bytes: columns 0..15 then
// 16..31, each column's four weights side by side, so one 64-byte load feeds vpdpbusd
// for 16 columns. Activations are q + 128 (uint8); the accumulators start at -128 times
// the column sums, so they end at the sum of q * w.

ENGRAM_FLOAT_KERNELS(avx512, ENGRAM_AVX512, 16)

void avx512_pack(const std::vector<std::int8_t>& q, qweights& w) {
  const int in = w.in, out = w.out;
  w.w.resize(q.size());
  std::int8_t* p = w.w.data();
  for (int cb = 0; cb < out / 32; ++cb)
    for (int kq = 0; kq < in / 4; ++kq)
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 16; ++j)
          for (int k = 0; k < 4; ++k)
            *p++ = q[std::size_t(cb * 32 + h * 16 + j) * in + 4 * kq + k];
  w.corr.resize(out);
  for (int c = 0; c < out; ++c) {
    std::int32_t sum = 0;
    for (int i = 0; i < in; ++i)
      sum += q[std::size_t(c) * in + i];
    w.corr.data()[c] = -128 * sum;
  }
}

ENGRAM_AVX512 void avx512_quantise(const float* x, std::size_t ld, int rows, int in, bool relu, qacts& a) {
  quantise_rows<std::uint8_t, 128>(x, ld, rows, in, relu, a);
}

template <int R>
ENGRAM_AVX512 ENGRAM_INLINE void avx512_tile(const std::uint8_t* x, int in, const std::int8_t* wb,
                                             const std::int32_t* corr, const float* sx, const float* sw, const float* b,
                                             float* y, std::size_t ldy) {
  __m512i acc0[R], acc1[R];
  const __m512i k0 = _mm512_load_si512(corr), k1 = _mm512_load_si512(corr + 16);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    acc0[r] = k0;
    acc1[r] = k1;
  }
  for (int kq = 0; kq < in / 4; ++kq) {
    const __m512i w0 = _mm512_load_si512(wb + kq * 128), w1 = _mm512_load_si512(wb + kq * 128 + 64);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      std::int32_t v;
      std::memcpy(&v, x + std::size_t(r) * in + 4 * kq, 4);
      const __m512i a = _mm512_set1_epi32(v);
      acc0[r] = _mm512_dpbusd_epi32(acc0[r], a, w0);
      acc1[r] = _mm512_dpbusd_epi32(acc1[r], a, w1);
    }
  }
  const __m512 s0 = _mm512_loadu_ps(sw), s1 = _mm512_loadu_ps(sw + 16);
  const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const __m512 sr = _mm512_set1_ps(sx[r]);
    float* yr = y + std::size_t(r) * ldy;
    _mm512_storeu_ps(yr, _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc0[r]), sr), s0), b0));
    _mm512_storeu_ps(yr + 16, _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc1[r]), sr), s1), b1));
  }
}

ENGRAM_AVX512 void avx512_gemm(const qacts& a, const qweights& w, float* y, std::size_t ldy, int r0, int r1, int c0,
                               int c1) {
  constexpr int tile = 8, chunk = 256;
  const int in = w.in;
  const auto* X = reinterpret_cast<const std::uint8_t*>(a.bytes.data());
  for (int rc = r0; rc < r1; rc += chunk) {
    const int re = std::min(r1, rc + chunk);
    for (int cb = c0 / 32; cb < c1 / 32; ++cb) {
      const std::int8_t* wb = w.w.data() + std::size_t(cb) * in * 32;
      const std::int32_t* corr = w.corr.data() + cb * 32;
      const float* sw = w.scale.data() + cb * 32;
      const float* b = w.bias + cb * 32;
      for (int r = rc; r < re; r += tile) {
        const std::uint8_t* xr = X + std::size_t(r) * in;
        float* yr = y + std::size_t(r) * ldy + cb * 32;
        const float* sx = a.scale.data() + r;
        switch (std::min(tile, re - r)) {
          case 8: avx512_tile<8>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          case 7: avx512_tile<7>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          case 6: avx512_tile<6>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          case 5: avx512_tile<5>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          case 4: avx512_tile<4>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          case 3: avx512_tile<3>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          case 2: avx512_tile<2>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
          default: avx512_tile<1>(xr, in, wb, corr, sx, sw, b, yr, ldy); break;
        }
      }
    }
  }
}

constexpr kernels avx512_kernels{encoder_isa::avx512,   avx512_pack, avx512_quantise,  avx512_gemm,  avx512_layer_norm,
                                 avx512_attention_head, avx512_add,  avx512_mean_rows, avx512_finish};

#endif  // __x86_64__

/// The path for `want` on this CPU, or a message naming the path and the missing feature.
std::string choose_path(encoder_isa want, const kernels*& k) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool f = __builtin_cpu_supports("avx512f"), bw = __builtin_cpu_supports("avx512bw"),
             vnni = __builtin_cpu_supports("avx512vnni"), avx2 = __builtin_cpu_supports("avx2");
  switch (want) {
    case encoder_isa::automatic:
      k = f && bw && vnni ? &avx512_kernels : avx2 ? &avx2_kernels : &portable_kernels;
      return {};
    case encoder_isa::avx512:
      if (!f)
        return "the avx512 encoder path needs AVX-512 F (avx512f), which this CPU lacks";
      if (!bw)
        return "the avx512 encoder path needs AVX-512 BW (avx512bw), which this CPU lacks";
      if (!vnni)
        return "the avx512 encoder path needs AVX-512 VNNI (avx512vnni), which this CPU lacks";
      k = &avx512_kernels;
      return {};
    case encoder_isa::avx2:
      if (!avx2)
        return "the avx2 encoder path needs AVX2 (avx2), which this CPU lacks";
      k = &avx2_kernels;
      return {};
    case encoder_isa::portable: k = &portable_kernels; return {};
  }
#else
  switch (want) {
    case encoder_isa::automatic:
    case encoder_isa::portable: k = &portable_kernels; return {};
    case encoder_isa::avx512: return "the avx512 encoder path needs an x86-64 CPU with AVX-512 F, BW and VNNI";
    case encoder_isa::avx2: return "the avx2 encoder path needs an x86-64 CPU with AVX2";
  }
#endif
  return "unknown encoder path";
}

struct qlayer {
  qweights qkv, out, res, ffn1, ffn2;
};

}  // namespace

struct use_lite_int8_embedder::model {
  /// The vocabulary and the float tensors the forward pass reads (embeddings, norms,
  /// biases: copies in `kept`); the file's bytes are released after quantisation.
  std::unique_ptr<detail::use_lite_model> w;
  std::vector<std::vector<float>> kept;
  const kernels* k = &portable_kernels;
  std::vector<float> timing;  // [128 positions, 256]: sin | cos of t * timing_inv
  qlayer layers[2];
  qweights tanh;
  /// Split large products over two threads (the machine has two cores or more).
  bool two_threads = std::thread::hardware_concurrency() >= 2;
  /// "use-lite-int8", or with the digest of the encoder_adapter it was loaded with.
  std::string name = "use-lite-int8";
};

use_lite_int8_embedder::use_lite_int8_embedder(std::unique_ptr<model> m) : m_(std::move(m)) {}
use_lite_int8_embedder::~use_lite_int8_embedder() = default;

std::string use_lite_int8_embedder::name() const { return m_->name; }

engram::result<std::unique_ptr<use_lite_int8_embedder>> use_lite_int8_embedder::load(const std::string& path,
                                                                                     encoder_isa isa,
                                                                                     const encoder_adapter* adapter) {
  auto m = std::make_unique<model>();
  if (auto why = choose_path(isa, m->k); !why.empty())
    return engram::fail("embedder model '" + path + "': " + why);
  auto loaded = detail::load_use_lite_model(path, adapter);
  if (!loaded)
    return engram::fail(loaded.error());
  m->w = std::move(*loaded);
  if (adapter) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(adapter->digest));
    m->name = std::string("use-lite-int8+adapter/") + hex;
  }
  auto& W = *m->w;
  m->timing.resize(max_tokens * 256);
  for (std::size_t t = 0; t < max_tokens; ++t)
    for (int k = 0; k < 128; ++k) {
      const float a = static_cast<float>(t) * W.timing_inv[k];
      double s = 0, c = 0;
      sincos_fixed(a, s, c);
      m->timing[t * 256 + k] = static_cast<float>(s);
      m->timing[t * 256 + 128 + k] = static_cast<float>(c);
    }
  // What the forward pass reads in float is copied out of the file's bytes.
  auto keep = [&](const float*& p, std::size_t n) {
    if (p) {
      m->kept.emplace_back(p, p + n);
      p = m->kept.back().data();  // stays put when `kept` grows (the vectors move)
    }
  };
  keep(W.embeddings, 8002 * 256);
  keep(W.tanh_b, 512);
  for (auto& L : W.layers) {
    keep(L.ln1_scale, L.in);
    keep(L.ln1_bias, L.in);
    keep(L.qkv_b, 3 * L.width);
    keep(L.out_b, 512);
    keep(L.res_b, 512);
    keep(L.ln2_scale, 512);
    keep(L.ln2_bias, 512);
    keep(L.ffn1_b, 1536);
    keep(L.ffn2_b, 512);
  }
  std::vector<std::int8_t> q;
  auto prepare = [&](qweights& w, const float*& weights, const float* bias, int in, int out) {
    w.in = in;
    w.out = out;
    w.bias = bias;
    quantise_weights(weights, in, out, q, w.scale);
    m->k->pack(q, w);
    weights = nullptr;  // about to be released
  };
  prepare(m->tanh, W.tanh_w, W.tanh_b, 512, 512);
  for (auto l = 0; l < 2; ++l) {
    auto& L = W.layers[l];
    auto& Q = m->layers[l];
    prepare(Q.qkv, L.qkv_w, L.qkv_b, L.in, 3 * L.width);
    prepare(Q.out, L.out_w, L.out_b, L.width, 512);
    if (L.res_w)
      prepare(Q.res, L.res_w, L.res_b, 256, 512);
    prepare(Q.ffn1, L.ffn1_w, L.ffn1_b, 512, 1536);
    prepare(Q.ffn2, L.ffn2_w, L.ffn2_b, 1536, 512);
  }
  W.timing_inv = nullptr;
  W.weights = std::vector<float>();
  return std::unique_ptr<use_lite_int8_embedder>(new use_lite_int8_embedder(std::move(m)));
}

void use_lite_int8_embedder::set_two_threads(bool on) noexcept { m_->two_threads = on; }

encoder_isa use_lite_int8_embedder::active_isa() const { return m_->k->isa; }

std::vector<std::int32_t> use_lite_int8_embedder::tokenize(std::string_view text) const {
  return detail::tokenize(*m_->w, text);
}

namespace {

/// y [rows, w.out] (row stride ldy) = dequantised (quantised x . w) + bias; x [rows, w.in]
/// with row stride ld; ReLU applied to x first when asked. Large products are split by
/// output columns over two threads: every output is computed alike either way.
void dense(const kernels& k, const float* x, std::size_t ld, int rows, const qweights& w, float* y, std::size_t ldy,
           bool relu, qacts& a, bool two_threads) {
  k.quantise(x, ld, rows, w.in, relu, a);
  if (!two_threads || rows < 64) {
    k.gemm(a, w, y, ldy, 0, rows, 0, w.out);
    return;
  }
  const int half = w.out / 64 * 32;
  auto other = std::async(std::launch::async, [&] { k.gemm(a, w, y, ldy, 0, rows, half, w.out); });
  k.gemm(a, w, y, ldy, 0, rows, 0, half);
  other.get();
}

/// A call's working memory, sized for one chunk and reused by the next.
struct scratch {
  aligned_buffer<float> x, n, qkv, o, attn, h, f, res, kt, sc, qs, pooled, y;
  qacts a;
};

/// Sentences are run in chunks of about this many token rows (a sentence is never split),
/// so the working memory stays small whatever the batch; every row and every sentence is
/// computed alike in any chunk.
constexpr std::size_t chunk_rows = 256;

/// The vectors of `count` sentences whose token ids are `ids` (sentence i: `len[i]` ids
/// from `first[i]`), into out[0, count).
void forward(const use_lite_int8_embedder::model& M, const std::int32_t* ids, const std::size_t* first,
             const std::size_t* len, std::size_t count, bool threads, scratch& S, std::vector<float>* out,
             std::vector<float>* states = nullptr);

}  // namespace

std::vector<float> use_lite_int8_embedder::piece_states(std::span<const std::int32_t> ids) const {
  const std::size_t first = 0, len = std::min(ids.size(), max_tokens);
  std::vector<float> vec(512), states;
  scratch S;
  forward(*m_, ids.data(), &first, &len, 1, false, S, &vec, &states);
  return states;
}

engram::result<std::vector<std::vector<float>>> use_lite_int8_embedder::embed(
    std::span<const std::string_view> texts) const {
  const auto& M = *m_;
  // Token rows of every sentence, stacked: sentence s owns ids [start[s], start[s] + len[s]).
  std::vector<std::size_t> start(texts.size()), len(texts.size());
  std::vector<std::int32_t> ids;
  for (std::size_t s = 0; s < texts.size(); ++s) {
    auto t = detail::tokenize(*M.w, texts[s]);
    if (t.size() > max_tokens)
      t.resize(max_tokens);
    start[s] = ids.size();
    len[s] = t.size();
    ids.insert(ids.end(), t.begin(), t.end());
  }
  std::vector<std::vector<float>> out(texts.size(), std::vector<float>(512));
  scratch S;
  for (std::size_t s0 = 0; s0 < texts.size();) {
    std::size_t s1 = s0 + 1, rows = len[s0];
    while (s1 < texts.size() && rows + len[s1] <= chunk_rows)
      rows += len[s1++];
    forward(M, ids.data(), start.data() + s0, len.data() + s0, s1 - s0, M.two_threads, S, out.data() + s0);
    s0 = s1;
  }
  return out;
}

namespace {

void forward(const use_lite_int8_embedder::model& M, const std::int32_t* ids, const std::size_t* first,
             const std::size_t* len, std::size_t count, bool threads, scratch& S, std::vector<float>* out,
             std::vector<float>* states) {
  const auto& W = *M.w;
  const kernels& K = *M.k;
  // The chunk's token rows, stacked: sentence i owns rows [start[i], start[i] + len[i]).
  std::vector<std::size_t> start(count);
  std::size_t total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    start[i] = total;
    total += len[i];
  }
  const int rows = static_cast<int>(total);
  S.x.resize(total * 512);
  S.n.resize(total * 512);
  S.qkv.resize(total * 1536);
  S.o.resize(total * 512);
  S.attn.resize(total * 512);
  S.h.resize(total * 512);
  S.f.resize(total * 1536);
  S.res.resize(total * 512);
  S.kt.resize(128 * 128);
  S.sc.resize(4 * 128);
  S.qs.resize(4 * 128);
  S.pooled.resize(count * 512);
  S.y.resize(count * 512);
  float* x = S.x.data();
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t t = 0; t < len[i]; ++t) {
      const float* e = W.embeddings + std::size_t(ids[first[i] + t]) * 256;
      const float* timing = M.timing.data() + t * 256;
      float* row = x + (start[i] + t) * 256;
      for (int k = 0; k < 256; ++k)
        row[k] = e[k] + (e[k] + timing[k]);
    }
  for (int l = 0; l < 2; ++l) {
    const auto& L = W.layers[l];
    const auto& Q = M.layers[l];
    const int in = L.in, width = L.width, dh = width / heads;
    float *n = S.n.data(), *qkv = S.qkv.data(), *o = S.o.data(), *attn = S.attn.data(), *h = S.h.data(),
          *f = S.f.data();
    K.layer_norm(x, in, rows, in, L.ln1_scale, L.ln1_bias, W.ln_eps, n, in);
    dense(K, n, in, rows, Q.qkv, qkv, 3 * width, false, S.a, threads);
    for (std::size_t i = 0; i < count; ++i) {
      if (len[i] == 0)
        continue;
      for (int hd = 0; hd < heads; ++hd)
        K.attention_head(qkv + start[i] * 3 * width, 3 * width, static_cast<int>(len[i]), hd * dh, width + hd * dh,
                         2 * width + hd * dh, dh, L.q_scale, o + start[i] * width + hd * dh, width, S.kt.data(),
                         S.sc.data(), S.qs.data());
    }
    dense(K, o, width, rows, Q.out, attn, 512, false, S.a, threads);
    if (Q.res.in != 0) {  // layer 0: a dense residual (256 -> 512); layer 1: the identity
      dense(K, x, 256, rows, Q.res, S.res.data(), 512, false, S.a, threads);
      K.add(attn, S.res.data(), h, total * 512);
    } else {
      K.add(attn, x, h, total * 512);
    }
    K.layer_norm(h, 512, rows, 512, L.ln2_scale, L.ln2_bias, W.ln_eps, n, 512);
    dense(K, n, 512, rows, Q.ffn1, f, 1536, false, S.a, threads);
    dense(K, f, 1536, rows, Q.ffn2, x, 512, true, S.a, threads);  // x is read no more: layer 0's
    K.add(x, h, x, total * 512);                                  // residual dense ran above
  }
  if (states)
    states->assign(x, x + total * 512);
  for (std::size_t i = 0; i < count; ++i)
    K.mean_rows(x, start[i], len[i], S.pooled.data() + i * 512);
  dense(K, S.pooled.data(), 512, static_cast<int>(count), M.tanh, S.y.data(), 512, false, S.a, threads);
  for (std::size_t i = 0; i < count; ++i)
    K.finish(S.y.data() + i * 512, W.l2_eps, out[i].data());
}

}  // namespace

}  // namespace engram::embedding
