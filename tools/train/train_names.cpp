// engram_train_names: the C++ half of training the name tagger (reading/name_tagger.hpp). It
// owns everything the tagger computes, so that a model is trained on exactly the features it is
// served with; tools/train/names/train.py owns the learning (PyTorch) and calls it.
//
//   engram_train_names lexicon --dict D --faker F --aliases A --clusters C --out L
//       the word lists of a model (name_features.hpp) from a dictionary (one word a line), the
//       faker locale lists (JSON: first, last, place, company_suffix) and base/aliases.txt, and
//       its word clusters (clusters.py's table)
//   engram_train_names features --lexicon L --buckets B FILE...
//       one JSON line per labelled item: {"id", "writer", "style", "tags": [...], "words": [...],
//       "feats": [[rows of token 0], ...]}; tags are O, B-TYPE, I-TYPE over the tokens, words
//       the tokens in lower case
//   engram_train_names eval --model M [--threshold T] [--sweep] [--errors N] FILE...
//       typed exact-span precision / recall of the model on labelled items, by type and by style
//   engram_train_names spans --model M [--threshold T] FILE...
//       each item's tokens, labelled spans and the spans the model keeps, with the scores of the
//       same tokens as a name of each type (names/second_stage.py reads them)
//
// Labelled items are the JSON Lines of tools/train/data/GUIDE.md: names marked [[TYPE:text]].

#include "embedding/embedder.hpp"
#include "reading/name_features.hpp"
#include "reading/name_tagger.hpp"
#include "evaluation/labelled.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace engram;
using namespace engram::reading;
using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- lexicon ----------------------------------------------------------------------------

tagging::bloom bloom_of(const std::set<std::string>& words) {
  tagging::bloom b(std::max<std::uint64_t>(64, words.size() * 10), 6);  // about 1 % false positives
  for (const auto& w : words)
    b.add(w);
  return b;
}

/// The word clusters of clusters.py's table (word, coarse, fine; frequency order), by key.
void read_clusters(const std::string& path, tagging::lexicon& lex) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<std::tuple<std::uint32_t, std::size_t, tagging::word_cluster>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string w;
    int coarse = 0, fine = 0;
    if (!std::getline(cols, w, '\t') || !(cols >> coarse >> fine))
      throw std::runtime_error(path + ": a line that is not word, coarse, fine");
    rows.emplace_back(static_cast<std::uint32_t>(tagging::fnv1a(tagging::fold_case(w))), rows.size(),
                      tagging::word_cluster{static_cast<std::uint8_t>(coarse), static_cast<std::uint8_t>(fine)});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const auto& [key, rank, c] : rows)
    if (lex.cluster_keys.empty() || lex.cluster_keys.back() != key) {
      lex.cluster_keys.push_back(key);
      lex.clusters.push_back(c);
    }
  std::fprintf(stderr, "lexicon: clusters %7zu words\n", lex.clusters.size());
}

