// engram_train_types: trains the entry-type model's weights (embedding/type_model.hpp) from the
// development sets over the vectors of the int8 encoder changed by the built-in adapter
// (embedding/models/type_adapter.bin; --adapter FILE another), and checks or writes
// embedding/type_weights.inc. Run from the source root.
//
//   engram_train_types --out embedding/type_weights.inc   train on every example, write
//   engram_train_types --check embedding/type_weights.inc train, compare (exit 1 if stale)
//   engram_train_types --cv 5    k-fold cross-validation over the labelled messages: the
//                                extractor's typed recall / precision with the cues alone and
//                                with the model under each choice of thresholds
//   engram_train_types --grid SET  the same choices on a labelled set it is not trained on
//   engram_train_types --curve SET...  the learning curve on labelled sets
//
// Examples: the labelled statements of tests/data/extraction/labelled.jsonl and of the
// messages written for training (train_messages*.jsonl) with their types, their junk and every
// other sentence of their messages as none; the statements of
// tests/data/extraction/train_statements*.jsonl (written for training by sessions that saw
// neither the rules nor a held-out set); the typed statements of tests/data/dedup/pairs.jsonl
// and tests/data/contradiction/cases.jsonl. Never a held-out set.

#include "reading/cleaner.hpp"
#include "embedding/embedder.hpp"
#include "reading/extract.hpp"
#include "reading/sentences.hpp"
#include "embedding/type_model.hpp"
#include "evaluation/extraction.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace {

using namespace engram;
using nlohmann::json;

constexpr const char* labelled_path = "tests/data/extraction/labelled.jsonl";
constexpr const char* provenance =
    "Trained on tests/data/extraction/labelled.jsonl, train_messages*.jsonl and train_statements*.jsonl, "
    "tests/data/dedup/pairs.jsonl "
    "and tests/data/contradiction/cases.jsonl with the int8 USE Lite encoder.";

/// example::message of the training statements: statement_base minus the example's index.
constexpr int statement_base = -1000000;

struct example {
  std::string text;
  std::uint8_t cls;
  /// The labelled message it comes from (-1: another set; at or below statement_base: a
  /// training statement).
  int message;
};

std::uint8_t class_of(const std::string& type) {
  auto t = schemas::parse_entry_type(type);
  if (!t)
    throw std::runtime_error("unknown entry type '" + type + "'");
  std::uint8_t c = 0;
  while (schemas::all_entry_types[c] != *t)
    ++c;
  return c;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path + " (run from the source root)");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

/// Lower-case letters and digits, one space between words: what "the same sentence" compares.
std::string norm(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80)
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out;
}

/// tests/data/extraction/<prefix>*.jsonl, in name order.
std::vector<std::string> training_files(std::string_view prefix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("tests/data/extraction")) {
    const auto name = e.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".jsonl"))
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<example> examples(const std::vector<std::string>& labelled) {
  std::vector<example> out;
  for (int i = 0; i < static_cast<int>(labelled.size()); ++i) {
    auto doc = json::parse(labelled[static_cast<std::size_t>(i)]);
    const auto& labels = doc["labels"];
    std::vector<std::string> known;
    for (const auto& e : labels["entries"]) {
      out.push_back({e["text"].get<std::string>(), class_of(e["type"].get<std::string>()), i});
      known.push_back(norm(e["text"].get<std::string>()));
    }
    for (const auto& j : labels.value("junk", json::array())) {
      out.push_back({j.get<std::string>(), static_cast<std::uint8_t>(embedding::type_none), i});
      known.push_back(norm(j.get<std::string>()));
    }
    auto cleaned = reading::clean(doc.value("body", ""), doc["from"].value("name", ""));
    for (auto& s : reading::split_sentences(cleaned.text)) {
      auto n = norm(s);
      if (n.size() < 8)
        continue;
      bool seen = false;
      for (const auto& k : known)
        seen |= k.find(n) != std::string::npos || n.find(k) != std::string::npos;
      if (!seen)
        out.push_back({s, static_cast<std::uint8_t>(embedding::type_none), i});
    }
  }
  for (const auto& line : read_lines("tests/data/dedup/pairs.jsonl")) {
    auto p = json::parse(line);
    for (const char* side : {"a", "b"})
      out.push_back({p[side].get<std::string>(), class_of(p["type"].get<std::string>()), -1});
  }
  for (const auto& file : training_files("train_statements"))
    for (const auto& line : read_lines(file)) {
      auto t = json::parse(line);
      const auto type = t["type"].get<std::string>();
      out.push_back({t["text"].get<std::string>(),
                     type == "none" ? static_cast<std::uint8_t>(embedding::type_none) : class_of(type),
                     statement_base - static_cast<int>(out.size())});
    }
  for (const auto& line : read_lines("tests/data/contradiction/cases.jsonl")) {
    auto c = json::parse(line);
    for (const char* side : {"older", "newer"})
      out.push_back({c[side]["text"].get<std::string>(), class_of(c["type"].get<std::string>()), -1});
  }
  return out;
}

