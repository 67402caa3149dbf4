// engram_train_relations: the C++ half of training the relation classifier
// (reading/relation_classifier.hpp): the features it is served with, and its evaluation;
// tools/train/relations/train.py owns the learning (PyTorch) and calls it.
//
//   engram_train_relations features --buckets B FILE...
//       one JSON line per labelled item with names: {"id", "pairs": [{"feats": [...], "label":
//       "works_at>", "ended": false}, ...]}: every pair of its marked names in text order (two
//       marks of the same name are no pair), labelled from the item's relations ("p>": the first
//       name is the subject, "p<": the second, "none"; ended when the item says it has ended)
//   engram_train_relations eval --model M [--margin X] [--sweep] [--json] [--errors N] FILE...
//       precision and recall of the model's relations among the marked names, by predicate: a
//       relation counts when its predicate and both ends, the right way round, are labelled;
//       whether it has ended is scored apart, on the relations found
//
// Labelled items are the JSON Lines of tools/train/data/GUIDE.md.

#include "reading/relation_classifier.hpp"
#include "evaluation/labelled.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace engram;
using json = nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A name as the labels compare it: lower case, spaces collapsed.
std::string normal(std::string_view s) {
  std::string out;
  for (char c : reading::tagging::fold_case(s)) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space && (out.empty() || out.back() == ' '))
      continue;
    out.push_back(space ? ' ' : c);
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out;
}

reading::name_type type_of(const std::string& tag) {
  if (tag == "PER")
    return reading::name_type::person;
  if (tag == "ORG")
    return reading::name_type::organization;
  if (tag == "PROD")
    return reading::name_type::product;
  if (tag == "LOC")
    return reading::name_type::place;
  return reading::name_type::identifier;
}

struct labelled_pairs {
  std::vector<reading::typed_name> names;
  std::vector<std::string> texts;  // normal() of each name
  /// (subject text, object text) -> predicate.
  std::map<std::pair<std::string, std::string>, std::string> gold;
  /// (subject text, object text) of the relations the item says have ended.
  std::set<std::pair<std::string, std::string>> ended;
};

labelled_pairs pairs_of(const evaluation::labelled::labelled_item& it) {
  labelled_pairs p;
  for (const auto& s : it.spans) {
    p.names.push_back({s.begin, s.end, type_of(s.type)});
    p.texts.push_back(normal(std::string_view(it.text).substr(s.begin, s.end - s.begin)));
  }
  for (const auto& r : it.relations) {
    p.gold[{normal(r.subject), normal(r.object)}] = r.predicate;
    if (r.ended)
      p.ended.insert({normal(r.subject), normal(r.object)});
  }
  return p;
}

/// The label of the pair (i, j), i before j.
std::string label_of(const labelled_pairs& p, std::size_t i, std::size_t j) {
  if (auto f = p.gold.find({p.texts[i], p.texts[j]}); f != p.gold.end())
    return f->second + ">";
  if (auto b = p.gold.find({p.texts[j], p.texts[i]}); b != p.gold.end())
    return b->second + "<";
  return "none";
}

int dump_features(std::uint32_t buckets, const std::vector<std::string>& files) {
  std::size_t pairs = 0, related = 0;
  for (const auto& it : evaluation::labelled::read_labelled(files)) {
    const auto p = pairs_of(it);
    json rows = json::array();
    for (std::size_t i = 0; i < p.names.size(); ++i)
      for (std::size_t j = i + 1; j < p.names.size(); ++j) {
        if (p.texts[i] == p.texts[j])
          continue;
        const auto label = label_of(p, i, j);
        related += label != "none";
        const bool ended = p.ended.count({p.texts[i], p.texts[j]}) || p.ended.count({p.texts[j], p.texts[i]});
        rows.push_back({{"feats", reading::relation_features(it.text, p.names, i, j, buckets)},
                        {"label", label},
                        {"ended", label != "none" && ended}});
        ++pairs;
      }
    if (!rows.empty())
      std::cout << json{{"id", it.id}, {"pairs", std::move(rows)}}.dump() << '\n';
  }
  std::fprintf(stderr, "features: %zu pairs, %zu related\n", pairs, related);
  return 0;
}

struct relation_scores {
  evaluation::labelled::counts all;
  /// Relations found right, and of them those whose end (ended or not) is right too.
  std::size_t ended_checked = 0, ended_right = 0;
  std::map<std::string, evaluation::labelled::counts> by_predicate;
  std::vector<std::string> errors;
};

