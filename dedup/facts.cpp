#include "dedup/facts.hpp"
#include "base/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace engram::dedup {

std::vector<order_word> order_of(std::string_view title) {
  static const std::set<std::string> neutral = {"a",  "an",   "the", "is", "are", "was", "were",
                                                "be", "been", "in",  "at", "on",  "of",  "'s"};
  std::vector<order_word> out;
  std::string w;
  bool capital = false, first = true;
  auto flush = [&] {
    if (w.size() > 2 && (w.ends_with("'s") || w.ends_with("\u2019s")))
      w.resize(w.size() - (w.ends_with("'s") ? 2 : 4));
    if (!w.empty() && !neutral.count(w))
      out.push_back({w, capital && !first});
    if (!w.empty())
      first = false;
    w.clear();
  };
  for (std::size_t i = 0; i < title.size(); ++i) {
    const auto c = static_cast<unsigned char>(title[i]);
    if (std::isalnum(c) || c >= 0x80 || c == '$' || c == '%' || (c == '\'' && !w.empty())) {
      if (w.empty())
        capital = std::isupper(c) != 0;
      w += static_cast<char>(std::tolower(c));
    } else if ((c == '.' || c == ',') && !w.empty() && i + 1 < title.size() &&
               std::isdigit(static_cast<unsigned char>(title[i + 1]))) {
      w += static_cast<char>(c);  // 75,000 and 2.5 stay one word
    } else {
      flush();
    }
  }
  flush();
  return out;
}

sense sense_of(std::string_view title) {
  static const std::map<std::string, std::string> modals = {
      {"will", "will"},        {"won't", "will"},  {"shall", "shall"},    {"would", "would"},
      {"wouldn't", "would"},   {"might", "might"}, {"may", "may"},        {"must", "must"},
      {"mustn't", "must"},     {"could", "could"}, {"couldn't", "could"}, {"should", "should"},
      {"shouldn't", "should"}, {"can", "can"},     {"can't", "can"},      {"cannot", "can"}};
  static const std::set<std::string> standing = {"former",  "formerly", "ex",   "previous", "previously",
                                                 "against", "non",      "stop", "stops",    "stopped",
                                                 "longer",  "ceased",   "until"};
  static const std::set<std::string> owners = {"our", "their", "my", "your", "his", "her"};
  sense out;
  bool past = false, present = false;
  std::string w;
  auto flush = [&] {
    if (w.ends_with("'ll"))
      out.modal.insert("will");
    else if (auto m = modals.find(w); m != modals.end())
      out.modal.insert(m->second);
    else if (standing.count(w))
      out.standing.insert(w);
    else if (owners.count(w))
      out.owner.insert(w);
    past = past || w == "was" || w == "were";
    present = present || w == "is" || w == "are" || w == "am";
    w.clear();
  };
  for (std::size_t i = 0; i < title.size(); ++i) {
    const auto c = static_cast<unsigned char>(title[i]);
    if (std::isalnum(c) || (c == '\'' && !w.empty()))
      w += static_cast<char>(std::tolower(c));
    else if (c == 0xe2 && title.substr(i, 3) == "\u2019" && !w.empty()) {  // a typographic apostrophe
      w += '\'';
      i += 2;
    } else {
      flush();
    }
  }
  flush();
  out.tense = past == present ? "" : past ? "past" : "present";
  return out;
}

bool sense_differs(const sense& a, const sense& b) {
  auto open_or_same = [](const auto& x, const auto& y) { return x.empty() || y.empty() || x == y; };
  return !open_or_same(a.tense, b.tense) || !open_or_same(a.modal, b.modal) || !open_or_same(a.owner, b.owner) ||
         a.standing != b.standing;
}

facts facts_of(const schemas::inbound_message& m, const schemas::entry& e, std::size_t index) {
  facts f;
  f.id = schemas::entry_id(m.organization_id, m.event_id, index);
  f.type = e.type;
  f.title = e.sig.key;
  f.subject = schemas::normal_form(e.subject);
  f.slot = e.slot;
  f.sig = e.sig;
  f.positive = e.positive;
  f.markers = knowledge::markers_of(e.title);
  f.order = order_of(e.title);
  f.sense = sense_of(e.title);
  f.author = lower_ascii(m.from.address);
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
  f.markers = knowledge::markers_of(e.title);
  f.order = order_of(e.title);
  f.sense = sense_of(e.title);
  f.author = e.author;
  f.source = e.source_type == "manual" ? schemas::source_type::manual
             : e.source_type == "chat" ? schemas::source_type::chat
             : e.source_type == "file" ? schemas::source_type::file
                                       : schemas::source_type::email;
  f.status = std::string(knowledge::to_string(e.status));
  return f;
}

int authority(schemas::source_type s) { return s == schemas::source_type::manual ? 2 : 1; }

std::optional<facts> load_facts(const storage::graph_store& store, const event_overlay& overlay, const std::string& org,
                                const std::string& id) {
  if (auto it = overlay.find(id); it != overlay.end())
    return it->second;
  auto raw = store.get_entry(org, id);
  knowledge::stored_entry e;
  if (!raw || knowledge::decode(*raw, e))
    return std::nullopt;
  return facts_of(e);
}

}  // namespace engram::dedup
