// Rules extraction: quality on the labelled sets, messages per CPU-second (extract_bench.hpp).
#include "tools/bench/extract_bench.hpp"

#include "embedding/type_model.hpp"
#include "reading/extract.hpp"
#include "reading/validator.hpp"
#include "schemas/inbound_message.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/extraction.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace engram::bench {

int bench_extraction(const std::string& model) {
  // The development set (the rules were written against it, the type model trained on it)
  // and the held-out one (written by a helper session that never saw the rules or the
  // development set; never tuned on), always reported apart; with the cues alone and with
  // the type model (the default).
  auto types = embedding::load_type_model(model);
  if (!types)
    throw std::runtime_error(types.error());
  // Three readers: the cues alone, the cues with the type model (names by the rules alone, as
  // before the name model: extraction.name_model false), and the default (both models).
  struct reader {
    bool types, names;
    const char* what;
  };
  static constexpr reader readers[] = {
      {false, true, "the cues alone (extraction.type_model: false), names by the name model"},
      {true, false, "the type model, names by the rules alone (extraction.name_model: false)"},
      {true, true, "the type model and the name model (the default)"}};
  for (const char* set : {"tests/data/extraction/labelled.jsonl", "tests/data/extraction/dev2.jsonl",
                          "tests/data/extraction/heldout.jsonl", "tests/data/extraction/heldout2.jsonl"})
    for (const auto& rd : readers) {
      reading::validator_options opts;
      if (rd.types)
        opts.types = *types;
      if (!rd.names)
        opts.names = nullptr;
      if (std::getenv("ENGRAM_BENCH_ENTRIES_SHOW"))
        std::fprintf(stderr, "== %s (%s)\n", set, rd.what);
      auto r = evaluation::evaluate(set, opts);
      if (!r.error.empty())
        throw std::runtime_error(r.error);
      std::printf("extraction quality on %s (%s), %zu messages:\n%s\n", set, rd.what, r.messages, r.table().c_str());
    }
  // Deadlines alone, each sentence read as an action item: development (the date reader's rules
  // were mended on it).
  const char* due_set = "tests/data/dates/due_dev.jsonl";
  auto due = evaluation::evaluate_due_dates(due_set);
  if (!due.error.empty())
    throw std::runtime_error(due.error);
  std::printf("deadlines on %s: %zu of %zu read right (%.2f)\n", due_set, due.right, due.sentences, due.accuracy());
  for (const auto& w : due.wrong)
    std::printf("  %s\n", w.c_str());
  return 0;
}

int bench_extract_speed(const std::string& path, int runs, const std::string& type_model) {
  using clock_type = std::chrono::steady_clock;
  auto opts = read_everything();
  if (!type_model.empty()) {
    auto types = embedding::load_type_model(type_model);
    if (!types)
      throw std::runtime_error(types.error());
    opts.types = *types;
  }
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<schemas::inbound_message> msgs;
  std::string line;
  while (std::getline(in, line)) {
    schemas::inbound_message m;
    if (!schemas::decode(line, {}, m))
      msgs.push_back(std::move(m));
  }
  std::vector<double> rates, cpu_rates;
  std::size_t entries = 0;
  for (int r = 0; r < runs; ++r) {
    entries = 0;
    auto t0 = clock_type::now();
    double c0 = thread_cpu_seconds();
    for (const auto& m : msgs)
      entries += reading::extract_validated(m, opts).entries.size();
    cpu_rates.push_back(static_cast<double>(msgs.size()) / (thread_cpu_seconds() - c0));
    rates.push_back(static_cast<double>(msgs.size()) / std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::printf(
      "rules extraction%s on %s: %zu messages, %.2f entries/message, %.0f messages per CPU-second on 1 core "
      "(%.0f/s wall; median of %d)\n",
      type_model.empty() ? "" : " with the type model (its own encoder, no cache)", path.c_str(), msgs.size(),
      msgs.empty() ? 0.0 : double(entries) / double(msgs.size()), median(cpu_rates), median(rates), runs);
  return 0;
}

}  // namespace engram::bench