int make_lexicon(const std::string& dict, const std::string& faker, const std::string& aliases,
                 const std::string& clusters, const std::string& out_path) {
  std::set<std::string> sets[tagging::word_list_count];
  auto& lower = sets[static_cast<int>(tagging::word_list::dictionary_lower)];
  auto& proper = sets[static_cast<int>(tagging::word_list::dictionary_proper)];
  std::set<std::string> capitalised;
  {
    std::ifstream in(dict);
    if (!in)
      throw std::runtime_error("cannot read " + dict);
    std::string w;
    while (std::getline(in, w)) {
      // Possessives ("Aaron's") are left out; contractions ("don't", "we'll") are words.
      if (w.empty() || (w.size() > 2 && w.compare(w.size() - 2, 2, "'s") == 0))
        continue;
      const auto folded = tagging::fold_case(w);
      (folded == w ? lower : capitalised).insert(folded);
    }
  }
  for (const auto& w : capitalised)
    if (!lower.count(w))
      proper.insert(w);
  const auto f = json::parse(read_file(faker));
  auto fill = [&](tagging::word_list l, const json& list) {
    for (const auto& v : list)
      sets[static_cast<int>(l)].insert(tagging::fold_case(v.get<std::string>()));
  };
  fill(tagging::word_list::first_name, f.at("first"));
  fill(tagging::word_list::surname, f.at("last"));
  fill(tagging::word_list::place, f.at("place"));
  fill(tagging::word_list::legal_form, f.at("company_suffix"));
  {
    // base/aliases.txt: "Canonical = alias, alias" under [technology] and [place] headings.
    std::ifstream in(aliases);
    if (!in)
      throw std::runtime_error("cannot read " + aliases);
    std::string line, section;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#')
        continue;
      if (line[0] == '[') {
        section = line;
        continue;
      }
      const auto l = section == "[place]" ? tagging::word_list::place : tagging::word_list::technology;
      std::string names_on_line = line;
      std::replace(names_on_line.begin(), names_on_line.end(), '=', ',');
      std::istringstream parts(names_on_line);
      for (std::string part; std::getline(parts, part, ',');) {
        const auto b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
        if (b != std::string::npos)
          sets[static_cast<int>(l)].insert(tagging::fold_case(part.substr(b, e - b + 1)));
      }
    }
  }
  tagging::lexicon lex;
  for (std::size_t l = 0; l < tagging::word_list_count; ++l) {
    lex.lists[l] = bloom_of(sets[l]);
    std::fprintf(stderr, "lexicon: %-8s %7zu entries\n", std::string(tagging::to_string(tagging::word_list(l))).c_str(),
                 sets[l].size());
  }
  read_clusters(clusters, lex);
  std::ofstream(out_path, std::ios::binary) << lex.serialise();
  return 0;
}

// ---- features ---------------------------------------------------------------------------

/// The tags of each token: B-/I- where a token lies inside a labelled span, O elsewhere.
/// Counts the spans whose edges fall inside a token in `misaligned`.
std::vector<std::string> tags_of(const evaluation::labelled::labelled_item& it,
                                 const std::vector<tagging::token>& tokens, std::size_t& misaligned) {
  std::vector<std::string> tags(tokens.size(), "O");
  for (const auto& s : it.spans) {
    bool first = true, aligned_begin = false, aligned_end = false;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      aligned_begin |= tokens[i].begin == s.begin;
      aligned_end |= tokens[i].end == s.end;
      if (tokens[i].begin >= s.begin && tokens[i].end <= s.end) {
        tags[i] = (first ? "B-" : "I-") + s.type;
        first = false;
      }
    }
    misaligned += !(aligned_begin && aligned_end);
  }
  return tags;
}

int dump_features(const std::string& lexicon_path, std::uint32_t buckets, const std::vector<std::string>& files) {
  auto lex = tagging::lexicon::parse(read_file(lexicon_path));
  if (!lex)
    throw std::runtime_error(lexicon_path + ": not a lexicon");
  std::size_t misaligned = 0, spans = 0;
  for (const auto& it : evaluation::labelled::read_labelled(files)) {
    const auto tokens = tagging::tokenize(it.text);
    std::vector<std::string> words;
    for (const auto& t : tokens)
      words.push_back(tagging::fold_case(std::string_view(it.text).substr(t.begin, t.end - t.begin)));
    json line{{"id", it.id},       {"writer", it.writer},
              {"style", it.style}, {"tags", tags_of(it, tokens, misaligned)},
              {"words", words},    {"feats", tagging::features(it.text, tokens, *lex, buckets)}};
    spans += it.spans.size();
    std::cout << line.dump() << '\n';
  }
  std::fprintf(stderr, "features: %zu spans, %zu with an edge inside a token\n", spans, misaligned);
  return 0;
}

