#include "config/reading.hpp"

#include "config/internal/yaml_read.hpp"

namespace engram::config {

namespace detail {

namespace {

void read_llm(const YAML::Node& n, const std::string& key, llm_config& l) {
  each_key(n, key,
           {
               {"base_url",
                [&](auto& x, auto& k) {
                  l.base_url = as_string(x, k);
                  if (l.base_url.rfind("http://", 0) != 0)
                    reject(k, "must be an http:// URL, got '" + l.base_url + "'");
                }},
               {"model", [&](auto& x, auto& k) { l.model = as_string(x, k); }},
               {"api_key", [&](auto& x, auto& k) { l.api_key = as_string(x, k); }},
               {"timeout_ms",
                [&](auto& x, auto& k) { l.timeout_ms = static_cast<std::uint32_t>(as_uint(x, k, 100, 600000)); }},
           });
}

void read_openai(const YAML::Node& n, const std::string& key, openai_embedder_config& o) {
  each_key(
      n, key,
      {
          {"base_url",
           [&](auto& x, auto& k) {
             o.base_url = as_string(x, k);
             if (o.base_url.rfind("http://", 0) != 0)
               reject(k, "must be an http:// URL, got '" + o.base_url + "'");
           }},
          {"model", [&](auto& x, auto& k) { o.model = as_string(x, k); }},
          {"api_key", [&](auto& x, auto& k) { o.api_key = as_string(x, k); }},
          {"dimension", [&](auto& x, auto& k) { o.dimension = static_cast<std::uint32_t>(as_uint(x, k, 1, 65536)); }},
          {"timeout_ms",
           [&](auto& x, auto& k) { o.timeout_ms = static_cast<std::uint32_t>(as_uint(x, k, 100, 600000)); }},
      });
}

}  // namespace

void read_extraction(const YAML::Node& n, const std::string& key, extraction_config& out) {
  each_key(
      n, key,
      {
          {"confidence_threshold", [&](auto& v, auto& k) { out.confidence_threshold = as_double(v, k, 0.0, 1.0); }},
          {"max_entries_per_message",
           [&](auto& v, auto& k) {
             out.max_entries_per_message = static_cast<std::uint32_t>(as_uint(v, k, 0, 1000000));
           }},
          {"bulk",
           [&](auto& v, auto& k) {
             out.bulk = as_string(v, k);
             if (out.bulk != "skip" && out.bulk != "low_confidence" && out.bulk != "keep")
               reject(k, "must be skip, low_confidence or keep, got '" + out.bulk + "'");
           }},
          {"type_model", [&](auto& v, auto& k) { out.type_model = as_bool(v, k); }},
          {"relation_model", [&](auto& v, auto& k) { out.relation_model = as_bool(v, k); }},
          {"name_model", [&](auto& v, auto& k) { out.name_model = as_bool(v, k); }},
          {"relation_classifier", [&](auto& v, auto& k) { out.relation_classifier = as_bool(v, k); }},
          {"passages", [&](auto& v, auto& k) { out.passages = as_bool(v, k); }},
      });
}

void read_extractor(const YAML::Node& n, const std::string& key, extractor_config& out) {
  each_key(n, key,
           {
               {"kind",
                [&](auto& v, auto& k) {
                  out.kind = as_string(v, k);
                  if (out.kind != "rules" && out.kind != "llm")
                    reject(k, "must be rules or llm, got '" + out.kind + "'");
                }},
               {"llm", [&](const YAML::Node& v, const std::string& k) { read_llm(v, k, out.llm); }},
           });
}

void read_embedder(const YAML::Node& n, const std::string& key, embedder_config& out) {
  each_key(n, key,
           {
               {"kind",
                [&](auto& v, auto& k) {
                  out.kind = as_string(v, k);
                  if (out.kind != "use-lite-int8" && out.kind != "use-lite" && out.kind != "openai")
                    reject(k, "must be use-lite-int8, use-lite or openai, got '" + out.kind + "'");
                }},
               {"isa",
                [&](auto& v, auto& k) {
                  out.isa = as_string(v, k);
                  if (out.isa != "auto" && out.isa != "avx512" && out.isa != "avx2" && out.isa != "portable")
                    reject(k, "must be auto, avx512, avx2 or portable, got '" + out.isa + "'");
                }},
               {"model_path", [&](auto& v, auto& k) { out.model_path = as_string(v, k); }},
               {"max_per_message",
                [&](auto& v, auto& k) { out.max_per_message = static_cast<std::uint32_t>(as_uint(v, k, 0, 100000)); }},
               {"cache_size",
                [&](auto& v, auto& k) { out.cache_size = static_cast<std::uint32_t>(as_uint(v, k, 0, 10000000)); }},
               {"openai", [&](const YAML::Node& v, const std::string& k) { read_openai(v, k, out.openai); }},
           });
}

void read_dedup(const YAML::Node& n, const std::string& key, dedup_config& out) {
  each_key(n, key, {{"threshold", [&](auto& v, auto& k) { out.threshold = as_double(v, k, 0.5, 1.0); }}});
}

}  // namespace detail

std::optional<std::string> validate(const embedder_config& embedder) {
  if (embedder.kind != "openai")
    return std::nullopt;
  const auto& o = embedder.openai;
  if (o.base_url.empty())
    return "config key 'embedder.openai.base_url': required when embedder.kind is openai";
  if (o.model.empty())
    return "config key 'embedder.openai.model': required when embedder.kind is openai";
  if (o.dimension == 0)
    return "config key 'embedder.openai.dimension': required when embedder.kind is openai";
  return std::nullopt;
}

}  // namespace engram::config
