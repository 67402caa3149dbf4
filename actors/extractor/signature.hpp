#pragma once
// The signature of a statement: the numbers, dates, amounts and named entities that must
// agree (with the polarity) before two near-identical statements count as one.

#include "schemas/knowledge.hpp"

namespace engram::extractor {

/// Fills every entry's `sig` from its content and the mentions it refers to.
void sign(schemas::extraction& x);

}  // namespace engram::extractor
