#include "query/passage_record.hpp"

#include <simdjson.h>

namespace engram::query {

namespace {

namespace od = simdjson::ondemand;

std::string string_of(od::value v) { return std::string(std::string_view(v.get_string())); }

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
      if (key == "id")
        h.id = string_of(v);
      else if (key == "eventId")
        h.event_id = string_of(v);
      else if (key == "text")
        h.text = string_of(v);
      else if (key == "sourceType")
        h.source_type = string_of(v);
      else if (key == "sourceId")
        h.source_id = string_of(v);
      else if (key == "threadId")
        h.thread_id = string_of(v);
      else if (key == "sentAt")
        h.sent_at = string_of(v);
      else if (key == "dates")
        h.dates = strings_of(v);
      else if (key == "suspicious")
        h.suspicious = v.get_bool();
      else if (key == "contactIds")
        ids = strings_of(v);
      else if (key == "from")
        for (od::field g : v.get_object()) {
          const std::string_view k = g.unescaped_key();
          od::value w = g.value();
          if (k == "name")
            h.from.name = string_of(w);
          else if (k == "address")
            h.from.address = string_of(w);
          else if (k == "contactId")
            h.from.contact_id = string_of(w);
        }
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
