#include "embedding/type_model.hpp"

#include "base/compiled_model.hpp"
#include "base/hash.hpp"
#include "embedding/internal/use_lite_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace engram::embedding::models {
std::string_view type_adapter_bytes();  // embedding/models/type_adapter.bin (cmake/CompiledModel.cmake)
}  // namespace engram::embedding::models

namespace engram::embedding {

namespace {

#include "embedding/type_weights.inc"

/// e^x for x <= 0 without libm: x = k ln2 + r, |r| <= ln2/2, e^r by its Taylor series to
/// degree 9 (error below 1e-9 relative), then 2^k. Every step an IEEE operation in a fixed
/// order (built without contraction), so the bits are the same on every machine.
float exp_nonpositive(float x) {
  if (x < -80.0f)
    return 0.0f;
  const double ln2 = 0.6931471805599453;
  const double k = std::nearbyint(static_cast<double>(x) / ln2);
  const double r = static_cast<double>(x) - k * ln2;
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 9; ++n) {
    term = term * r / n;
    sum = sum + term;
  }
  return static_cast<float>(std::ldexp(sum, static_cast<int>(k)));
}

type_probabilities softmax(std::array<float, type_classes> z) {
  float top = z[0];
  for (float v : z)
    top = v > top ? v : top;
  float total = 0.0f;
  for (auto& v : z) {
    v = exp_nonpositive(v - top);
    total += v;
  }
  for (auto& v : z)
    v /= total;
  return z;
}

std::array<float, type_classes> scores(const type_weights& m, std::span<const float> x,
                                       std::span<const word_feature> words) {
  std::array<float, type_classes> z = m.bias;
  for (std::size_t c = 0; c < type_classes; ++c) {
    const float* row = m.w.data() + c * m.dim;
    float s = 0.0f;
    for (std::size_t j = 0; j < m.dim; ++j)
      s += row[j] * x[j];
    if (m.buckets > 0) {
      const float* word_row = m.words.data() + c * m.buckets;
      for (const auto& f : words)
        s += word_row[f.bucket] * f.value;
    }
    z[c] += s;
  }
  return z;
}

/// 32-bit FNV-1a: the word buckets of the trained weights (type_weights.inc) are this hash's;
/// another hash means training again.
std::uint32_t fnv1a32(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

std::vector<word_feature> word_features(std::string_view text, std::size_t buckets, float scale) {
  std::vector<std::string> words;
  std::string word;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const auto c = i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
    if (c >= '0' && c <= '9') {
      if (word.empty() || word.back() != '0')
        word += '0';
    } else if ((c >= 'a' && c <= 'z') || c == '@' || c == '\'') {
      word += static_cast<char>(c);
    } else if (c >= 'A' && c <= 'Z') {
      word += static_cast<char>(c - 'A' + 'a');
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  std::vector<word_feature> out;
  if (buckets == 0)
    return out;
  auto add = [&](std::string_view w) { out.push_back({static_cast<std::uint32_t>(fnv1a32(w) % buckets), 1.0f}); };
  for (std::size_t i = 0; i < words.size(); ++i) {
    add(words[i]);
    if (i + 1 < words.size())
      add(words[i] + ' ' + words[i + 1]);
  }
  std::sort(out.begin(), out.end(), [](const word_feature& a, const word_feature& b) { return a.bucket < b.bucket; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (kept > 0 && out[kept - 1].bucket == out[i].bucket)
      out[kept - 1].value += 1.0f;
    else
      out[kept++] = out[i];
  }
  out.resize(kept);
  float norm = 0.0f;
  for (const auto& f : out)
    norm += f.value * f.value;
  if (norm > 0.0f) {
    const float k = scale / std::sqrt(norm);
    for (auto& f : out)
      f.value *= k;
  }
  return out;
}

const type_weights& builtin_type_weights() {
  static const type_weights w = [] {
    type_weights t;
    t.dim = kTypeDim;
    if (kTypeDim > 0)
      t.w.assign(std::begin(kTypeWeights), std::end(kTypeWeights));
    for (std::size_t c = 0; c < type_classes; ++c)
      t.bias[c] = kTypeBias[c];
    t.buckets = kTypeBuckets;
    t.word_scale = kTypeWordScale;
    if (kTypeBuckets > 0)
      t.words.assign(std::begin(kTypeWords), std::end(kTypeWords));
    return t;
  }();
  return w;
}

type_probabilities type_probabilities_of(const type_weights& weights, std::span<const float> x,
                                         std::span<const word_feature> words) {
  return softmax(scores(weights, x, words));
}

type_weights train_type_model(std::span<const std::vector<float>> x, std::span<const std::string> texts,
                              std::span<const std::uint8_t> y, const type_training& t) {
  type_weights m;
  m.dim = x.empty() ? 0 : x[0].size();
  m.w.assign(type_classes * m.dim, 0.0f);
  m.buckets = t.buckets;
  m.word_scale = t.word_scale;
  m.words.assign(type_classes * m.buckets, 0.0f);
  std::vector<std::vector<word_feature>> f;
  for (const auto& text : texts)
    f.push_back(word_features(text, m.buckets, m.word_scale));
  const auto n = static_cast<float>(x.size());
  std::vector<float> grad(m.w.size()), grad_words(m.words.size());
  for (std::size_t it = 0; it < t.iterations; ++it) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    std::fill(grad_words.begin(), grad_words.end(), 0.0f);
    std::array<float, type_classes> grad_bias{};
    for (std::size_t i = 0; i < x.size(); ++i) {
      auto p = softmax(scores(m, x[i], f[i]));
      for (std::size_t c = 0; c < type_classes; ++c) {
        const float g = p[c] - (y[i] == c ? 1.0f : 0.0f);
        grad_bias[c] += g;
        float* row = grad.data() + c * m.dim;
        for (std::size_t j = 0; j < m.dim; ++j)
          row[j] += g * x[i][j];
        float* word_row = grad_words.data() + c * m.buckets;
        for (const auto& w : f[i])
          word_row[w.bucket] += g * w.value;
      }
    }
    for (std::size_t k = 0; k < m.w.size(); ++k)
      m.w[k] -= t.learning_rate * (grad[k] / n + t.l2 * m.w[k]);
    for (std::size_t k = 0; k < m.words.size(); ++k)
      m.words[k] -= t.learning_rate * (grad_words[k] / n + t.l2 * m.words[k]);
    for (std::size_t c = 0; c < type_classes; ++c)
      m.bias[c] -= t.learning_rate * grad_bias[c] / n;
  }
  return m;
}

std::string type_weights_source(const type_weights& w, std::string_view provenance) {
  std::string out = "// Generated by engram_train_types: do not edit. " + std::string(provenance) + "\n";
  out += "constexpr std::size_t kTypeDim = " + std::to_string(w.dim) + ";\n";
  char buf[32];
  out += "constexpr float kTypeBias[] = {";
  for (std::size_t c = 0; c < type_classes; ++c) {
    std::snprintf(buf, sizeof buf, "%s%a", c ? ", " : "", static_cast<double>(w.bias[c]));
    out += buf;
  }
  out += "};\nconstexpr float kTypeWeights[] = {\n";
  for (std::size_t k = 0; k < w.w.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%a,%s", static_cast<double>(w.w[k]), (k + 1) % 8 == 0 ? "\n" : " ");
    out += buf;
  }
  out += "};\n";
  out += "constexpr std::size_t kTypeBuckets = " + std::to_string(w.buckets) + ";\n";
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(w.word_scale));
  out += "constexpr float kTypeWordScale = " + std::string(buf) + ";\n";
  out += "constexpr float kTypeWords[] = {\n";
  for (std::size_t k = 0; k < w.words.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%a,%s", static_cast<double>(w.words[k]), (k + 1) % 8 == 0 ? "\n" : " ");
    out += buf;
  }
  if (w.words.empty())
    out += "0.0f";
  out += "};\n";
  return out;
}

engram::result<encoder_adapter> parse_encoder_adapter(std::string_view bytes) {
  auto fail = [](const std::string& why) { return engram::fail("type adapter: " + why); };
  if (bytes.size() < 12 || bytes.substr(0, 8) != "ENGADPT1")
    return fail("not an adapter file (bad magic)");
  std::uint32_t n = 0;
  std::memcpy(&n, bytes.data() + 8, 4);
  if (12 + std::size_t(n) > bytes.size())
    return fail("truncated header");
  const auto meta = nlohmann::json::parse(bytes.substr(12, n), nullptr, false);
  if (!meta.is_object() || meta.value("format", 0) != 1 || meta.value("encoder", "") != "use-lite-int8" ||
      !meta.contains("rank") || !meta["rank"].is_number_unsigned())
    return fail("the header is not format 1 for use-lite-int8 with a rank");
  std::size_t at = 12 + std::size_t(n);
  auto tensors = detail::read_tensors(bytes, at);
  if (!tensors)
    return fail(tensors.error());
  encoder_adapter out;
  const auto rank = meta["rank"].get<std::size_t>();
  for (auto& [name, values] : *tensors) {
    const auto matrix = name.substr(0, name.size() >= 2 ? name.size() - 2 : 0);
    if (name.ends_with(".a"))
      out.updates.push_back({matrix, rank, std::move(values), {}});
    else if (name.ends_with(".b") && !out.updates.empty() && out.updates.back().matrix == matrix &&
             out.updates.back().b.empty())
      out.updates.back().b = std::move(values);
    else if (name.ends_with(".b"))
      return fail("'" + name + "' follows no '" + matrix + ".a'");
    else
      out.replaced.emplace_back(name, std::move(values));
  }
  for (const auto& u : out.updates)
    if (u.b.empty())
      return fail("'" + u.matrix + ".a' has no '" + u.matrix + ".b'");
  out.digest = fnv1a(bytes);
  return out;
}

const encoder_adapter& builtin_type_adapter() {
  static const encoder_adapter adapter =
      compiled_or_abort(parse_encoder_adapter(models::type_adapter_bytes()), "type adapter");
  return adapter;
}

type_model::type_model(std::shared_ptr<const embedder> encoder, type_weights weights, type_choice_options choice)
    : encoder_(std::move(encoder)), weights_(std::move(weights)), choice_(choice) {
  auto bytes = [](const auto& values) {
    return std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  };
  const auto h =
      fnv1a(bytes(weights_.words), fnv1a(bytes(weights_.bias), fnv1a(bytes(weights_.w), fnv1a(encoder_->name()))));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  version_ = std::string("types-3/") + hex;
}

engram::result<std::vector<type_probabilities>> type_model::classify(std::span<const std::string_view> texts) const {
  auto vectors = encoder_->embed(texts);
  if (!vectors)
    return engram::fail(vectors.error());
  if (weights_.dim == 0)
    return engram::fail("the type model has no weights (type_weights.inc is the untrained placeholder)");
  std::vector<type_probabilities> out;
  out.reserve(vectors->size());
  for (const auto& v : *vectors) {
    if (v.size() != weights_.dim)
      return engram::fail("the type model reads " + std::to_string(weights_.dim) + "-d vectors; the encoder " +
                          encoder_->name() + " gives " + std::to_string(v.size()));
    const auto i = out.size();
    out.push_back(type_probabilities_of(weights_, v, word_features(texts[i], weights_.buckets, weights_.word_scale)));
  }
  return out;
}

engram::result<std::shared_ptr<const type_model>> make_type_model(const config::embedder_config& cfg) {
  auto isa = parse_encoder_isa(cfg.isa);
  auto own =
      use_lite_int8_embedder::load(cfg.model_path, isa.value_or(encoder_isa::automatic), &builtin_type_adapter());
  if (!own)
    return engram::fail("extraction.type_model needs the int8 USE Lite encoder: " + own.error());
  return std::make_shared<const type_model>(std::shared_ptr<const embedder>(std::move(*own)));
}

engram::result<std::shared_ptr<const type_model>> load_type_model(const std::string& model_path) {
  config::embedder_config cfg;
  cfg.model_path = model_path;
  return make_type_model(cfg);
}

}  // namespace engram::embedding
