#pragma once
// Relation extraction quality: the development set and the two held-out sets
// (tests/data/relations), read by the cue rules alone and by the cue rules with the relation
// model (reading/relation_model.hpp). Figures only; run from the source root.

#include <string>

namespace engram::bench {

int relations(const std::string& model_path);

/// Entity resolution on its held-out pairs (tests/data/entities/heldout_pairs.jsonl).
int resolution();

}  // namespace engram::bench