std::vector<std::vector<float>> embed_all(const embedding::embedder& e, const std::vector<example>& xs) {
  std::vector<std::vector<float>> out;
  for (std::size_t b = 0; b < xs.size(); b += 64) {
    std::vector<std::string_view> texts;
    for (std::size_t i = b; i < std::min(xs.size(), b + 64); ++i)
      texts.push_back(xs[i].text);
    auto v = e.embed(texts);
    if (!v)
      throw std::runtime_error(v.error());
    for (auto& vec : *v)
      out.push_back(std::move(vec));
  }
  return out;
}

embedding::type_training training;

/// The fold an example is held out in (-1: never): labelled messages by message, training
/// statements by statement.
int fold_of(const example& x, int folds) {
  if (x.message >= 0)
    return x.message % folds;
  if (x.message <= statement_base)
    return (statement_base - x.message) % folds;
  return -1;
}

/// The held folds' training statements, each read as a one-sentence chat message by the rules
/// alone and with the model under each choice of thresholds: how often the type (or none) is
/// the label. The rules were never tuned on these statements, so this measures how the two
/// should be weighed on text neither has seen.
void statement_folds(const std::shared_ptr<const embedding::embedder>& enc, const std::vector<example>& xs,
                     const std::vector<embedding::type_weights>& weights, int folds) {
  auto read = [&](const example& x, const embedding::type_model* m) {
    schemas::inbound_message msg;
    msg.event_id = "s";
    msg.organization_id = "acme";
    msg.source = schemas::source_type::chat;
    msg.from.name = "Sam Doe";
    msg.from.address = "sam@acme.example";
    msg.body = x.text;
    reading::validator_options opts;
    if (m)
      opts.types = std::shared_ptr<const embedding::type_model>(m, [](const embedding::type_model*) {});
    auto got = reading::extract_validated(msg, opts);
    if (got.entries.empty())
      return embedding::type_none;
    std::size_t c = 0;
    while (schemas::all_entry_types[c] != got.entries[0].type)
      ++c;
    return c;
  };
  auto score = [&](const std::function<std::size_t(const example&)>& f) {
    std::size_t typed = 0, typed_right = 0, none = 0, none_right = 0;
    for (const auto& x : xs) {
      if (x.message > statement_base)
        continue;
      auto got = f(x);
      if (x.cls == embedding::type_none) {
        ++none;
        none_right += got == embedding::type_none;
      } else {
        ++typed;
        typed_right += got == x.cls;
      }
    }
    std::printf("typed statements read with their type %.3f (%zu), none read as none %.3f (%zu)\n",
                double(typed_right) / double(typed), typed, double(none_right) / double(none), none);
  };
  std::printf("\ntraining statements, %d folds: cues alone: ", folds);
  score([&](const example& x) { return read(x, nullptr); });
  for (float override_min : {0.3f, 0.4f, 0.5f, 0.6f})
    for (float rules_max : {0.1f, 0.2f, 0.3f, 0.5f})
      for (float add_min : {0.4f, 0.5f, 0.6f, 0.7f}) {
        std::vector<std::unique_ptr<embedding::type_model>> models;
        for (int f = 0; f < folds; ++f)
          models.push_back(std::make_unique<embedding::type_model>(
              enc, weights[static_cast<std::size_t>(f)],
              embedding::type_choice_options{override_min, rules_max, add_min, 0.65, 1.1f, 3}));
        std::printf("override_min %.1f rules_max %.1f add_min %.1f: ", override_min, rules_max, add_min);
        score([&](const example& x) { return read(x, models[static_cast<std::size_t>(fold_of(x, folds))].get()); });
      }
}

