// The sentence encoder on the labelled dedup statements and on ham sentences (embed_bench.hpp).
#include "tools/bench/embed_bench.hpp"

#include "tools/bench/bench_support.hpp"
#include "tools/bench/memory_bench.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace engram::bench {

namespace {

/// The statements of the labelled dedup pairs: short business sentences.
std::vector<std::string> labelled_sentences() {
  std::vector<std::string> out;
  std::ifstream in("tests/data/dedup/pairs.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object())
      for (const char* k : {"a", "b"})
        out.push_back(j.value(k, ""));
  }
  if (out.empty())
    throw std::runtime_error("cannot read tests/data/dedup/pairs.jsonl (run from the source root)");
  return out;
}

}  // namespace

int bench_embed(const std::string& model_path, const std::string& ham_dir, int runs) {
  embed(model_path, labelled_sentences(), runs);
  embed(model_path, ham_sentences(ham_dir, 2000), runs);
  return 0;
}

}  // namespace engram::bench
