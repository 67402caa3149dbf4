// The USE Lite model file and tokenizer, shared by the float and the int8 encoders.
//
// tokens  NFKC, ' ' -> U+2581 with one U+2581 in front, unigram Viterbi over the 8,000
//         pieces (ids 0..5 never matched; unknown characters id 0, runs of them merged).

#include "embedding/internal/use_lite_model.hpp"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

namespace engram::embedding::detail {

namespace {

constexpr std::size_t max_piece = 16;  // code points of the longest piece

/// The model file, read front to back.
struct blob_reader {
  std::string_view b;
  std::size_t at = 0;

  bool take(void* dst, std::size_t n) {
    if (at + n > b.size())
      return false;
    std::memcpy(dst, b.data() + at, n);
    at += n;
    return true;
  }
};

/// The `count` vocabulary pieces into m.trie; what is wrong with them, if anything.
std::optional<std::string> read_vocabulary(blob_reader& r, std::uint32_t count, use_lite_model& m) {
  const auto& b = r.b;
  for (std::uint32_t id = 0; id < count; ++id) {
    double score = 0;
    std::uint32_t len = 0;
    if (!r.take(&score, 8) || !r.take(&len, 4) || r.at + len > b.size())
      return "truncated vocabulary";
    std::string piece(b.data() + r.at, len);
    r.at += len;
    if (id < 6)
      continue;  // <unk>, <s>, </s> and 3 reserved ids are never matched
    auto u = icu::UnicodeString::fromUTF8(piece);
    std::uint32_t node = 0;
    for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1)) {
      const auto cp = static_cast<std::uint64_t>(static_cast<std::uint32_t>(u.char32At(i)));
      auto [edge, added] = m.trie.try_emplace(std::uint64_t{node} << 21 | cp, 0);
      if (added) {
        edge->second = static_cast<std::uint32_t>(m.piece_of.size());
        m.piece_of.push_back({0.0, -1});
      }
      node = edge->second;
    }
    if (node != 0)
      m.piece_of[node] = {score, static_cast<std::int32_t>(id)};  // a later duplicate wins, as in the JS
  }
  return std::nullopt;
}

/// Tensor name -> (its floats, how many).
using tensor_table = std::map<std::string, std::pair<float*, std::uint32_t>>;

/// The tensors read by read_tensors, copied into `weights` one after the other (each aligned
/// for float, where the file holds them at any byte offset), by name into `table`.
void place_tensors(named_tensors tensors, std::vector<float>& weights, tensor_table& table) {
  std::size_t total = 0;
  for (const auto& t : tensors)
    total += t.second.size();
  weights.resize(total);
  std::size_t at = 0;
  for (auto& [name, values] : tensors) {
    std::copy(values.begin(), values.end(), weights.begin() + static_cast<std::ptrdiff_t>(at));
    table[name] = {weights.data() + at, static_cast<std::uint32_t>(values.size())};
    at += values.size();
  }
}

/// `adapter` applied to the tensors of `table`: each update's A . B added to its matrix (sums
/// in double, in a fixed order), each replaced tensor copied over; what is wrong, if anything.
std::optional<std::string> adapt(const encoder_adapter& adapter, tensor_table& table) {
  for (const auto& u : adapter.updates) {
    auto it = table.find(u.matrix);
    const std::size_t r = u.rank;
    if (it == table.end() || r == 0 || u.a.size() % r != 0 || u.b.size() % r != 0 ||
        (u.a.size() / r) * (u.b.size() / r) != it->second.second)
      return "the adapter's update of '" + u.matrix + "' fits no matrix of the model";
    const std::size_t rows = u.a.size() / r, cols = u.b.size() / r;
    float* w = it->second.first;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        double s = 0;
        for (std::size_t k = 0; k < r; ++k)
          s += static_cast<double>(u.a[i * r + k]) * u.b[k * cols + j];
        w[i * cols + j] = static_cast<float>(static_cast<double>(w[i * cols + j]) + s);
      }
  }
  for (const auto& [name, values] : adapter.replaced) {
    auto it = table.find(name);
    if (it == table.end() || it->second.second != values.size())
      return "the adapter's tensor '" + name + "' fits no tensor of the model";
    std::copy(values.begin(), values.end(), it->second.first);
  }
  return std::nullopt;
}

/// A tensor of `n` floats by name; null, and its name added to `missing`, when it is absent
/// or has another size.
struct tensor_lookup {
  const tensor_table& tensors;
  std::string missing;

  const float* operator()(const std::string& name, std::size_t n) {
    auto it = tensors.find(name);
    if (it == tensors.end() || it->second.second != n) {
      missing += (missing.empty() ? "" : ", ") + name;
      return nullptr;
    }
    return it->second.first;
  }
};

