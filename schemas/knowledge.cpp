#include "schemas/knowledge.hpp"

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
    nlohmann::json j{{"entryType", to_string(e.type)}, {"title", e.title},       {"content", e.content},
                     {"confidence", e.confidence},      {"polarity", e.positive ? "positive" : "negative"}};
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
  nlohmann::json out{{"extractor", x.extractor}, {"entities", entities}, {"entries", entries},
                     {"droppedLowConfidence", x.dropped_low_confidence}};
  if (x.sender_signature)
    out["senderSignature"] = mention_json(*x.sender_signature);
  return out.dump();
}

}  // namespace engram::schemas