/// Each token's context from the encoder: the mean of the last layer's rows of its pieces (the
/// sentence read as its tokens' pieces in order, each token's own), int8 per token with its
/// float scale; tokens past the encoder's 128 pieces or without pieces get zeros. Written as
/// raw int8 rows [tokens, 512] to OUT and float32 scales to OUT.scale, items in file order.
int dump_states(const std::string& encoder_path, const std::string& out, const std::vector<std::string>& files) {
  auto enc = embedding::use_lite_int8_embedder::load(encoder_path);
  if (!enc)
    throw std::runtime_error(enc.error());
  std::ofstream rows(out, std::ios::binary), scales(out + ".scale", std::ios::binary);
  std::size_t n = 0;
  for (const auto& it : evaluation::labelled::read_labelled(files)) {
    const auto tokens = tagging::tokenize(it.text);
    std::vector<std::int32_t> ids;
    std::vector<std::pair<std::size_t, std::size_t>> span;
    for (const auto& t : tokens) {
      auto p = (*enc)->tokenize(std::string_view(it.text).substr(t.begin, t.end - t.begin));
      span.emplace_back(ids.size(), ids.size() + p.size());
      ids.insert(ids.end(), p.begin(), p.end());
    }
    const auto st = (*enc)->piece_states(ids);
    const std::size_t have = st.size() / 512;
    for (const auto& [a, b0] : span) {
      const std::size_t b = std::min(b0, have);
      std::vector<float> m(512, 0.0f);
      for (std::size_t r = a; r < b; ++r)
        for (int k = 0; k < 512; ++k)
          m[k] += st[r * 512 + k];
      float mx = 0;
      for (auto& v : m) {
        v = b > a ? v / static_cast<float>(b - a) : 0.0f;
        mx = std::max(mx, std::fabs(v));
      }
      std::int8_t q[512];
      for (int k = 0; k < 512; ++k)
        q[k] = static_cast<std::int8_t>(mx > 0 ? std::nearbyint(m[k] * (127.0f / mx)) : 0);
      const float scale = mx / 127.0f;
      rows.write(reinterpret_cast<const char*>(q), 512);
      scales.write(reinterpret_cast<const char*>(&scale), sizeof scale);
      ++n;
    }
  }
  std::fprintf(stderr, "states: %zu tokens\n", n);
  return 0;
}

/// A model file read; throws naming the file and what is wrong with it.
std::shared_ptr<const name_tagger> load_model(const std::string& path) {
  auto parsed = name_tagger::parse(read_file(path));
  if (auto* err = std::get_if<std::string>(&parsed))
    throw std::runtime_error(path + ": " + *err);
  return std::get<std::shared_ptr<const name_tagger>>(std::move(parsed));
}

/// Each item's tokens, its labelled spans and the spans the model keeps at its threshold, with
/// the score of the same tokens as a name of each type (PER, ORG, PROD, LOC, ID; the model's
/// units): what a second reading of a kept span's type learns from. JSON Lines.
int dump_spans(const std::string& model_path, std::optional<std::int32_t> threshold,
               const std::vector<std::string>& files) {
  const auto model_ptr = load_model(model_path);
  const auto& model = *model_ptr;
  constexpr std::int32_t floor = std::numeric_limits<std::int32_t>::min() / 8;
  for (const auto& it : evaluation::labelled::read_labelled(files)) {
    json tokens = json::array(), gold = json::array(), kept = json::array();
    for (const auto& t : tagging::tokenize(it.text))
      tokens.push_back({t.begin, t.end});
    for (const auto& g : it.spans)
      gold.push_back({g.begin, g.end, g.type});
    const auto all = model.scored_spans(it.text, floor);
    for (const auto& k : model.tag(it.text, threshold.value_or(model.threshold()))) {
      json by_type = json::array({floor, floor, floor, floor, floor});
      for (const auto& c : all)
        if (c.begin == k.begin && c.end == k.end)
          by_type[static_cast<std::size_t>(c.type)] = c.score;
      kept.push_back(
          {{"begin", k.begin}, {"end", k.end}, {"type", evaluation::labelled::type_tag(k.type)}, {"scores", by_type}});
    }
    std::cout << json{{"id", it.id},      {"writer", it.writer}, {"style", it.style}, {"text", it.text},
                      {"tokens", tokens}, {"gold", gold},        {"kept", kept}}
                     .dump()
              << '\n';
  }
  return 0;
}

