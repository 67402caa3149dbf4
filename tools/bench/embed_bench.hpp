#pragma once
// Benchmark of the sentence encoder on two kinds of input (bench::embed, memory_bench.hpp,
// times each): the labelled dedup statements (short business sentences), then sentences
// extracted from the ham corpus. It prints figures; nothing here asserts a speed.

#include <string>

namespace engram::bench {

/// USE Lite (the model at `model_path`) on the statements of tests/data/dedup/pairs.jsonl
/// (run from the source root), then on up to 2,000 sentences of the ham corpus at `ham_dir`;
/// `runs` runs each, medians printed.
int bench_embed(const std::string& model_path, const std::string& ham_dir, int runs);

}  // namespace engram::bench
