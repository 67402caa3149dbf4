// Universal Sentence Encoder Lite, forward pass in Eigen. The only translation unit that
// includes Eigen; built with the host's vector extensions (ENGRAM_NATIVE).
//
// The computation (read from the TF.js graph; the reference vectors in
// tests/data/embedder/ were made by the package's own JavaScript):
//   tokens  NFKC, ' ' -> U+2581 with one U+2581 in front, unigram Viterbi over the 8,000
//           pieces (ids 0..5 never matched; unknown characters id 0, runs of them merged);
//           at most 128 tokens are read.
//   x0      2 * E[id] + [sin(t * inv) | cos(t * inv)]                      [T,256]
//   layer   pre-norm: h = MHA(LN1(x)) + R(x); out = FFN(LN2(h)) + h, FFN = relu(.W1+b1).W2+b2
//           layer 0: 256 -> 512 inside (4 heads x 64, attention output 256->512, R = dense);
//           layer 1: 512 (4 heads x 128, R = identity). No final layer norm.
//   output  l2norm(tanh(mean_t(out) . Wt + bt))                           [512]

#include "actors/extractor/embedder.hpp"

#include <Eigen/Dense>
#include <immintrin.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <future>
#include <thread>
#include <map>
#include <unordered_map>

namespace engram::extractor {

namespace {

using row_matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr std::size_t max_tokens = 128;
constexpr std::size_t max_piece = 16;  // code points of the longest piece
constexpr int heads = 4;


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

struct layer {
  const float *ln1_scale, *ln1_bias, *qkv_w, *qkv_b, *out_w, *out_b, *res_w = nullptr, *res_b = nullptr;
  const float *ln2_scale, *ln2_bias, *ffn1_w, *ffn1_b, *ffn2_w, *ffn2_b;
  packed qkv, attn_out, res, ffn1, ffn2;
  float q_scale;
  int in, width;  // input width; attention width (256 in layer 0, 512 in layer 1)
};

}  // namespace

struct use_lite_embedder::model {
  std::vector<char> blob;  // the file; tensors point into it
  std::unordered_map<std::u32string, std::pair<double, std::int32_t>> pieces;
  const float* embeddings = nullptr;
  const float* timing_inv = nullptr;
  const float* tanh_w = nullptr;
  const float* tanh_b = nullptr;
  packed tanh;
  /// Split large products over two threads (the machine has two cores or more).
  bool two_threads = std::thread::hardware_concurrency() >= 2;
  float ln_eps = 1e-6f, l2_eps = 1e-12f;
  layer layers[2];
  const icu::Normalizer2* nfkc = nullptr;
};

use_lite_embedder::use_lite_embedder(std::unique_ptr<model> m) : m_(std::move(m)) {}
use_lite_embedder::~use_lite_embedder() = default;

engram::result<std::unique_ptr<use_lite_embedder>> use_lite_embedder::load(const std::string& path) {
  auto fail = [&](const std::string& why) { return engram::fail("embedder model '" + path + "': " + why); };
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail("cannot open (run `tools/dev.sh setup` to fetch and convert it, or set embedder.model_path)");
  auto m = std::make_unique<model>();
  m->blob.assign(std::istreambuf_iterator<char>(in), {});
  const auto& b = m->blob;
  std::size_t at = 0;
  auto take = [&](void* dst, std::size_t n) {
    if (at + n > b.size())
      return false;
    std::memcpy(dst, b.data() + at, n);
    at += n;
    return true;
  };
  char magic[8];
  if (!take(magic, 8) || std::memcmp(magic, "EGUSE001", 8) != 0)
    return fail("not a converted USE Lite model (bad magic)");
  std::uint32_t count = 0;
  if (!take(&count, 4) || count != 8000)
    return fail("expected 8000 vocabulary pieces");
  UErrorCode status = U_ZERO_ERROR;
  m->nfkc = icu::Normalizer2::getNFKCInstance(status);
  if (U_FAILURE(status))
    return fail(std::string("ICU NFKC unavailable: ") + u_errorName(status));
  for (std::uint32_t id = 0; id < count; ++id) {
    double score = 0;
    std::uint32_t len = 0;
    if (!take(&score, 8) || !take(&len, 4) || at + len > b.size())
      return fail("truncated vocabulary");
    std::string piece(b.data() + at, len);
    at += len;
    if (id < 6)
      continue;  // <unk>, <s>, </s> and 3 reserved ids are never matched
    auto u = icu::UnicodeString::fromUTF8(piece);
    std::u32string cps;
    for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1))
      cps.push_back(static_cast<char32_t>(u.char32At(i)));
    m->pieces[cps] = {score, static_cast<std::int32_t>(id)};  // a later duplicate wins, as in the JS
  }
  if (!take(&count, 4))
    return fail("truncated tensor table");
  std::map<std::string, std::pair<const float*, std::uint32_t>> tensors;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t len = 0, n = 0;
    if (!take(&len, 4) || at + len > b.size())
      return fail("truncated tensor table");
    std::string name(b.data() + at, len);
    at += len;
    if (!take(&n, 4) || at + std::size_t(n) * 4 > b.size())
      return fail("truncated tensor " + name);
    tensors[name] = {reinterpret_cast<const float*>(b.data() + at), n};
    at += std::size_t(n) * 4;
  }
  std::string missing;
  auto get = [&](const std::string& name, std::size_t n) -> const float* {
    auto it = tensors.find(name);
    if (it == tensors.end() || it->second.second != n) {
      missing += (missing.empty() ? "" : ", ") + name;
      return nullptr;
    }
    return it->second.first;
  };
  m->embeddings = get("embeddings", 8002 * 256);
  m->timing_inv = get("timing_inv", 128);
  m->tanh_w = get("tanh_w", 512 * 512);
  m->tanh_b = get("tanh_b", 512);
  auto ln_eps = get("ln_eps", 1), l2_eps = get("l2_eps", 1);
  for (int l = 0; l < 2; ++l) {
    auto& L = m->layers[l];
    auto p = "l" + std::to_string(l) + ".";
    L.in = l == 0 ? 256 : 512;
    L.width = L.in;
    L.ln1_scale = get(p + "ln1_scale", L.in);
    L.ln1_bias = get(p + "ln1_bias", L.in);
    L.qkv_w = get(p + "qkv_w", std::size_t(L.in) * 3 * L.width);
    L.qkv_b = get(p + "qkv_b", 3 * L.width);
    L.out_w = get(p + "out_w", std::size_t(L.width) * 512);
    L.out_b = get(p + "out_b", 512);
    if (l == 0) {
      L.res_w = get(p + "res_w", 256 * 512);
      L.res_b = get(p + "res_b", 512);
    }
    L.ln2_scale = get(p + "ln2_scale", 512);
    L.ln2_bias = get(p + "ln2_bias", 512);
    L.ffn1_w = get(p + "ffn1_w", 512 * 1536);
    L.ffn1_b = get(p + "ffn1_b", 1536);
    L.ffn2_w = get(p + "ffn2_w", 1536 * 512);
    L.ffn2_b = get(p + "ffn2_b", 512);
    auto q = get(p + "q_scale", 1);
    L.q_scale = q ? *q : 0;
  }
  if (!missing.empty())
    return fail("missing or misshapen tensors: " + missing);
  m->ln_eps = *ln_eps;
  m->l2_eps = *l2_eps;
  m->tanh = packed(m->tanh_w, 512, 512);
  for (auto& L : m->layers) {
    L.qkv = packed(L.qkv_w, L.in, 3 * L.width);
    L.attn_out = packed(L.out_w, L.width, 512);
    if (L.res_w)
      L.res = packed(L.res_w, 256, 512);
    L.ffn1 = packed(L.ffn1_w, 512, 1536);
    L.ffn2 = packed(L.ffn2_w, 1536, 512);
  }
  return std::unique_ptr<use_lite_embedder>(new use_lite_embedder(std::move(m)));
}

