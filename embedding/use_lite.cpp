// Universal Sentence Encoder Lite, forward pass in Eigen (float32). The only translation
// unit that includes Eigen; built with the host's vector extensions (ENGRAM_NATIVE). The
// model file and the tokenizer are in use_lite_model.cpp (shared with use_lite_int8.cpp).
//
// The computation (read from the TF.js graph; the reference vectors in
// tests/data/embedder/ were made by the package's own JavaScript):
//   tokens  see use_lite_model.cpp; at most 128 tokens are read.
//   x0      2 * E[id] + [sin(t * inv) | cos(t * inv)]                      [T,256]
//   layer   pre-norm: h = MHA(LN1(x)) + R(x); out = FFN(LN2(h)) + h, FFN = relu(.W1+b1).W2+b2
//           layer 0: 256 -> 512 inside (4 heads x 64, attention output 256->512, R = dense);
//           layer 1: 512 (4 heads x 128, R = identity). No final layer norm.
//   output  l2norm(tanh(mean_t(out) . Wt + bt))                           [512]

#include "embedding/embedder.hpp"
#include "embedding/internal/use_lite_model.hpp"

#include <Eigen/Dense>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <thread>

namespace engram::embedding {

namespace {

using row_matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr std::size_t max_tokens = detail::use_lite_max_tokens;
constexpr int heads = detail::use_lite_heads;

/// y = (scale * r) * (x - mean) + bias per row, r = 1/sqrt(var + eps): the graph's order.
void layer_norm(const row_matrix& x, const float* scale, const float* bias, float eps, row_matrix& y) {
  y.resize(x.rows(), x.cols());
  const auto d = x.cols();
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const float* in = x.data() + t * d;
    float* out = y.data() + t * d;
    float mean = 0;
    for (Eigen::Index i = 0; i < d; ++i)
      mean += in[i];
    mean /= static_cast<float>(d);
    float var = 0;
    for (Eigen::Index i = 0; i < d; ++i)
      var += (in[i] - mean) * (in[i] - mean);
    var /= static_cast<float>(d);
    const float r = 1.0f / std::sqrt(var + eps);
    for (Eigen::Index i = 0; i < d; ++i)
      out[i] = (scale[i] * r) * (in[i] - mean) + bias[i];
  }
}

/// A weight matrix [in, out] repacked in strips of 16 columns ([strip][in][16]), so the
/// kernel below streams it.
struct packed {
  int in = 0, out = 0;
  std::vector<float> data;
  packed() = default;
  packed(const float* w, int in_, int out_) : in(in_), out(out_), data(std::size_t(in_) * out_) {
    for (int s = 0; s < out / 16; ++s)
      for (int i = 0; i < in; ++i)
        for (int c = 0; c < 16; ++c)
          data[(std::size_t(s) * in + i) * 16 + c] = w[std::size_t(i) * out + s * 16 + c];
  }
};

constexpr int row_tile = 8;

/// y = x . W + b for x [rows, in] (rows a multiple of row_tile). Every output is summed over
/// i in ascending order in one accumulator, whatever the number of rows: a sentence embeds
/// to the same bits alone or in any batch (replays cut batches differently; the vectors
/// are part of the store's digest). Eigen's GEMM picks its blocking from the matrix sizes,
/// so its sums depend on the batch.
/// Output columns [col_begin, col_end) (multiples of 32) of y = x . W + b.
void dense_columns(const row_matrix& x, const packed& w, const float* b, row_matrix& y, int col_begin, int col_end) {
  const int rows = static_cast<int>(x.rows()), in = w.in, out = w.out;
  const float* X = x.data();
  float* Y = y.data();
#if defined(__AVX512F__)
  for (int s = col_begin / 16; s < col_end / 16; s += 2) {
    const float* w0 = w.data.data() + std::size_t(s) * in * 16;
    const float* w1 = w0 + std::size_t(in) * 16;
    const __m512 b0 = _mm512_loadu_ps(b + s * 16), b1 = _mm512_loadu_ps(b + s * 16 + 16);
    for (int r0 = 0; r0 < rows; r0 += row_tile) {
      __m512 acc0[row_tile], acc1[row_tile];
      for (int r = 0; r < row_tile; ++r)
        acc0[r] = acc1[r] = _mm512_setzero_ps();
      const float* xr = X + std::size_t(r0) * in;
      for (int i = 0; i < in; ++i) {
        const __m512 a = _mm512_loadu_ps(w0 + i * 16), c = _mm512_loadu_ps(w1 + i * 16);
        for (int r = 0; r < row_tile; ++r) {
          const __m512 v = _mm512_set1_ps(xr[std::size_t(r) * in + i]);
          acc0[r] = _mm512_fmadd_ps(v, a, acc0[r]);
          acc1[r] = _mm512_fmadd_ps(v, c, acc1[r]);
        }
      }
      for (int r = 0; r < row_tile; ++r) {
        float* yr = Y + std::size_t(r0 + r) * out + s * 16;
        _mm512_storeu_ps(yr, _mm512_add_ps(acc0[r], b0));
        _mm512_storeu_ps(yr + 16, _mm512_add_ps(acc1[r], b1));
      }
    }
  }
#else
  for (int s = col_begin / 16; s < col_end / 16; ++s)
    for (int r = 0; r < rows; ++r) {
      float acc[16] = {};
      const float* ws = w.data.data() + std::size_t(s) * in * 16;
      for (int i = 0; i < in; ++i)
        for (int c = 0; c < 16; ++c)
          acc[c] += X[std::size_t(r) * in + i] * ws[i * 16 + c];
      for (int c = 0; c < 16; ++c)
        Y[std::size_t(r) * out + s * 16 + c] = acc[c] + b[s * 16 + c];
    }
#endif
}

/// y = x . W + b for x [rows, in] (rows a multiple of row_tile). Every output is summed over
/// i in ascending order in one accumulator, whatever the number of rows and threads: a
/// sentence embeds to the same bits alone or in any batch (replays cut batches
/// differently; the vectors are part of the store's digest). Eigen's GEMM picks its
/// blocking from the matrix sizes, so its sums depend on the batch. Large products are
/// split by columns over two threads.
void dense(const row_matrix& x, const packed& w, const float* b, row_matrix& y, bool two_threads) {
  y.resize(x.rows(), w.out);
  if (!two_threads || x.rows() < 64) {
    dense_columns(x, w, b, y, 0, w.out);
    return;
  }
  const int half = w.out / 64 * 32;
  auto other = std::async(std::launch::async, [&] { dense_columns(x, w, b, y, half, w.out); });
  dense_columns(x, w, b, y, 0, half);
  other.get();
}

/// A layer's weight matrices, repacked for dense().
struct layer_packs {
  packed qkv, attn_out, res, ffn1, ffn2;
};

}  // namespace