/// The tensors of layer `l` ("l0." or "l1." names).
void bind_layer(tensor_lookup& get, int l, use_lite_layer& L) {
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

}  // namespace

engram::result<named_tensors> read_tensors(std::string_view bytes, std::size_t& at) {
  blob_reader r{bytes, at};
  std::uint32_t count = 0;
  if (!r.take(&count, 4))
    return engram::fail("truncated tensor table");
  named_tensors out;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t len = 0, n = 0;
    if (!r.take(&len, 4) || r.at + len > bytes.size())
      return engram::fail("truncated tensor table");
    std::string name(bytes.substr(r.at, len));
    r.at += len;
    if (!r.take(&n, 4) || r.at + std::size_t(n) * 4 > bytes.size())
      return engram::fail("truncated tensor " + name);
    std::vector<float> values(n);
    r.take(values.data(), std::size_t(n) * 4);
    out.emplace_back(std::move(name), std::move(values));
  }
  at = r.at;
  return out;
}

engram::result<std::unique_ptr<use_lite_model>> load_use_lite_model(const std::string& path,
                                                                    const encoder_adapter* adapter) {
  auto fail = [&](const std::string& why) { return engram::fail("embedder model '" + path + "': " + why); };
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail("cannot open (run `tools/dev.sh setup` to fetch and convert it, or set embedder.model_path)");
  auto m = std::make_unique<use_lite_model>();
  const std::string blob((std::istreambuf_iterator<char>(in)), {});
  blob_reader r{blob};
  char magic[8];
  if (!r.take(magic, 8) || std::memcmp(magic, "EGUSE001", 8) != 0)
    return fail("not a converted USE Lite model (bad magic)");
  std::uint32_t count = 0;
  if (!r.take(&count, 4) || count != 8000)
    return fail("expected 8000 vocabulary pieces");
  UErrorCode status = U_ZERO_ERROR;
  m->nfkc = icu::Normalizer2::getNFKCInstance(status);
  if (U_FAILURE(status))
    return fail(std::string("ICU NFKC unavailable: ") + u_errorName(status));
  if (auto bad = read_vocabulary(r, count, *m))
    return fail(*bad);
  auto read = read_tensors(blob, r.at);
  if (!read)
    return fail(read.error());
  tensor_table tensors;
  place_tensors(std::move(*read), m->weights, tensors);
  if (adapter)
    if (auto bad = adapt(*adapter, tensors))
      return fail(*bad);
  tensor_lookup get{tensors, {}};
  m->embeddings = get("embeddings", 8002 * 256);
  m->timing_inv = get("timing_inv", 128);
  m->tanh_w = get("tanh_w", 512 * 512);
  m->tanh_b = get("tanh_b", 512);
  auto ln_eps = get("ln_eps", 1), l2_eps = get("l2_eps", 1);
  for (int l = 0; l < 2; ++l)
    bind_layer(get, l, m->layers[l]);
  if (!get.missing.empty())
    return fail("missing or misshapen tensors: " + get.missing);
  m->ln_eps = *ln_eps;
  m->l2_eps = *l2_eps;
  return m;
}

std::vector<std::int32_t> tokenize(const use_lite_model& model, std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  auto normalised = model.nfkc->normalize(
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size()))), status);
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
  // The piece (its trie node) of each substring c[st, st + len), 0 when none, by one walk down
  // the trie from each start. Only the last max_piece starts are ever read: a ring of rows,
  // the row of start st filled when the end reaches st + 1.
  std::uint32_t piece[max_piece][max_piece];
  std::vector<double> best(n + 1, 0.0);
  std::vector<std::int32_t> id(n + 1, 0);
  std::vector<std::size_t> len(n + 1, 0);
  for (std::size_t e = 1; e <= n; ++e) {
    {
      const std::size_t st = e - 1;
      auto& row = piece[st % max_piece];
      std::fill(std::begin(row), std::end(row), 0u);
      std::uint32_t node = 0;
      for (std::size_t l = 1; l <= max_piece && st + l <= n; ++l) {
        auto edge = model.trie.find(std::uint64_t{node} << 21 | static_cast<std::uint32_t>(c[st + l - 1]));
        if (edge == model.trie.end())
          break;
        node = edge->second;
        if (model.piece_of[node].second >= 0)
          row[l - 1] = node;
      }
    }
    for (std::size_t st = e > max_piece ? e - max_piece : 0; st < e; ++st) {
      double score;
      std::int32_t pid;
      if (const auto node = piece[st % max_piece][(e - st) - 1]) {
        score = model.piece_of[node].first;
        pid = model.piece_of[node].second;
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

}  // namespace engram::embedding::detail
