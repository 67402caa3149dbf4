// An OpenAI-compatible embeddings endpoint: POST {base_url}/embeddings
// {"model": ..., "input": [texts]} -> {"data": [{"index": i, "embedding": [...]}]}.

#include "embedding/embedder.hpp"
#include "net/http.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <list>
#include <mutex>
#include <unordered_map>

namespace engram::embedding {

namespace {

class openai_embedder final : public embedder {
public:
  explicit openai_embedder(openai_embedder_options o) : opts_(std::move(o)) {
    while (!opts_.base_url.empty() && opts_.base_url.back() == '/')
      opts_.base_url.pop_back();
  }

  std::size_t dim() const noexcept override { return opts_.dimension; }
  std::string name() const override { return "openai:" + opts_.model; }

  engram::result<std::vector<std::vector<float>>> embed(std::span<const std::string_view> texts) const override {
    auto fail = [&](const std::string& why) {
      return engram::fail("embeddings endpoint " + opts_.base_url + ": " + why);
    };
    std::vector<std::vector<float>> out(texts.size());
    if (texts.empty())
      return out;
    nlohmann::json input = nlohmann::json::array();
    for (auto t : texts)
      input.push_back(std::string(t));
    std::map<std::string, std::string> headers{{"Content-Type", "application/json"}};
    if (!opts_.api_key.empty())
      headers["Authorization"] = "Bearer " + opts_.api_key;
    auto res = net::fetch("POST", opts_.base_url + "/embeddings",
                          nlohmann::json{{"model", opts_.model}, {"input", input}}.dump(), headers,
                          std::chrono::milliseconds(opts_.timeout_ms));
    if (res.status == 0)
      return fail(res.error);
    if (res.status != 200)
      return fail("HTTP " + std::to_string(res.status));
    auto doc = nlohmann::json::parse(res.body, nullptr, false);
    if (doc.is_discarded() || !doc.contains("data") || !doc["data"].is_array())
      return fail("response has no data array");
    for (const auto& item : doc["data"]) {
      if (!item.is_object() || !item.contains("embedding") || !item["embedding"].is_array())
        return fail("data item without an embedding");
      auto index = item.value("index", std::size_t(0));
      if (index >= texts.size())
        return fail("data index " + std::to_string(index) + " out of range");
      std::vector<float> v;
      for (const auto& x : item["embedding"]) {
        if (!x.is_number())
          return fail("non-numeric embedding component");
        v.push_back(x.get<float>());
      }
      if (v.size() != opts_.dimension)
        return fail("embedding has " + std::to_string(v.size()) + " dimensions, embedder.openai.dimension is " +
                    std::to_string(opts_.dimension));
      double ss = 0;
      for (float c : v)
        ss += double(c) * c;
      if (ss <= 0)
        return fail("zero embedding");
      const float scale = static_cast<float>(1.0 / std::sqrt(ss));
      for (float& c : v)
        c *= scale;
      out[index] = std::move(v);
    }
    for (const auto& v : out)
      if (v.empty())
        return fail("fewer embeddings than inputs");
    return out;
  }

private:
  openai_embedder_options opts_;
};

}  // namespace

engram::result<std::unique_ptr<embedder>> make_openai_embedder(const openai_embedder_options& opts) {
  if (opts.base_url.rfind("http://", 0) != 0)
    return engram::fail("embedder.openai.base_url must start with http://");
  if (opts.model.empty())
    return engram::fail("embedder.openai.model is required");
  if (opts.dimension == 0)
    return engram::fail("embedder.openai.dimension must be > 0");
  return std::make_unique<openai_embedder>(opts);
}

struct cached_embedder::state {
  std::size_t capacity;
  mutable std::mutex mutex;
  /// Most recently used first.
  std::list<std::pair<std::string, std::vector<float>>> lru;
  std::unordered_map<std::string_view, decltype(lru)::iterator> index;
  std::uint64_t hits = 0, misses = 0;
};

cached_embedder::cached_embedder(std::shared_ptr<const embedder> inner, std::size_t capacity)
    : inner_(std::move(inner)), st_(std::make_unique<state>()) {
  st_->capacity = std::max<std::size_t>(capacity, 1);
}

cached_embedder::~cached_embedder() = default;

engram::result<std::vector<std::vector<float>>> cached_embedder::embed(std::span<const std::string_view> texts) const {
  auto& st = *st_;
  std::vector<std::vector<float>> out(texts.size());
  std::vector<std::string_view> missing;
  std::vector<std::size_t> where;
  {
    std::lock_guard lock(st.mutex);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (auto it = st.index.find(texts[i]); it != st.index.end()) {
        st.lru.splice(st.lru.begin(), st.lru, it->second);
        out[i] = it->second->second;
        ++st.hits;
      } else {
        missing.push_back(texts[i]);
        where.push_back(i);
      }
    }
  }
  if (missing.empty())
    return out;
  auto embedded = inner_->embed(missing);
  if (!embedded)
    return embedded;
  auto& computed = *embedded;
  std::lock_guard lock(st.mutex);
  st.misses += missing.size();
  for (std::size_t k = 0; k < missing.size(); ++k) {
    out[where[k]] = computed[k];
    if (st.index.count(missing[k]))
      continue;  // the same text twice in one call
    st.lru.emplace_front(std::string(missing[k]), std::move(computed[k]));
    st.index.emplace(st.lru.front().first, st.lru.begin());
    if (st.lru.size() > st.capacity) {
      st.index.erase(st.lru.back().first);
      st.lru.pop_back();
    }
  }
  return out;
}

std::size_t cached_embedder::size() const {
  std::lock_guard lock(st_->mutex);
  return st_->lru.size();
}

std::pair<std::uint64_t, std::uint64_t> cached_embedder::hits_and_misses() const {
  std::lock_guard lock(st_->mutex);
  return {st_->hits, st_->misses};
}

engram::result<std::unique_ptr<embedder>> make_embedder(const config::embedder_config& cfg) {
  if (cfg.kind == "openai") {
    openai_embedder_options o;
    o.base_url = cfg.openai.base_url;
    o.model = cfg.openai.model;
    o.api_key = cfg.openai.api_key;
    o.dimension = cfg.openai.dimension;
    o.timeout_ms = static_cast<int>(cfg.openai.timeout_ms);
    return make_openai_embedder(o);
  }
  if (cfg.kind == "use-lite-int8") {
    const auto isa = parse_encoder_isa(cfg.isa);
    if (!isa)
      return engram::fail("embedder.isa: must be auto, avx512, avx2 or portable, got '" + cfg.isa + "'");
    auto model = use_lite_int8_embedder::load(cfg.model_path, *isa);
    if (!model)
      return engram::fail(model.error());
    return std::move(*model);
  }
  auto model = use_lite_embedder::load(cfg.model_path);
  if (!model)
    return engram::fail(model.error());
  return std::move(*model);
}

engram::result<std::shared_ptr<const embedder>> int8_encoder(const config::embedder_config& cfg,
                                                             std::shared_ptr<const embedder> configured) {
  if (configured && configured->name() == "use-lite-int8")
    return configured;
  auto isa = parse_encoder_isa(cfg.isa);
  auto own = use_lite_int8_embedder::load(cfg.model_path, isa.value_or(encoder_isa::automatic));
  if (!own)
    return engram::fail("the trained readers need the int8 USE Lite encoder: " + own.error());
  return std::shared_ptr<const embedder>(std::move(*own));
}

}  // namespace engram::embedding