struct use_lite_embedder::model {
  std::unique_ptr<detail::use_lite_model> w;  // the file's tensors and vocabulary
  packed tanh;
  layer_packs layers[2];
  /// Split large products over two threads (the machine has two cores or more).
  bool two_threads = std::thread::hardware_concurrency() >= 2;
};

use_lite_embedder::use_lite_embedder(std::unique_ptr<model> m) : m_(std::move(m)) {}
use_lite_embedder::~use_lite_embedder() = default;

engram::result<std::unique_ptr<use_lite_embedder>> use_lite_embedder::load(const std::string& path) {
  auto loaded = detail::load_use_lite_model(path);
  if (!loaded)
    return engram::fail(loaded.error());
  auto m = std::make_unique<model>();
  m->w = std::move(*loaded);
  const auto& W = *m->w;
  m->tanh = packed(W.tanh_w, 512, 512);
  for (int l = 0; l < 2; ++l) {
    const auto& L = W.layers[l];
    auto& P = m->layers[l];
    P.qkv = packed(L.qkv_w, L.in, 3 * L.width);
    P.attn_out = packed(L.out_w, L.width, 512);
    if (L.res_w)
      P.res = packed(L.res_w, 256, 512);
    P.ffn1 = packed(L.ffn1_w, 512, 1536);
    P.ffn2 = packed(L.ffn2_w, 1536, 512);
  }
  return std::unique_ptr<use_lite_embedder>(new use_lite_embedder(std::move(m)));
}

void use_lite_embedder::set_two_threads(bool on) noexcept { m_->two_threads = on; }

std::vector<std::int32_t> use_lite_embedder::tokenize(std::string_view text) const {
  return detail::tokenize(*m_->w, text);
}