void use_lite_embedder::set_two_threads(bool on) noexcept {
  m_->two_threads = on;
}

std::vector<std::int32_t> use_lite_embedder::tokenize(std::string_view text) const {
  UErrorCode status = U_ZERO_ERROR;
  auto normalised = m_->nfkc->normalize(icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(),
                                                                                       static_cast<int32_t>(text.size()))),
                                        status);
  std::vector<std::int32_t> out;
  if (U_FAILURE(status) || normalised.isEmpty())
    return out;
  std::u32string c{U'\u2581'};
  for (int32_t i = 0; i < normalised.length(); i = normalised.moveIndex32(i, 1)) {
    auto cp = static_cast<char32_t>(normalised.char32At(i));
    c.push_back(cp == U' ' ? U'\u2581' : cp);
  }
  // Viterbi exactly as the reference: ascending starts, a best of 0.0 counts as unset,
  // ties go to the later (shorter) piece; scores summed in double.
  const std::size_t n = c.size();
  std::vector<double> best(n + 1, 0.0);
  std::vector<std::int32_t> id(n + 1, 0);
  std::vector<std::size_t> len(n + 1, 0);
  std::u32string key;
  for (std::size_t e = 1; e <= n; ++e) {
    for (std::size_t st = e > max_piece ? e - max_piece : 0; st < e; ++st) {
      key.assign(c, st, e - st);
      double score;
      std::int32_t pid;
      if (auto it = m_->pieces.find(key); it != m_->pieces.end()) {
        score = it->second.first;
        pid = it->second.second;
      } else if (e == st + 1) {
        score = 0.0;  // an unknown character (no piece starts with it)
        pid = 0;
      } else {
        continue;
      }
      double total = score + best[st];
      if (best[e] == 0.0 || total >= best[e]) {
        best[e] = total;
        id[e] = pid;
        len[e] = e - st;
      }
    }
  }
  for (std::size_t e = n; e > 0; e -= len[e])
    out.push_back(id[e]);
  std::reverse(out.begin(), out.end());
  std::vector<std::int32_t> merged;
  for (auto t : out)
    if (!(t == 0 && !merged.empty() && merged.back() == 0))
      merged.push_back(t);
  return merged;
}