embedding::type_weights train_on(const std::vector<example>& xs, const std::vector<std::vector<float>>& vs,
                                 int held_fold, int folds) {
  std::vector<std::vector<float>> x;
  std::vector<std::string> texts;
  std::vector<std::uint8_t> y;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (held_fold < 0 || fold_of(xs[i], folds) != held_fold) {
      x.push_back(vs[i]);
      texts.push_back(xs[i].text);
      y.push_back(xs[i].cls);
    }
  return embedding::train_type_model(x, texts, y, training);
}

struct tally {
  std::size_t tp = 0, gold = 0, predicted = 0;
  void add(const evaluation::report& r) {
    for (const auto& c : r.types)
      tp += c.tp;
    gold += r.gold_entries;
    predicted += r.predicted_entries;
  }
  [[nodiscard]] std::string str() const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "typed recall %.3f  precision %.3f", gold ? double(tp) / double(gold) : 0.0,
                  predicted ? double(tp) / double(predicted) : 0.0);
    return buf;
  }
};

int cross_validate(const std::shared_ptr<const embedding::embedder>& enc, const std::vector<std::string>& labelled,
                   const std::vector<example>& xs, const std::vector<std::vector<float>>& vs, int folds) {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("engram-train-types-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> fold_files;
  std::vector<embedding::type_weights> fold_weights;
  for (int f = 0; f < folds; ++f) {
    auto path = (dir / ("fold" + std::to_string(f) + ".jsonl")).string();
    std::ofstream out(path);
    for (std::size_t i = 0; i < labelled.size(); ++i)
      if (static_cast<int>(i) % folds == f)
        out << labelled[i] << "\n";
    fold_files.push_back(path);
    fold_weights.push_back(train_on(xs, vs, f, folds));
  }
  // The model alone on the held fold's examples: the type of the labelled statements (the
  // first of the seven types), and none against a type.
  std::size_t typed = 0, typed_right = 0, all = 0, all_right = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].message < 0)
      continue;
    const auto& w = fold_weights[static_cast<std::size_t>(fold_of(xs[i], folds))];
    auto p = embedding::type_probabilities_of(w, vs[i], embedding::word_features(xs[i].text, w.buckets, w.word_scale));
    std::size_t top = 0, top_type = 0;
    for (std::size_t c = 1; c < embedding::type_classes; ++c) {
      top = p[c] > p[top] ? c : top;
      if (c < embedding::type_none)
        top_type = p[c] > p[top_type] ? c : top_type;
    }
    ++all;
    all_right += (top == embedding::type_none) == (xs[i].cls == embedding::type_none);
    if (xs[i].cls != embedding::type_none) {
      ++typed;
      typed_right += top_type == xs[i].cls;
    }
  }
  std::printf(
      "model alone on held folds: type of %zu labelled statements %.3f right; statement or none of %zu "
      "sentences %.3f right\n",
      typed, double(typed_right) / double(typed), all, double(all_right) / double(all));
  tally cues;
  for (int f = 0; f < folds; ++f)
    cues.add(evaluation::evaluate(fold_files[static_cast<std::size_t>(f)], {}));
  std::printf("%d-fold cross-validation over %zu labelled messages (%zu examples)\ncues alone: %s\n", folds,
              labelled.size(), xs.size(), cues.str().c_str());
  for (float override_min : {0.3f, 0.4f, 0.6f})
    for (float rules_max : {0.1f, 0.2f})
      for (float add_min : {0.4f, 0.5f, 0.7f, 1.1f})
        for (float drop_min : {0.9f, 1.1f}) {
          tally with;
          for (int f = 0; f < folds; ++f) {
            reading::validator_options opts;
            opts.types = std::make_shared<embedding::type_model>(
                enc, fold_weights[static_cast<std::size_t>(f)],
                embedding::type_choice_options{override_min, rules_max, add_min, 0.65, drop_min, 3});
            with.add(evaluation::evaluate(fold_files[static_cast<std::size_t>(f)], opts));
          }
          std::printf("override_min %.1f rules_max %.1f add_min %.1f drop_min %.1f: %s\n", override_min, rules_max,
                      add_min, drop_min, with.str().c_str());
        }
  fs::remove_all(dir);
  statement_folds(enc, xs, fold_weights, folds);
  return 0;
}

