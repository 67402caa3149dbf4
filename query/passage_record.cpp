#include "query/passage_record.hpp"

#include <simdjson.h>

namespace engram::query {

namespace {

namespace od = simdjson::ondemand;

std::string string_of(od::value v) { return std::string(std::string_view(v.get_string())); }

/// The passage's string field under `key` (nullptr: not one).
std::string* string_field(passage_hit& h, std::string_view key) {
  if (key == "id")
    return &h.id;
  if (key == "eventId")
    return &h.event_id;
  if (key == "text")
    return &h.text;
  if (key == "sourceType")
    return &h.source_type;
  if (key == "sourceId")
    return &h.source_id;
  if (key == "threadId")
    return &h.thread_id;
  if (key == "sentAt")
    return &h.sent_at;
  return nullptr;
}

/// The sender's string field under `key` (nullptr: not one).
std::string* from_field(schemas::participant& from, std::string_view key) {
  if (key == "name")
    return &from.name;
  if (key == "address")
    return &from.address;
  if (key == "contactId")
    return &from.contact_id;
  return nullptr;
}

std::vector<std::string> strings_of(od::value v) {
  std::vector<std::string> out;
  for (auto s : v.get_array())
    out.emplace_back(std::string_view(s.get_string()));
  return out;
}

}  // namespace

std::optional<passage_hit> read_passage(std::string_view raw, std::vector<std::string>* contacts) {
  // The parser keeps its buffers between records; simdjson reads up to SIMDJSON_PADDING bytes
  // past its input, so the record is copied into a padded string (a passage is ~570 bytes).
  thread_local od::parser parser;
  const simdjson::padded_string padded(raw);
  passage_hit h;
  std::vector<std::string> ids;
  try {
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      const std::string_view key = f.unescaped_key();
      od::value v = f.value();
      if (auto* s = string_field(h, key))
        *s = string_of(v);
      else if (key == "dates")
        h.dates = strings_of(v);
      else if (key == "suspicious")
        h.suspicious = v.get_bool();
      else if (key == "contactIds")
        ids = strings_of(v);
      else if (key == "from")
        for (od::field g : v.get_object())
          if (auto* s = from_field(h.from, g.unescaped_key()))
            *s = string_of(g.value());
    }
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)  // something after the object
      return std::nullopt;
  } catch (const simdjson::simdjson_error&) {
    return std::nullopt;
  }
  if (contacts)
    *contacts = std::move(ids);
  return h;
}

}  // namespace engram::query
