// engram_train_paraphrase: the C++ half of measuring (and training) paraphrase links. It reads
// each statement of labelled pairs the way a save is read (reading::read_statement, the int8
// encoder), takes what dedup reads of it (dedup::facts_of) and writes both sides and the checks
// dedup makes, so tools/train/paraphrase/engine.py learns and measures on exactly what the
// engine sees.
//
//   engram_train_paraphrase dump --model M --out FILE.jsonl PAIRS.jsonl...
//       one object a line per pair (the pair files' format, tools/train/data/paraphrases/GUIDE.md):
//       {"id", "kind", "type", "cos", "a": SIDE, "b": SIDE, "checks": {...}}, where SIDE holds the
//       entry read (title, subject, slot, value, positive), its signature (numbers, dates,
//       amounts, entities, words), its markers and its sense words, and "checks" what dedup
//       compares (same_values, complementary, same_wording, markers, sense_differs, polarity).

#include "dedup/dedup.hpp"
#include "dedup/facts.hpp"
#include "embedding/embedder.hpp"
#include "reading/read.hpp"
#include "reading/rules.hpp"
#include "schemas/vector.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
namespace schemas = engram::schemas;
namespace dedup = engram::dedup;

struct side {
  schemas::inbound_message message;
  schemas::extraction read;
};

side read_side(const std::string& id, const std::string& type, const std::string& text) {
  side s;
  s.message.event_id = id;
  s.message.organization_id = "pairs";
  s.message.source = schemas::source_type::email;
  s.message.from.address = "sarah@northwind.example";
  s.message.sent_at = "2026-03-05T09:00:00Z";
  s.message.sent_at_ms = 1772701200000;
  s.message.body = text;
  auto t = schemas::parse_entry_type(type);
  if (!t)
    throw std::runtime_error(id + ": unknown entry type '" + type + "'");
  s.read = engram::reading::read_statement(s.message, *t, text, 0.8);
  return s;
}

json side_json(const schemas::entry& e, const dedup::facts& f) {
  const auto& sig = e.sig;
  return {
      {"title", e.title},
      {"subject", e.subject},
      {"slot", e.slot},
      {"value", e.value},
      {"positive", e.positive},
      {"numbers", sig.numbers},
      {"dates", sig.dates},
      {"amounts", sig.amounts},
      {"entities", sig.entities},
      {"words", sig.words},
      {"key", sig.key},
      {"markers", f.markers},
      {"sense",
       {{"tense", f.sense.tense}, {"modal", f.sense.modal}, {"standing", f.sense.standing}, {"owner", f.sense.owner}}}};
}

json checks_json(const dedup::facts& a, const dedup::facts& b) {
  return {{"polarity", a.positive == b.positive},
          {"markers", a.markers == b.markers},
          {"sense_differs", dedup::sense_differs(a.sense, b.sense)},
          {"same_values", dedup::same_values(a.sig, b.sig)},
          {"same_wording", dedup::same_wording(a.sig.words, b.sig.words, a.order, b.order)}};
}

int dump(const std::string& model_path, const std::string& out_path, const std::vector<std::string>& files) {
  auto model = engram::embedding::use_lite_int8_embedder::load(model_path);
  if (!model)
    throw std::runtime_error(model.error());
  std::ofstream out(out_path);
  if (!out)
    throw std::runtime_error("cannot write " + out_path);
  std::size_t written = 0, unread = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in)
      throw std::runtime_error("cannot read " + file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty())
        continue;
      const auto p = json::parse(line);
      const auto id = p.at("id").get<std::string>(), type = p.value("type", "fact");
      auto a = read_side(id + "-a", type, p.at("a").get<std::string>());
      auto b = read_side(id + "-b", type, p.at("b").get<std::string>());
      schemas::extraction* xs[] = {&a.read, &b.read};
      if (auto embedded = engram::reading::embed_entries(**model, xs); !embedded)
        throw std::runtime_error(id + ": " + embedded.error());
      json row = {{"id", id}, {"kind", p.at("kind")}, {"type", type}};
      if (a.read.entries.size() != 1 || b.read.entries.size() != 1) {
        row["unread"] = true;  // a side read as no statement (or several): dedup never sees the pair
        ++unread;
      } else {
        const auto& ea = a.read.entries[0];
        const auto& eb = b.read.entries[0];
        const auto fa = dedup::facts_of(a.message, ea, 0), fb = dedup::facts_of(b.message, eb, 0);
        row["cos"] = schemas::similarity(ea.embedding, eb.embedding);
        row["a"] = side_json(ea, fa);
        row["b"] = side_json(eb, fb);
        row["checks"] = checks_json(fa, fb);
      }
      out << row.dump() << '\n';
      ++written;
    }
  }
  std::fprintf(stderr, "%zu pairs in %s (%zu with a side not read as one statement)\n", written, out_path.c_str(),
               unread);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engram_train_paraphrase: what dedup reads of labelled statement pairs"};
  app.require_subcommand(1);
  std::string model = ".cache/models/use-lite-en.bin", out;
  std::vector<std::string> files;
  auto* d = app.add_subcommand("dump", "Both sides of each pair as the engine reads them, and dedup's checks");
  d->add_option("--model", model, "The converted USE Lite model")->capture_default_str();
  d->add_option("--out", out, "Output JSON Lines")->required();
  d->add_option("files", files, "Pair files (JSON Lines)")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    return dump(model, out, files);
  } catch (const std::exception& x) {
    std::fprintf(stderr, "engram_train_paraphrase: %s\n", x.what());
    return 1;
  }
}