/// The thresholds of type_choice_options on a labelled set the model was not trained on: the
/// extractor's typed recall and precision with the cues alone and under each choice.
int grid(const std::shared_ptr<const embedding::embedder>& enc, const embedding::type_weights& weights,
         const std::string& set) {
  auto cues = evaluation::evaluate(set, {});
  if (!cues.error.empty())
    throw std::runtime_error(cues.error);
  std::printf("%s: cues alone: typed recall %.3f  precision %.3f\n", set.c_str(), cues.typed_recall(),
              cues.typed_precision());
  for (float override_min : {0.3f, 0.4f, 0.5f, 0.6f})
    for (float rules_max : {0.1f, 0.2f, 0.3f, 0.5f, 1.0f})
      for (float add_min : {0.4f, 0.5f, 0.6f, 0.7f})
        for (float drop_min : {0.6f, 0.8f, 1.1f}) {
          reading::validator_options opts;
          opts.types = std::make_shared<embedding::type_model>(
              enc, weights, embedding::type_choice_options{override_min, rules_max, add_min, 0.65, drop_min, 3});
          auto r = evaluation::evaluate(set, opts);
          std::printf(
              "override_min %.1f rules_max %.1f add_min %.1f drop_min %.1f: typed recall %.3f  precision %.3f\n",
              override_min, rules_max, add_min, drop_min, r.typed_recall(), r.typed_precision());
        }
  return 0;
}