relation_scores score(const reading::relation_classifier& model,
                      const std::vector<evaluation::labelled::labelled_item>& items, std::int32_t margin,
                      std::size_t errors_wanted) {
  relation_scores s;
  for (const auto& it : items) {
    const auto p = pairs_of(it);
    // (subject text, predicate, object text), as labelled and as read.
    using rel = std::tuple<std::string, std::string, std::string>;
    std::set<rel> gold, found, found_ended;
    for (std::size_t i = 0; i < p.names.size(); ++i)
      for (std::size_t j = i + 1; j < p.names.size(); ++j) {
        if (p.texts[i] == p.texts[j])
          continue;
        const auto l = label_of(p, i, j);
        if (l == "none")
          continue;
        const auto pred = l.substr(0, l.size() - 1);
        gold.insert(l.back() == '>' ? rel{p.texts[i], pred, p.texts[j]} : rel{p.texts[j], pred, p.texts[i]});
      }
    for (const auto& r : model.read(it.text, p.names, margin))
      if (p.texts[r.subject] != p.texts[r.object]) {
        found.insert({p.texts[r.subject], r.predicate, p.texts[r.object]});
        if (r.ended)
          found_ended.insert({p.texts[r.subject], r.predicate, p.texts[r.object]});
      }
    for (const auto& g : gold) {
      auto& t = s.by_predicate[std::get<1>(g)];
      if (found.count(g)) {
        ++s.all.tp;
        ++t.tp;
        ++s.ended_checked;
        s.ended_right += found_ended.count(g) == p.ended.count({std::get<0>(g), std::get<2>(g)});
      } else {
        ++s.all.fn;
        ++t.fn;
        if (s.errors.size() < errors_wanted)
          s.errors.push_back("missed " + std::get<0>(g) + " " + std::get<1>(g) + " " + std::get<2>(g) + " | " +
                             it.text);
      }
    }
    for (const auto& f : found)
      if (!gold.count(f)) {
        ++s.all.fp;
        ++s.by_predicate[std::get<1>(f)].fp;
        if (s.errors.size() < errors_wanted)
          s.errors.push_back("extra " + std::get<0>(f) + " " + std::get<1>(f) + " " + std::get<2>(f) + " | " + it.text);
      }
  }
  return s;
}

int run_eval(const std::string& model_path, std::optional<std::int32_t> margin, bool sweep, bool as_json,
             std::size_t errors, const std::vector<std::string>& files) {
  auto parsed = reading::relation_classifier::parse(read_file(model_path));
  if (auto* err = std::get_if<std::string>(&parsed))
    throw std::runtime_error(model_path + ": " + *err);
  const auto& model = *std::get<std::shared_ptr<const reading::relation_classifier>>(parsed);
  const auto items = evaluation::labelled::read_labelled(files);
  if (sweep) {
    // Margins over "none" in the model's units: precision and recall at each.
    json rows = json::array();
    for (std::int32_t m = 0; m <= 200; m += 5) {
      const auto s = score(model, items, m, 0);
      rows.push_back({{"margin", m}, {"p", s.all.p()}, {"r", s.all.r()}, {"f", s.all.f()}});
      if (!as_json)
        std::printf("margin %4d  P %.3f  R %.3f  F %.3f\n", m, s.all.p(), s.all.r(), s.all.f());
    }
    if (as_json)
      std::cout << rows.dump() << '\n';
    return 0;
  }
  const auto s = score(model, items, margin.value_or(model.margin()), errors);
  if (as_json) {
    json j{{"items", items.size()},
           {"p", s.all.p()},
           {"r", s.all.r()},
           {"f", s.all.f()},
           {"ended", {{"right", s.ended_right}, {"checked", s.ended_checked}}}};
    for (const auto& [k, c] : s.by_predicate)
      j["byPredicate"][k] = {{"p", c.p()}, {"r", c.r()}, {"n", c.tp + c.fn}};
    std::cout << j.dump() << '\n';
    return 0;
  }
  std::printf("%zu items: relations P %.3f R %.3f F %.3f (%zu labelled); ended or not right on %zu of %zu found\n",
              items.size(), s.all.p(), s.all.r(), s.all.f(), s.all.tp + s.all.fn, s.ended_right, s.ended_checked);
  for (const auto& [k, c] : s.by_predicate)
    std::printf("  %-14s P %.3f R %.3f (%zu)\n", k.c_str(), c.p(), c.r(), c.tp + c.fn);
  for (const auto& e : s.errors)
    std::printf("  %s\n", e.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engram_train_relations: the relation classifier's features and evaluation"};
  app.require_subcommand(1);
  std::uint32_t buckets = 1u << 16;
  std::vector<std::string> files;
  std::string model_path;
  std::optional<std::int32_t> margin;
  bool sweep = false, as_json = false;
  std::size_t errors = 0;
  auto* feats = app.add_subcommand("features", "features and labels of every pair of marked names, JSON Lines");
  feats->add_option("--buckets", buckets);
  feats->add_option("files", files)->required();
  auto* eval = app.add_subcommand("eval", "precision and recall of the relations among the marked names");
  eval->add_option("--model", model_path)->required();
  eval->add_option("--margin", margin);
  eval->add_flag("--sweep", sweep);
  eval->add_flag("--json", as_json);
  eval->add_option("--errors", errors);
  eval->add_option("files", files)->required();
  auto* format = app.add_subcommand("feature-format", "the feature format this build computes (a model names it)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*feats)
      return dump_features(buckets, files);
    if (*format) {
      std::printf("%d\n", reading::relation_feature_format);
      return 0;
    }
    return run_eval(model_path, margin, sweep, as_json, errors, files);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engram_train_relations: %s\n", e.what());
    return 1;
  }
}
