#include "actors/dedup/facts.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace engram::dedup {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

facts facts_of(const schemas::inbound_message& m, const schemas::entry& e, std::size_t index) {
  facts f;
  f.id = schemas::entry_id(m.organization_id, m.event_id, index);
  f.type = e.type;
  f.title = e.sig.key;
  f.subject = schemas::normal_form(e.subject);
  f.slot = e.slot;
  f.sig = e.sig;
  f.positive = e.positive;
  f.author = lower(m.from.address);
  f.source = m.source;
  return f;
}

facts facts_of(const knowledge::stored_entry& e) {
  facts f;
  f.id = e.id;
  f.type = e.type;
  f.subject = schemas::normal_form(e.subject);
  f.slot = e.slot;
  f.sig = e.sig;
  f.title = e.sig.key;
  f.positive = e.positive;
  f.author = e.author;
  f.source = e.source_type == "manual" ? schemas::source_type::manual
             : e.source_type == "chat" ? schemas::source_type::chat
                                       : schemas::source_type::email;
  f.status = std::string(knowledge::to_string(e.status));
  return f;
}

int authority(schemas::source_type s) {
  return s == schemas::source_type::manual ? 2 : 1;
}

std::optional<facts> load_facts(const storage::graph_store& store, const event_overlay& overlay,
                                const std::string& org, const std::string& id) {
  if (auto it = overlay.find(id); it != overlay.end())
    return it->second;
  auto raw = store.get_entry(org, id);
  knowledge::stored_entry e;
  if (!raw || knowledge::decode(*raw, e))
    return std::nullopt;
  return facts_of(e);
}

}  // namespace engram::dedup