/// The int8 encoder the weights are trained on: changed by the adapter file `adapter_file`, by
/// the built-in adapter when none is given, by none when it is "none" (the plain encoder).
std::unique_ptr<embedding::use_lite_int8_embedder> encoder_of(const std::string& model_path,
                                                              const std::string& adapter_file) {
  if (adapter_file == "none") {
    auto plain = embedding::use_lite_int8_embedder::load(model_path);
    if (!plain)
      throw std::runtime_error(plain.error());
    return std::move(*plain);
  }
  std::optional<embedding::encoder_adapter> other;
  if (!adapter_file.empty()) {
    std::ifstream in(adapter_file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    auto parsed = embedding::parse_encoder_adapter(bytes.str());
    if (!in || !parsed)
      throw std::runtime_error(adapter_file + ": " + (in ? parsed.error() : "cannot read"));
    other = std::move(*parsed);
  }
  auto loaded = embedding::use_lite_int8_embedder::load(model_path, embedding::encoder_isa::automatic,
                                                        other ? &*other : &embedding::builtin_type_adapter());
  if (!loaded)
    throw std::runtime_error(loaded.error());
  return std::move(*loaded);
}

/// The learning curve: the model trained on evenly spread subsets of the examples, each read
/// with the default thresholds by the extractor on `sets` (typed recall and precision).
int curve(const std::shared_ptr<const embedding::embedder>& enc, const std::vector<example>& xs,
          const std::vector<std::vector<float>>& vs, const std::vector<std::string>& sets) {
  for (std::size_t n : {std::size_t{500}, std::size_t{1000}, std::size_t{2000}, std::size_t{4000}, xs.size()}) {
    if (n > xs.size())
      continue;
    std::vector<example> sub_x;
    std::vector<std::vector<float>> sub_v;
    for (std::size_t i = 0; i < xs.size(); ++i)
      if ((i + 1) * n / xs.size() != i * n / xs.size()) {
        sub_x.push_back(xs[i]);
        sub_v.push_back(vs[i]);
      }
    reading::validator_options opts;
    opts.types = std::make_shared<embedding::type_model>(enc, train_on(sub_x, sub_v, -1, 1));
    std::printf("%zu examples:", sub_x.size());
    for (const auto& set : sets) {
      auto r = evaluation::evaluate(set, opts);
      if (!r.error.empty())
        throw std::runtime_error(r.error);
      std::printf("  %s %.3f / %.3f", std::filesystem::path(set).filename().c_str(), r.typed_recall(),
                  r.typed_precision());
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engram_train_types: trains the entry-type model from the development sets"};
  std::string model_path = ".cache/models/use-lite-en.bin", out, check;
  int folds = 0;
  std::string dump, embed_in, grid_set, adapter_file;
  std::vector<std::string> curve_sets;
  app.add_option("--curve", curve_sets, "Print the learning curve: typed recall / precision on these labelled sets");
  app.add_option("--grid", grid_set, "Train on every example, then weigh the thresholds on this labelled set");
  app.add_option("--adapter", adapter_file,
                 "Train on the encoder changed by this adapter file (tools/train/types/encoder.py) instead of the "
                 "built-in one; none: the plain encoder");
  app.add_option("--embed", embed_in, "With --dump: embed the texts of this JSON Lines file ({text, type}) instead");
  app.add_option("--dump", dump, "Write each example (text, class, message, vector, words) as JSON Lines here");
  app.add_option("--model", model_path, "The converted USE Lite model")->capture_default_str();
  app.add_option("--out", out, "Write the trained weights here (type_weights.inc)");
  app.add_option("--check", check, "Exit 1 unless this file is what training gives");
  app.add_option("--iterations", training.iterations, "Gradient steps")->capture_default_str();
  app.add_option("--learning-rate", training.learning_rate, "Step size")->capture_default_str();
  app.add_option("--l2", training.l2, "L2 penalty")->capture_default_str();
  app.add_option("--buckets", training.buckets, "Hash buckets of the words' part (0: none)")->capture_default_str();
  app.add_option("--word-scale", training.word_scale, "Length of a sentence's word vector")->capture_default_str();
  app.add_option("--cv", folds, "k-fold cross-validation of the thresholds")->check(CLI::Range(2, 20));
  CLI11_PARSE(app, argc, argv);
  try {
    std::shared_ptr<const embedding::embedder> enc = std::make_shared<embedding::cached_embedder>(
        std::shared_ptr<const embedding::embedder>(encoder_of(model_path, adapter_file)), 50000);
    // The labelled messages: the development set, then those written for training.
    auto labelled = read_lines(labelled_path);
    for (const auto& file : training_files("train_messages"))
      for (auto& line : read_lines(file))
        labelled.push_back(std::move(line));
    auto xs = examples(labelled);
    if (!embed_in.empty()) {
      xs.clear();
      for (const auto& line : read_lines(embed_in)) {
        auto t = json::parse(line);
        const auto type = t.value("type", "none");
        xs.push_back({t["text"].get<std::string>(),
                      type == "none" ? static_cast<std::uint8_t>(embedding::type_none) : class_of(type), -1});
      }
    }
    auto vs = embed_all(*enc, xs);
    if (!dump.empty()) {
      std::ofstream o(dump);
      for (std::size_t i = 0; i < xs.size(); ++i) {
        json words = json::array();  // the words part as the model reads it: [bucket, value]
        for (const auto& w : embedding::word_features(xs[i].text, training.buckets, training.word_scale))
          words.push_back({w.bucket, w.value});
        o << json{{"text", xs[i].text}, {"cls", xs[i].cls}, {"message", xs[i].message}, {"v", vs[i]}, {"words", words}}
                 .dump()
          << "\n";
      }
      return 0;
    }
    if (!curve_sets.empty())
      return curve(enc, xs, vs, curve_sets);
    if (!grid_set.empty())
      return grid(enc, train_on(xs, vs, -1, 1), grid_set);
    if (folds > 0)
      return cross_validate(enc, labelled, xs, vs, folds);
    auto text = embedding::type_weights_source(train_on(xs, vs, -1, 1), provenance);
    if (!check.empty()) {
      std::ifstream in(check);
      std::stringstream have;
      have << in.rdbuf();
      if (have.str() != text) {
        std::cerr << check << " is not what training on the development sets gives: run engram_train_types --out "
                  << check << "\n";
        return 1;
      }
      std::cout << check << " is what training gives (" << xs.size() << " examples)\n";
      return 0;
    }
    if (out.empty()) {
      std::cerr << "one of --out, --check or --cv is needed\n";
      return 2;
    }
    std::ofstream(out) << text;
    std::cout << "wrote " << out << " (" << xs.size() << " examples)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "engram_train_types: " << e.what() << "\n";
    return 1;
  }
}