engram::result<std::vector<std::vector<float>>> use_lite_embedder::embed(
    std::span<const std::string_view> texts) const {
  const auto& M = *m_;
  const bool threads = M.two_threads;
  std::vector<std::vector<float>> out(texts.size(), std::vector<float>(512));
  // Token rows of every sentence, stacked: sentence s owns rows [start[s], start[s] + len[s]).
  std::vector<std::vector<std::int32_t>> ids(texts.size());
  std::vector<Eigen::Index> start(texts.size()), len(texts.size());
  Eigen::Index rows = 0;
  for (std::size_t s = 0; s < texts.size(); ++s) {
    ids[s] = tokenize(texts[s]);
    if (ids[s].size() > max_tokens)
      ids[s].resize(max_tokens);
    start[s] = rows;
    len[s] = static_cast<Eigen::Index>(ids[s].size());
    rows += len[s];
  }
  const Eigen::Index padded = (rows + row_tile - 1) / row_tile * row_tile;  // the kernel's tiles
  row_matrix x = row_matrix::Zero(padded, 256);
  for (std::size_t s = 0; s < texts.size(); ++s)
    for (Eigen::Index t = 0; t < len[s]; ++t) {
      const float* e = M.embeddings + std::size_t(ids[s][t]) * 256;
      float* row = x.data() + (start[s] + t) * 256;
      for (int k = 0; k < 128; ++k) {
        const float a = static_cast<float>(t) * M.timing_inv[k];
        row[k] = e[k] + (e[k] + std::sin(a));
        row[128 + k] = e[128 + k] + (e[128 + k] + std::cos(a));
      }
    }
  row_matrix n, qkv, attn, o, h, f, res;
  for (const auto& L : M.layers) {
    layer_norm(x, L.ln1_scale, L.ln1_bias, M.ln_eps, n);
    dense(n, L.qkv, L.qkv_b, qkv, threads);
    const int dh = L.width / heads;
    o = row_matrix::Zero(padded, L.width);
    for (std::size_t s = 0; s < texts.size(); ++s) {
      const auto T = len[s];
      if (T == 0)
        continue;
      for (int hd = 0; hd < heads; ++hd) {
        row_matrix q = qkv.block(start[s], hd * dh, T, dh) * L.q_scale;
        // Fresh copies: a product over a block inside the stacked rows would be summed with
        // a head that depends on where the sentence sits (its alignment), so on the batch.
        row_matrix k = qkv.block(start[s], L.width + hd * dh, T, dh);
        row_matrix v = qkv.block(start[s], 2 * L.width + hd * dh, T, dh);
        row_matrix w = q * k.transpose();
        for (Eigen::Index i = 0; i < T; ++i) {
          auto r = w.row(i);
          r = (r.array() - r.maxCoeff()).exp();
          r /= r.sum();
        }
        o.block(start[s], hd * dh, T, dh).noalias() = w * v;
      }
    }
    dense(o, L.attn_out, L.out_b, attn, threads);
    if (L.res_w) {
      dense(x, L.res, L.res_b, res, threads);
      h = attn + res;
    } else {
      h = attn + x;
    }
    layer_norm(h, L.ln2_scale, L.ln2_bias, M.ln_eps, n);
    dense(n, L.ffn1, L.ffn1_b, f, threads);
    f = f.cwiseMax(0.0f);
    dense(f, L.ffn2, L.ffn2_b, x, threads);
    x += h;
  }
  const auto sentences = static_cast<Eigen::Index>((texts.size() + row_tile - 1) / row_tile * row_tile);
  row_matrix pooled = row_matrix::Zero(sentences, 512);
  for (std::size_t s = 0; s < texts.size(); ++s) {
    float* p = pooled.data() + s * 512;
    for (Eigen::Index t = 0; t < len[s]; ++t) {
      const float* r = x.data() + (start[s] + t) * 512;
      for (int j = 0; j < 512; ++j)
        p[j] += r[j];
    }
    const float count = static_cast<float>(std::max<Eigen::Index>(len[s], 1));
    for (int j = 0; j < 512; ++j)
      p[j] /= count;
  }
  row_matrix y;
  dense(pooled, M.tanh, M.tanh_b, y, threads);
  y = y.array().tanh().matrix();
  for (std::size_t s = 0; s < texts.size(); ++s) {
    auto r = y.row(static_cast<Eigen::Index>(s));
    const float scale = 1.0f / std::sqrt(std::max(r.squaredNorm(), M.l2_eps));
    for (int j = 0; j < 512; ++j)
      out[s][j] = r(j) * scale;
  }
  return out;
}

}  // namespace engram::extractor