int run_eval(const std::string& model_path, std::optional<std::int32_t> threshold, bool sweep, std::size_t errors,
             bool as_json, const std::vector<std::string>& files) {
  const auto model_ptr = load_model(model_path);
  const auto& model = *model_ptr;
  const auto items = evaluation::labelled::read_labelled(files);
  if (sweep) {
    // Thresholds as probabilities 0.01 .. 0.95: typed precision and recall at each.
    json rows = json::array();
    for (int pc : {1, 2, 3, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95}) {
      const auto t = static_cast<std::int32_t>(std::floor(std::log(pc / 100.0) * model.units_per_nat()));
      const auto s = evaluation::labelled::score_names(model, items, t);
      rows.push_back(
          {{"probability", pc / 100.0}, {"threshold", t}, {"p", s.all.p()}, {"r", s.all.r()}, {"f", s.all.f()}});
      if (!as_json)
        std::printf("p>=%.2f (%6d)  P %.3f  R %.3f  F %.3f\n", pc / 100.0, t, s.all.p(), s.all.r(), s.all.f());
    }
    if (as_json)
      std::cout << rows.dump() << '\n';
    return 0;
  }
  const auto s = evaluation::labelled::score_names(model, items, threshold.value_or(model.threshold()), errors);
  if (as_json) {
    json j{{"items", items.size()},
           {"typed", {{"p", s.all.p()}, {"r", s.all.r()}, {"f", s.all.f()}}},
           {"untyped", {{"p", s.untyped.p()}, {"r", s.untyped.r()}, {"f", s.untyped.f()}}}};
    for (const auto& [k, c] : s.by_type)
      j["byType"][k] = {{"p", c.p()}, {"r", c.r()}, {"n", c.tp + c.fn}};
    for (const auto& [k, c] : s.by_style)
      j["byStyle"][k] = {{"p", c.p()}, {"r", c.r()}, {"n", c.tp + c.fn}};
    std::cout << j.dump() << '\n';
    return 0;
  }
  std::printf("%zu items: typed P %.3f R %.3f F %.3f (spans only: P %.3f R %.3f)\n", items.size(), s.all.p(), s.all.r(),
              s.all.f(), s.untyped.p(), s.untyped.r());
  for (const auto& [k, c] : s.by_type)
    std::printf("  type  %-14s P %.3f R %.3f (%zu)\n", k.c_str(), c.p(), c.r(), c.tp + c.fn);
  for (const auto& [k, c] : s.by_style)
    std::printf("  style %-14s P %.3f R %.3f (%zu)\n", k.c_str(), c.p(), c.r(), c.tp + c.fn);
  for (const auto& e : s.errors)
    std::printf("  %s\n", e.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engram_train_names: the name tagger's lexicon, features and evaluation"};
  app.require_subcommand(1);
  std::string dict, faker, aliases, clusters, out, lexicon_path, model_path;
  std::uint32_t buckets = 1u << 17;
  std::vector<std::string> files;
  std::optional<std::int32_t> threshold;
  bool sweep = false, as_json = false;
  std::size_t errors = 0;
  auto* lex = app.add_subcommand("lexicon", "build the word lists");
  lex->add_option("--dict", dict)->required();
  lex->add_option("--faker", faker)->required();
  lex->add_option("--aliases", aliases)->required();
  lex->add_option("--clusters", clusters)->required();
  lex->add_option("--out", out)->required();
  auto* feats = app.add_subcommand("features", "features and tags of labelled items, JSON Lines");
  feats->add_option("--lexicon", lexicon_path)->required();
  feats->add_option("--buckets", buckets);
  feats->add_option("files", files)->required();
  auto* eval = app.add_subcommand("eval", "typed exact-span precision and recall");
  eval->add_option("--model", model_path)->required();
  eval->add_option("--threshold", threshold);
  eval->add_flag("--sweep", sweep);
  eval->add_flag("--json", as_json);
  eval->add_option("--errors", errors);
  eval->add_option("files", files)->required();
  std::string encoder_path;
  auto* states = app.add_subcommand("states", "each token's encoder context, int8 rows");
  states->add_option("--encoder", encoder_path)->required();
  states->add_option("--out", out)->required();
  states->add_option("files", files)->required();
  auto* spans = app.add_subcommand("spans", "labelled and kept spans with their scores by type, JSON Lines");
  spans->add_option("--model", model_path)->required();
  spans->add_option("--threshold", threshold);
  spans->add_option("files", files)->required();
  auto* format = app.add_subcommand("feature-format", "the feature format this build computes (a model names it)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*lex)
      return make_lexicon(dict, faker, aliases, clusters, out);
    if (*feats)
      return dump_features(lexicon_path, buckets, files);
    if (*states)
      return dump_states(encoder_path, out, files);
    if (*spans)
      return dump_spans(model_path, threshold, files);
    if (*format) {
      std::printf("%d\n", tagging::feature_format);
      return 0;
    }
    return run_eval(model_path, threshold, sweep, errors, as_json, files);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engram_train_names: %s\n", e.what());
    return 1;
  }
}
