// engram_train_recall: the C++ half of training recall's query head (embedding/query_head.hpp).
// It embeds with the encoder recall runs (int8 USE Lite), so the head is trained on exactly the
// vectors it is served with; tools/train/recall/train.py owns the learning (PyTorch).
//
//   engram_train_recall embed --model M --out PREFIX FILE...
//       every message and question of the conversations FILE... (the format of
//       tests/data/conversations/README.md): PREFIX.json, one object a line in order
//       ({"conversation", "id", "what": "message" | "question", "from", "kind", "answers"}), and
//       PREFIX.f32, the encoder's unit vectors of their texts (512 little-endian float32 each,
//       the same order). A message is embedded as its cleaned text, as extraction does.

#include "embedding/embedder.hpp"
#include "reading/cleaner.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

int embed(const std::string& model_path, const std::string& prefix, const std::vector<std::string>& files) {
  for (const auto& f : files)
    if (std::filesystem::weakly_canonical(f) == std::filesystem::weakly_canonical(prefix + ".json"))
      throw std::runtime_error("--out " + prefix + " would overwrite the input " + f);
  auto model = engram::embedding::use_lite_int8_embedder::load(model_path);
  if (!model)
    throw std::runtime_error(model.error());
  std::ofstream index(prefix + ".json"), vectors(prefix + ".f32", std::ios::binary);
  if (!index || !vectors)
    throw std::runtime_error("cannot write " + prefix + ".json / .f32");
  std::size_t written = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in)
      throw std::runtime_error("cannot read " + file);
    const auto c = json::parse(in);
    const auto conversation = c.at("id").get<std::string>();
    std::vector<json> rows;
    std::vector<std::string> texts;
    for (const auto& m : c.at("messages")) {
      const auto from = m.at("from").get<std::string>();
      rows.push_back({{"conversation", conversation}, {"id", m.at("id")}, {"what", "message"}, {"from", from}});
      texts.push_back(engram::reading::clean(m.at("text").get<std::string>(), from).text);
    }
    for (const auto& q : c.at("questions")) {
      rows.push_back({{"conversation", conversation},
                      {"id", q.at("id")},
                      {"what", "question"},
                      {"kind", q.at("kind")},
                      {"answers", q.at("answers")}});
      texts.push_back(q.at("question").get<std::string>());
    }
    constexpr std::size_t batch = 32;
    for (std::size_t b = 0; b < texts.size(); b += batch) {
      std::vector<std::string_view> part(
          texts.begin() + static_cast<std::ptrdiff_t>(b),
          texts.begin() + static_cast<std::ptrdiff_t>(std::min(texts.size(), b + batch)));
      auto v = (*model)->embed(part);
      if (!v)
        throw std::runtime_error(file + ": " + v.error());
      for (const auto& vec : *v)
        vectors.write(reinterpret_cast<const char*>(vec.data()),
                      static_cast<std::streamsize>(vec.size() * sizeof(float)));
    }
    for (const auto& r : rows)
      index << r.dump() << '\n';
    written += rows.size();
    std::fprintf(stderr, "%s: %zu texts\n", file.c_str(), rows.size());
  }
  std::fprintf(stderr, "%zu vectors in %s.f32\n", written, prefix.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engram_train_recall: embeds conversations for training recall's query head"};
  app.require_subcommand(1);
  std::string model = ".cache/models/use-lite-en.bin", prefix;
  std::vector<std::string> files;
  auto* e = app.add_subcommand("embed", "The encoder's vectors of every message and question");
  e->add_option("--model", model, "The converted USE Lite model")->capture_default_str();
  e->add_option("--out", prefix, "Output prefix (PREFIX.json, PREFIX.f32)")->required();
  e->add_option("files", files, "Conversation files")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    return embed(model, prefix, files);
  } catch (const std::exception& x) {
    std::fprintf(stderr, "engram_train_recall: %s\n", x.what());
    return 1;
  }
}