namespace {

/// Token rows of every sentence, stacked: sentence s owns rows [start[s], start[s] + len[s]).
struct stacked_tokens {
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<Eigen::Index> start, len;
  Eigen::Index rows = 0;
};

/// Each text's tokens, cut at max_tokens, stacked in order.
stacked_tokens stack_tokens(const detail::use_lite_model& M, std::span<const std::string_view> texts) {
  stacked_tokens tk;
  tk.ids.resize(texts.size());
  tk.start.resize(texts.size());
  tk.len.resize(texts.size());
  for (std::size_t s = 0; s < texts.size(); ++s) {
    tk.ids[s] = detail::tokenize(M, texts[s]);
    if (tk.ids[s].size() > max_tokens)
      tk.ids[s].resize(max_tokens);
    tk.start[s] = tk.rows;
    tk.len[s] = static_cast<Eigen::Index>(tk.ids[s].size());
    tk.rows += tk.len[s];
  }
  return tk;
}

/// x0 [padded, 256]: 2 * E[id] + [sin(t * inv) | cos(t * inv)] per token row, zero below.
row_matrix input_rows(const detail::use_lite_model& M, const stacked_tokens& tk, Eigen::Index padded) {
  row_matrix x = row_matrix::Zero(padded, 256);
  for (std::size_t s = 0; s < tk.ids.size(); ++s)
    for (Eigen::Index t = 0; t < tk.len[s]; ++t) {
      const float* e = M.embeddings + std::size_t(tk.ids[s][t]) * 256;
      float* row = x.data() + (tk.start[s] + t) * 256;
      for (int k = 0; k < 128; ++k) {
        const float a = static_cast<float>(t) * M.timing_inv[k];
        row[k] = e[k] + (e[k] + std::sin(a));
        row[128 + k] = e[128 + k] + (e[128 + k] + std::cos(a));
      }
    }
  return x;
}

/// The matrices a layer works in, kept from one layer to the next.
struct layer_scratch {
  row_matrix n, qkv, attn, o, h, f, res;
};

/// Multi-head attention of each sentence over its own rows of `qkv`, into `o` [padded, width].
void attend(const detail::use_lite_layer& L, const stacked_tokens& tk, Eigen::Index padded, const row_matrix& qkv,
            row_matrix& o) {
  const int dh = L.width / heads;
  o = row_matrix::Zero(padded, L.width);
  for (std::size_t s = 0; s < tk.ids.size(); ++s) {
    const auto T = tk.len[s];
    if (T == 0)
      continue;
    for (int hd = 0; hd < heads; ++hd) {
      row_matrix q = qkv.block(tk.start[s], hd * dh, T, dh) * L.q_scale;
      // Fresh copies: a product over a block inside the stacked rows would be summed with
      // a head that depends on where the sentence sits (its alignment), so on the batch.
      row_matrix k = qkv.block(tk.start[s], L.width + hd * dh, T, dh);
      row_matrix v = qkv.block(tk.start[s], 2 * L.width + hd * dh, T, dh);
      row_matrix w = q * k.transpose();
      for (Eigen::Index i = 0; i < T; ++i) {
        auto r = w.row(i);
        r = (r.array() - r.maxCoeff()).exp();
        r /= r.sum();
      }
      o.block(tk.start[s], hd * dh, T, dh).noalias() = w * v;
    }
  }
}

/// One pre-norm transformer layer over `x`, in place.
void run_layer(const detail::use_lite_model& M, const detail::use_lite_layer& L, const layer_packs& P,
               const stacked_tokens& tk, Eigen::Index padded, bool threads, layer_scratch& sc, row_matrix& x) {
  layer_norm(x, L.ln1_scale, L.ln1_bias, M.ln_eps, sc.n);
  dense(sc.n, P.qkv, L.qkv_b, sc.qkv, threads);
  attend(L, tk, padded, sc.qkv, sc.o);
  dense(sc.o, P.attn_out, L.out_b, sc.attn, threads);
  if (L.res_w) {
    dense(x, P.res, L.res_b, sc.res, threads);
    sc.h = sc.attn + sc.res;
  } else {
    sc.h = sc.attn + x;
  }
  layer_norm(sc.h, L.ln2_scale, L.ln2_bias, M.ln_eps, sc.n);
  dense(sc.n, P.ffn1, L.ffn1_b, sc.f, threads);
  sc.f = sc.f.cwiseMax(0.0f);
  dense(sc.f, P.ffn2, L.ffn2_b, x, threads);
  x += sc.h;
}

/// The mean of each sentence's rows of `x` [rows, 512] (zero for no tokens), one row per
/// sentence, padded to row_tile rows.
row_matrix mean_pool(const row_matrix& x, const stacked_tokens& tk) {
  const std::size_t texts = tk.ids.size();
  const auto sentences = static_cast<Eigen::Index>((texts + row_tile - 1) / row_tile * row_tile);
  row_matrix pooled = row_matrix::Zero(sentences, 512);
  for (std::size_t s = 0; s < texts; ++s) {
    float* p = pooled.data() + s * 512;
    for (Eigen::Index t = 0; t < tk.len[s]; ++t) {
      const float* r = x.data() + (tk.start[s] + t) * 512;
      for (int j = 0; j < 512; ++j)
        p[j] += r[j];
    }
    const float count = static_cast<float>(std::max<Eigen::Index>(tk.len[s], 1));
    for (int j = 0; j < 512; ++j)
      p[j] /= count;
  }
  return pooled;
}

}  // namespace

engram::result<std::vector<std::vector<float>>> use_lite_embedder::embed(
    std::span<const std::string_view> texts) const {
  const auto& M = *m_->w;
  const bool threads = m_->two_threads;
  std::vector<std::vector<float>> out(texts.size(), std::vector<float>(512));
  const stacked_tokens tk = stack_tokens(M, texts);
  const Eigen::Index padded = (tk.rows + row_tile - 1) / row_tile * row_tile;  // the kernel's tiles
  row_matrix x = input_rows(M, tk, padded);
  layer_scratch sc;
  for (int l = 0; l < 2; ++l)
    run_layer(M, M.layers[l], m_->layers[l], tk, padded, threads, sc, x);
  row_matrix pooled = mean_pool(x, tk);
  row_matrix y;
  dense(pooled, m_->tanh, M.tanh_b, y, threads);
  y = y.array().tanh().matrix();
  for (std::size_t s = 0; s < texts.size(); ++s) {
    auto r = y.row(static_cast<Eigen::Index>(s));
    const float scale = 1.0f / std::sqrt(std::max(r.squaredNorm(), M.l2_eps));
    for (int j = 0; j < 512; ++j)
      out[s][j] = r(j) * scale;
  }
  return out;
}

}  // namespace engram::embedding
