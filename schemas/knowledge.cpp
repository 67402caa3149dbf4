#include "schemas/knowledge.hpp"
#include "base/hash.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace engram::schemas {

std::string_view to_string(entry_type t) {
  switch (t) {
    case entry_type::fact: return "fact";
    case entry_type::decision: return "decision";
    case entry_type::event: return "event";
    case entry_type::preference: return "preference";
    case entry_type::goal: return "goal";
    case entry_type::relationship: return "relationship";
    case entry_type::action_item: return "action_item";
  }
  return {};
}

std::optional<entry_type> parse_entry_type(std::string_view s) {
  for (auto t : all_entry_types)
    if (to_string(t) == s)
      return t;
  return std::nullopt;
}

std::string_view to_string(entity_kind k) {
  switch (k) {
    case entity_kind::person: return "person";
    case entity_kind::organization: return "organization";
    case entity_kind::date: return "date";
    case entity_kind::amount: return "amount";
    case entity_kind::technology: return "technology";
    case entity_kind::location: return "location";
  }
  return {};
}

std::optional<entity_kind> parse_entity_kind(std::string_view s) {
  for (auto k : {entity_kind::person, entity_kind::organization, entity_kind::date, entity_kind::amount,
                 entity_kind::technology, entity_kind::location})
    if (to_string(k) == s)
      return k;
  return std::nullopt;
}

bool is_relation_predicate(std::string_view p) {
  for (auto q : relation_predicates)
    if (q == p)
      return true;
  return false;
}

std::string entry_id(std::string_view org, std::string_view event_id, std::size_t index) {
  std::uint64_t h = fnv1a_seed;
  auto mix = [&](std::string_view s) { h = fnv1a(0xff, fnv1a(s, h)); };  // 0xff: the separator
  mix(org);
  mix(event_id);
  mix(std::to_string(index));
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "e-";
  for (int i = 60; i >= 0; i -= 4)
    out += hex[(h >> i) & 15];
  return out;
}

std::string normal_form(std::string_view s) {
  std::string out;
  bool gap = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    bool keep = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
    // Typographic punctuation is punctuation: quotes, dashes, ellipsis (U+2010..U+2026)
    // and the no-break space.
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        static_cast<unsigned char>(s[i + 2]) >= 0x90 && static_cast<unsigned char>(s[i + 2]) <= 0xA6) {
      keep = false;
      i += 2;
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xA0) {
      keep = false;
      i += 1;
    }
    if (!keep) {
      gap = !out.empty();
      continue;
    }
    if (gap)
      out += ' ';
    gap = false;
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  return out;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t b = 0; b < s.size();) {
    auto sp = std::min(s.find(' ', b), s.size());
    if (sp > b)
      out.push_back(s.substr(b, sp - b));
    b = sp + 1;
  }
  return out;
}

std::string_view to_string(relation_type t) {
  switch (t) {
    case relation_type::supports: return "supports";
    case relation_type::contradicts: return "contradicts";
    case relation_type::supersedes: return "supersedes";
    case relation_type::relates_to: return "relates_to";
    case relation_type::causes: return "causes";
    case relation_type::blocks: return "blocks";
  }
  return {};
}

std::optional<relation_type> parse_relation_type(std::string_view s) {
  for (auto t : {relation_type::supports, relation_type::contradicts, relation_type::supersedes,
                 relation_type::relates_to, relation_type::causes, relation_type::blocks})
    if (to_string(t) == s)
      return t;
  return std::nullopt;
}

std::string_view to_string(save_outcome o) {
  switch (o) {
    case save_outcome::created: return "created";
    case save_outcome::merged: return "merged";
    case save_outcome::linked: return "linked";
    case save_outcome::superseded: return "superseded";
  }
  return {};
}

namespace {

nlohmann::json mention_json(const entity_mention& m) {
  nlohmann::json j{{"kind", to_string(m.kind)}, {"text", m.text}, {"value", m.value}};
  if (!m.currency.empty())
    j["currency"] = m.currency;
  if (!m.address.empty())
    j["address"] = m.address;
  if (!m.role.empty())
    j["role"] = m.role;
  if (!m.company.empty())
    j["company"] = m.company;
  if (!m.phone.empty())
    j["phone"] = m.phone;
  return j;
}

}  // namespace

std::string to_json(const extraction& x) {
  nlohmann::json entities = nlohmann::json::array();
  for (const auto& m : x.mentions)
    entities.push_back(mention_json(m));
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : x.entries) {
    nlohmann::json j{{"entryType", to_string(e.type)},
                     {"title", e.title},
                     {"content", e.content},
                     {"confidence", e.confidence},
                     {"polarity", e.positive ? "positive" : "negative"}};
    if (!e.subject.empty())
      j["subject"] = e.subject;
    if (!e.slot.empty())
      j["slot"] = e.slot;
    if (!e.value.empty())
      j["value"] = e.value;
    if (!e.due_at.empty())
      j["dueAt"] = e.due_at;
    if (e.suspicious)
      j["suspicious"] = true;
    nlohmann::json refs = nlohmann::json::array();
    for (auto i : e.mentions)
      if (i < x.mentions.size())
        refs.push_back(mention_json(x.mentions[i]));
    j["entities"] = refs;
    entries.push_back(std::move(j));
  }
  nlohmann::json out{{"extractor", x.extractor},
                     {"entities", entities},
                     {"entries", entries},
                     {"droppedLowConfidence", x.dropped_low_confidence}};
  if (!x.reader.empty())
    out["reader"] = x.reader;
  if (x.sender_signature)
    out["senderSignature"] = mention_json(*x.sender_signature);
  if (!x.relations.empty()) {
    nlohmann::json relations = nlohmann::json::array();
    for (const auto& r : x.relations) {
      if (r.subject >= x.mentions.size() || r.object >= x.mentions.size())
        continue;
      nlohmann::json j{{"subject", x.mentions[r.subject].value},
                       {"predicate", r.predicate},
                       {"object", x.mentions[r.object].value},
                       {"confidence", r.confidence}};
      if (r.ended)
        j["ended"] = true;
      if (!r.role.empty())
        j["role"] = r.role;
      if (r.entry && *r.entry < x.entries.size())
        j["statement"] = x.entries[*r.entry].content;
      relations.push_back(std::move(j));
    }
    out["relations"] = std::move(relations);
  }
  return out.dump();
}

double effective_confidence(double confidence, std::int64_t last_validated_ms, std::int64_t now_ms,
                            double half_life_days) {
  if (half_life_days <= 0 || now_ms <= last_validated_ms)
    return confidence;
  const double days = static_cast<double>(now_ms - last_validated_ms) / 86400000.0;
  return confidence * std::exp2(-days / half_life_days);
}

}  // namespace engram::schemas
