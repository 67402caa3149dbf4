#pragma once
// How messages are read: the extraction, extractor (with its llm), embedder (with its
// openai endpoint) and dedup sections of engram.yaml.

#include <cstdint>
#include <optional>
#include <string>

namespace engram::config {

struct extraction_config {
  /// Entries read with less confidence are dropped (and counted in /metrics). Default: 0.6.
  double confidence_threshold = 0.6;
  /// Entries kept per message at most, its first ones; the message itself is stored whole.
  /// 0: no bound. Default: 200.
  std::uint32_t max_entries_per_message = 200;
  /// Newsletters, list traffic, notifications and spam (extractor/bulk.hpp): "skip" (nothing
  /// read from them), "low_confidence" (read, with half the confidence) or "keep". Default: skip.
  std::string bulk = "skip";
  /// The entry-type model (embedding/type_model.hpp) weighs in on the cues' types and reads
  /// sentences the cues left untyped; it runs an int8 USE Lite encoder of its own
  /// (embedder.model_path) changed by the adapter trained for types.
  /// false: the cues alone. Default: true.
  bool type_model = true;
  /// The relation model (reading/relation_model.hpp) reads the relations of names the cue
  /// rules leave unrelated, by the meaning of the words around them; it runs the same int8
  /// encoder. false: the cue rules alone. Default: false (measured in docs/graph-queries.md:
  /// on the development set it adds no relation the cue rules miss yet, and costs precision).
  bool relation_model = false;
  /// The name model (reading/name_tagger.hpp, compiled in) reads people, organisations,
  /// products, places and identifiers; the rules fill in where it found none. false: the rules
  /// alone, as before the model (the reader of older stores' golden digests). Default: true.
  bool name_model = true;
  /// The relation classifier (reading/relation_classifier.hpp, compiled in) reads the
  /// relations of names each sentence states that the cue rules leave unrelated. false: the
  /// cue rules alone, as before the classifier (the reader of older stores' golden digests).
  /// Default: true.
  bool relation_classifier = true;
  /// Person messages are also kept as passages (docs/recall.md): recall never loses what was
  /// said. false: entries only (smaller records and store). Default: true.
  bool passages = true;
};

struct llm_config {
  /// OpenAI-compatible API base URL. Default: "http://127.0.0.1:11434/v1" (a local Ollama).
  std::string base_url = "http://127.0.0.1:11434/v1";
  /// Default: "llama3.1".
  std::string model = "llama3.1";
  /// Bearer token for the endpoint; never logged. Default: none.
  std::string api_key;
  /// Default: 20,000 ms; a slower answer falls back to the rules.
  std::uint32_t timeout_ms = 20000;
};

struct extractor_config {
  /// "rules" (deterministic, the default) or "llm" (falls back to the rules per message).
  std::string kind = "rules";
  llm_config llm;
};

struct openai_embedder_config {
  /// OpenAI-compatible endpoint (…/v1); /embeddings is appended. Default: none.
  std::string base_url;
  std::string model;
  /// Bearer token; never logged. Default: none.
  std::string api_key;
  /// Dimension of the endpoint's vectors (required with kind openai).
  std::uint32_t dimension = 0;
  /// Default: 10,000 ms.
  std::uint32_t timeout_ms = 10000;
};

struct embedder_config {
  /// use-lite-int8 (in-process Universal Sentence Encoder Lite in integers: the same bits on
  /// every CPU; the default), use-lite (the float32 reference encoder) or openai.
  std::string kind = "use-lite-int8";
  /// The int8 encoder's vector-unit path: auto (the widest the CPU has), avx512, avx2 or
  /// portable. Every path gives the same bits; a path the CPU lacks is refused at start.
  std::string isa = "auto";
  /// The converted USE Lite weights (tools/dev.sh setup writes them). Default:
  /// .cache/models/use-lite-en.bin (relative to the working directory).
  std::string model_path = ".cache/models/use-lite-en.bin";
  /// Vectors of the most recent distinct texts kept (2 KiB each at 512-d); 0 turns the
  /// cache off. Default: 20,000.
  std::uint32_t cache_size = 20000;
  /// Entries of one message embedded at most (its first ones; the rest are stored without
  /// a vector and deduplicated by exact title): a huge mail costs the encoder a bounded
  /// time. Each sentence is read up to 128 tokens (the model's). 0: no bound. Default: 64.
  std::uint32_t max_per_message = 64;
  openai_embedder_config openai;
};

struct dedup_config {
  /// Cosine above which two statements may be duplicates (the structure must agree too).
  /// Default: 0.92.
  double threshold = 0.92;
};

/// With kind openai, the endpoint's base_url, model and dimension are set; or the first
/// one missing.
[[nodiscard]] std::optional<std::string> validate(const embedder_config& embedder);

}  // namespace engram::config
