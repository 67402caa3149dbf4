#include "schemas/extracted_message.hpp"
#include "schemas/internal/json_fields.hpp"

#include <nlohmann/json.hpp>

namespace engram::schemas {

namespace {

using json = nlohmann::ordered_json;
using detail::error;
using detail::fields;

json mention_json(const entity_mention& m) {
  json j{{"kind", to_string(m.kind)}, {"text", m.text}, {"value", m.value}};
  for (auto [k, v] : {std::pair{"currency", &m.currency},
                      {"address", &m.address},
                      {"role", &m.role},
                      {"company", &m.company},
                      {"phone", &m.phone}})
    if (!v->empty())
      j[k] = *v;
  return j;
}

error read_mention(const fields& f, entity_mention& m) {
  if (!f.is_object())
    return f.at("") + ": must be an object";
  std::string kind;
  if (auto e = f.text("kind", kind, true))
    return e;
  auto k = parse_entity_kind(kind);
  if (!k)
    return f.why("kind", "unknown entity kind '" + kind + "'");
  m.kind = *k;
  for (auto [k, v] : {std::pair{"text", &m.text},
                      {"value", &m.value},
                      {"currency", &m.currency},
                      {"address", &m.address},
                      {"role", &m.role},
                      {"company", &m.company},
                      {"phone", &m.phone}})
    if (auto e = f.text(k, *v))
      return e;
  return std::nullopt;
}

json signature_json(const signature& s) {
  return {{"numbers", s.numbers},   {"dates", s.dates}, {"amounts", s.amounts},
          {"entities", s.entities}, {"words", s.words}, {"key", s.key}};
}

error read_signature(const fields& f, signature& s) {
  if (!f.is_object())
    return f.at("") + ": must be an object";
  for (auto [k, v] :
       {std::pair{"numbers", &s.numbers}, {"dates", &s.dates}, {"amounts", &s.amounts}, {"entities", &s.entities}})
    if (auto e = f.texts(k, *v))
      return e;
  for (auto [k, v] : {std::pair{"words", &s.words}, {"key", &s.key}})
    if (auto e = f.text(k, *v))
      return e;
  return std::nullopt;
}

json entry_json(const entry& e) {
  json j{{"type", to_string(e.type)},         {"title", e.title},       {"content", e.content},
         {"confidence", e.confidence},        {"positive", e.positive}, {"mentions", e.mentions},
         {"signature", signature_json(e.sig)}};
  for (auto [k, v] : {std::pair{"subject", &e.subject},
                      {"slot", &e.slot},
                      {"value", &e.value},
                      {"dueAt", &e.due_at},
                      {"expiresAt", &e.expires_at}})
    if (!v->empty())
      j[k] = *v;
  if (e.suspicious)
    j["suspicious"] = true;
  if (!e.tags.empty())
    j["tags"] = e.tags;
  if (!e.embedding.empty())
    j["vector"] = detail::vector_json(e.embedding);
  return j;
}

error read_entry(const fields& f, std::size_t mentions, entry& en) {
  if (!f.is_object())
    return f.at("") + ": must be an object";
  std::string type;
  if (auto e = f.text("type", type, true))
    return e;
  auto t = parse_entry_type(type);
  if (!t)
    return f.why("type", "unknown entry type '" + type + "'");
  en.type = *t;
  for (auto [k, v, req] : {std::tuple{"title", &en.title, true},
                           {"content", &en.content, true},
                           {"subject", &en.subject, false},
                           {"slot", &en.slot, false},
                           {"value", &en.value, false},
                           {"dueAt", &en.due_at, false},
                           {"expiresAt", &en.expires_at, false}})
    if (auto e = f.text(k, *v, req))
      return e;
  if (auto e = f.number("confidence", en.confidence, true))
    return e;
  if (!(en.confidence >= 0 && en.confidence <= 1))
    return f.why("confidence", "must be within 0..1");
  if (auto e = f.boolean("positive", en.positive))
    return e;
  if (auto e = f.boolean("suspicious", en.suspicious))
    return e;
  if (auto e = f.texts("tags", en.tags))
    return e;
  if (f.has("mentions")) {
    const auto& refs = f["mentions"];
    if (!refs.is_array())
      return f.why("mentions", "must be an array of mention indexes");
    for (const auto& r : refs) {
      if (!r.is_number_unsigned() || r.get<std::size_t>() >= mentions)
        return f.why("mentions", "must be indexes into /extraction/mentions (0.." + std::to_string(mentions) + ")");
      en.mentions.push_back(r.get<std::size_t>());
    }
  }
  if (f.has("signature"))
    if (auto e = read_signature(fields(f["signature"], f.at("signature")), en.sig))
      return e;
  return f.vector("vector", en.embedding);
}

json relation_json(const entity_relation& r) {
  json j{{"subject", r.subject}, {"predicate", r.predicate}, {"object", r.object}, {"confidence", r.confidence}};
  if (r.entry)
    j["entry"] = *r.entry;
  if (r.ended)
    j["ended"] = true;
  if (!r.role.empty())
    j["role"] = r.role;
  return j;
}

error read_relation(const fields& f, const extraction& x, entity_relation& r) {
  if (!f.is_object())
    return f.at("") + ": must be an object";
  for (auto [k, v] : {std::pair{"subject", &r.subject}, {"object", &r.object}}) {
    if (!f.has(k) || !f[k].is_number_unsigned() || f[k].get<std::size_t>() >= x.mentions.size())
      return f.why(k, "must be an index into /extraction/mentions (0.." + std::to_string(x.mentions.size()) + ")");
    *v = f[k].get<std::size_t>();
  }
  if (auto e = f.text("predicate", r.predicate, true))
    return e;
  if (!is_relation_predicate(r.predicate))
    return f.why("predicate", "unknown relation '" + r.predicate + "'");
  if (auto e = f.number("confidence", r.confidence, true))
    return e;
  if (!(r.confidence >= 0 && r.confidence <= 1))
    return f.why("confidence", "must be within 0..1");
  if (f.has("entry")) {
    if (!f["entry"].is_number_unsigned() || f["entry"].get<std::size_t>() >= x.entries.size())
      return f.why("entry", "must be an index into /extraction/entries (0.." + std::to_string(x.entries.size()) + ")");
    r.entry = f["entry"].get<std::size_t>();
  }
  if (auto e = f.boolean("ended", r.ended))
    return e;
  return f.text("role", r.role);
}

json passage_json(const passage& p) {
  json j{{"text", p.text}, {"words", p.words}};
  if (!p.dates.empty())
    j["dates"] = p.dates;
  if (p.suspicious)
    j["suspicious"] = true;
  if (!p.embedding.empty())
    j["vector"] = detail::vector_json(p.embedding);
  return j;
}

error read_passage(const fields& f, passage& p) {
  if (!f.is_object())
    return f.at("") + ": must be an object";
  if (auto e = f.text("text", p.text, true))
    return e;
  if (p.text.empty())
    return f.why("text", "must not be empty");
  if (auto e = f.text("words", p.words))
    return e;
  if (auto e = f.texts("dates", p.dates))
    return e;
  if (auto e = f.boolean("suspicious", p.suspicious))
    return e;
  return f.vector("vector", p.embedding);
}

error read_extraction(const fields& f, extraction& x) {
  if (!f.is_object())
    return f.at("") + ": must be an object";
  if (auto e = f.text("extractor", x.extractor, true))
    return e;
  if (auto e = f.text("reader", x.reader))
    return e;
  if (auto e = f.count("droppedLowConfidence", x.dropped_low_confidence))
    return e;
  for (auto k : {"mentions", "entries"})
    if (!f.has(k) || !f[k].is_array())
      return f.why(k, "required array");
  const auto& mentions = f["mentions"];
  for (std::size_t i = 0; i < mentions.size(); ++i)
    if (auto e = read_mention(fields(mentions[i], f.at("mentions/" + std::to_string(i))), x.mentions.emplace_back()))
      return e;
  if (f.has("senderSignature"))
    if (auto e = read_mention(fields(f["senderSignature"], f.at("senderSignature")), x.sender_signature.emplace()))
      return e;
  const auto& entries = f["entries"];
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (auto e = read_entry(fields(entries[i], f.at("entries/" + std::to_string(i))), x.mentions.size(),
                            x.entries.emplace_back()))
      return e;
  // Records written before relations were read carry no relations.
  if (f.has("relations")) {
    const auto& relations = f["relations"];
    if (!relations.is_array())
      return f.why("relations", "must be an array");
    for (std::size_t i = 0; i < relations.size(); ++i)
      if (auto e = read_relation(fields(relations[i], f.at("relations/" + std::to_string(i))), x,
                                 x.relations.emplace_back()))
        return e;
  }
  // Records of format 2 carry no passages.
  if (f.has("passages")) {
    const auto& passages = f["passages"];
    if (!passages.is_array())
      return f.why("passages", "must be an array");
    if (passages.size() > max_passages_per_message)
      return f.why("passages", "at most " + std::to_string(max_passages_per_message) + " a message");
    for (std::size_t i = 0; i < passages.size(); ++i)
      if (auto e = read_passage(fields(passages[i], f.at("passages/" + std::to_string(i))), x.passages.emplace_back()))
        return e;
  }
  return std::nullopt;
}

}  // namespace

std::string to_json(const extracted_message& x) {
  const auto& k = x.knowledge;
  json mentions = json::array(), entries = json::array();
  for (const auto& m : k.mentions)
    mentions.push_back(mention_json(m));
  for (const auto& e : k.entries)
    entries.push_back(entry_json(e));
  json ex{{"extractor", k.extractor}, {"droppedLowConfidence", k.dropped_low_confidence}, {"mentions", mentions}};
  if (!k.reader.empty())
    ex["reader"] = k.reader;
  if (k.sender_signature)
    ex["senderSignature"] = mention_json(*k.sender_signature);
  ex["entries"] = std::move(entries);
  if (!k.relations.empty()) {
    json relations = json::array();
    for (const auto& r : k.relations)
      relations.push_back(relation_json(r));
    ex["relations"] = std::move(relations);
  }
  if (!k.passages.empty()) {
    json passages = json::array();
    for (const auto& p : k.passages)
      passages.push_back(passage_json(p));
    ex["passages"] = std::move(passages);
  }
  json j{{"formatVersion", extracted_format_version},
         {"message", json::parse(to_json(x.message))},
         {"extraction", std::move(ex)}};
  if (!x.embedder.empty())
    j["embedder"] = x.embedder;
  return j.dump();
}

std::optional<std::string> decode(std::string_view bytes, const decode_limits& limits, extracted_message& out) {
  auto j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("not a JSON object");
  fields f(j, "");
  double version = 0;
  if (auto e = f.number("formatVersion", version, true))
    return e;
  if (version != extracted_format_version && version != 2)
    return f.why("formatVersion", "this build reads versions 2 and " + std::to_string(extracted_format_version) +
                                      ", not " + f["formatVersion"].dump());  // as written: any number
  if (!f.has("message"))
    return f.why("message", "required");
  if (auto bad = decode(f["message"].dump(), limits, out.message))
    return "/message" + bad->field + ": " + bad->reason;
  if (!f.has("extraction"))
    return f.why("extraction", "required");
  if (auto e = read_extraction(fields(f["extraction"], "/extraction"), out.knowledge))
    return e;
  return f.text("embedder", out.embedder);
}

}  // namespace engram::schemas
