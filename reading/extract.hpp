#pragma once
// Extraction of one inbound message: an extractor (rules by default, or an LLM with the
// rules as fallback) followed by the validator. What the extractor stage and
// `engramctl extract` call.

#include "reading/llm_extractor.hpp"
#include "reading/validator.hpp"
#include "schemas/knowledge.hpp"

namespace engram::reading {

enum class extractor_kind : std::uint8_t { rules, llm };

struct extractor_options {
  /// extractor.kind. Default: rules.
  extractor_kind kind = extractor_kind::rules;
  validator_options validator;
  llm_options llm;
};

/// Rules extraction + validation. Pure and thread-safe.
[[nodiscard]] schemas::extraction extract_validated(const schemas::inbound_message& m, const validator_options& opts,
                                                    validation_report* report = nullptr);

/// Extraction with the configured extractor, then validation. With the LLM, a timeout, an
/// HTTP error or invalid output falls back to the rules for this message; `fallback` says
/// why (llm_failure::none when the LLM answered or the rules were asked for).
[[nodiscard]] schemas::extraction extract_message(const schemas::inbound_message& m, const extractor_options& opts,
                                                  validation_report* report, llm_failure* fallback);

}  // namespace engram::reading
