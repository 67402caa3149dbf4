#pragma once
// Extraction of one inbound message: an extractor (rules by default) followed by the
// validator. What the extractor stage and `engramctl extract` call.

#include "actors/extractor/validator.hpp"
#include "schemas/knowledge.hpp"

namespace engram::extractor {

/// Rules extraction + validation. Pure and thread-safe.
[[nodiscard]] schemas::extraction extract_validated(const schemas::inbound_message& m, const validator_options& opts,
                                                    validation_report* report = nullptr);

}  // namespace engram::extractor
