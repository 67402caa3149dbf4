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

std::optional<facts> facts_of(const std::string& entry_json) {
  auto doc = nlohmann::json::parse(entry_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("signature"))
    return std::nullopt;
  facts f;
  try {
    f.id = doc.at("id").get<std::string>();
    auto type = schemas::parse_entry_type(doc.at("entryType").get<std::string>());
    if (!type)
      return std::nullopt;
    f.type = *type;
    f.subject = schemas::normal_form(doc.value("subject", ""));
    f.slot = doc.value("slot", "");
    const auto& s = doc.at("signature");
    f.sig = {s.at("numbers").get<std::vector<std::string>>(), s.at("dates").get<std::vector<std::string>>(),
             s.at("amounts").get<std::vector<std::string>>(), s.at("entities").get<std::vector<std::string>>(),
             s.at("words").get<std::string>(), s.value("key", "")};
    f.title = f.sig.key;
    f.positive = doc.value("polarity", "positive") == "positive";
    f.author = doc.value("author", "");
    auto source = doc.value("sourceType", "email");
    f.source = source == "manual" ? schemas::source_type::manual
               : source == "chat" ? schemas::source_type::chat
                                  : schemas::source_type::email;
    f.status = doc.value("status", "active");
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return f;
}

int authority(schemas::source_type s) {
  return s == schemas::source_type::manual ? 2 : 1;
}

std::optional<facts> load_facts(const storage::graph_store& store, const event_overlay& overlay,
                                const std::string& org, const std::string& id) {
  if (auto it = overlay.find(id); it != overlay.end())
    return it->second;
  std::string json;
  if (store.get_entry(org, id, &json) != storage::errc::ok)
    return std::nullopt;
  return facts_of(json);
}

}  // namespace engram::dedup
