#include "schemas/inbound_message.hpp"
#include "schemas/time.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>

namespace engram::schemas {
namespace {

using json = nlohmann::json;

/// Thrown inside decode() only, turned into a decode_error at its boundary.
struct schema_violation {
  std::string field;
  std::string reason;
};

[[noreturn]] void violate(std::string field, std::string reason) {
  throw schema_violation{std::move(field), std::move(reason)};
}

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "discarded";
    default: return "number";
  }
}

constexpr std::size_t max_id_chars = 256;

/// Counts code points; the input is valid UTF-8 by then.
std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

const json* member(const json& obj, const char* name) {
  auto it = obj.find(name);
  return it == obj.end() ? nullptr : &*it;
}

std::string get_string(const json& obj, const char* name, const std::string& ptr, bool required,
                       std::size_t max_chars) {
  const json* v = member(obj, name);
  auto field = ptr + "/" + name;
  if (!v) {
    if (required)
      violate(field, "required field is missing");
    return {};
  }
  if (!v->is_string())
    violate(field, std::string("must be a string, got ") + type_name(*v));
  const auto& s = v->get_ref<const std::string&>();
  if (max_chars && utf8_length(s) > max_chars)
    violate(field, "must be at most " + std::to_string(max_chars) + " characters");
  return s;
}

/// Checks an identifier: non-empty, at most 256 characters, no control characters (ids are
/// key parts joined by '\0' in the store).
std::string check_id(const json& v, const std::string& field) {
  if (!v.is_string())
    violate(field, std::string("must be a string, got ") + type_name(v));
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty())
    violate(field, "must not be empty");
  if (utf8_length(s) > max_id_chars)
    violate(field, "must be at most " + std::to_string(max_id_chars) + " characters");
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      violate(field, "must not contain control characters");
  return s;
}

std::string get_id(const json& obj, const char* name, const std::string& ptr, bool required) {
  const json* v = member(obj, name);
  if (!v) {
    if (required)
      violate(ptr + "/" + name, "required field is missing");
    return {};
  }
  return check_id(*v, ptr + "/" + name);
}

participant get_participant(const json& v, const std::string& field) {
  if (!v.is_object())
    violate(field, std::string("must be an object, got ") + type_name(v));
  participant p;
  p.name = get_string(v, "name", field, false, 256);
  p.address = get_string(v, "address", field, true, 320);
  if (p.address.empty())
    violate(field + "/address", "must not be empty");
  for (unsigned char c : p.address)
    if (c <= 0x20 || c == 0x7f)
      violate(field + "/address", "must not contain spaces or control characters");
  p.contact_id = get_id(v, "contactId", field, false);
  return p;
}

std::vector<participant> get_participants(const json& obj, const char* name) {
  std::vector<participant> out;
  const json* v = member(obj, name);
  if (!v)
    return out;
  std::string field = std::string("/") + name;
  if (!v->is_array())
    violate(field, std::string("must be an array, got ") + type_name(*v));
  for (std::size_t i = 0; i < v->size(); ++i)
    out.push_back(get_participant((*v)[i], field + "/" + std::to_string(i)));
  return out;
}

document_ref get_document(const json& d) {
  if (!d.is_object())
    violate("/document", std::string("must be an object, got ") + type_name(d));
  document_ref ref;
  ref.id = get_id(d, "id", "/document", true);
  ref.title = get_string(d, "title", "/document", false, 1000);
  ref.section = get_string(d, "section", "/document", false, 1000);
  for (auto [name, field] : {std::pair{"chunk", &ref.chunk}, {"chunks", &ref.chunks}}) {
    const json* v = member(d, name);
    if (!v)
      violate(std::string("/document/") + name, "required field is missing");
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() > 1000000)
      violate(std::string("/document/") + name, "must be an integer within 0..1000000");
    *field = static_cast<std::uint32_t>(v->get<std::uint64_t>());
  }
  if (ref.chunks == 0 || ref.chunk >= ref.chunks)
    violate("/document/chunk", "must be below chunks (" + std::to_string(ref.chunks) + ")");
  return ref;
}

bool valid_org_id(std::string_view s) {
  if (s.empty() || s.size() > 128 || !std::isalnum(static_cast<unsigned char>(s[0])))
    return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '.' && c != '_' && c != ':' && c != '-')
      return false;
  return true;
}

}  // namespace

std::optional<refused_chunk> refused_chunk_of(std::string_view bytes) {
  const auto doc = json::parse(bytes, nullptr, false);
  if (!doc.is_object())
    return std::nullopt;
  const json* org = member(doc, "organizationId");
  const json* d = member(doc, "document");
  if (!org || !org->is_string() || !valid_org_id(org->get_ref<const std::string&>()) || !d)
    return std::nullopt;
  refused_chunk out;
  try {
    out = {org->get<std::string>(), {}, get_document(*d)};
  } catch (const schema_violation&) {
    return std::nullopt;
  }
  try {
    if (const json* id = member(doc, "eventId"))
      out.event_id = check_id(*id, "/eventId");
  } catch (const schema_violation&) {  // the chunk is still known without it
  }
  return out;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::string_view to_string(source_type t) {
  switch (t) {
    case source_type::email: return "email";
    case source_type::chat: return "chat";
    case source_type::manual: return "manual";
    case source_type::file: return "file";
  }
  return {};
}

std::string_view to_string(decode_error::kind k) {
  switch (k) {
    case decode_error::kind::too_large: return "too_large";
    case decode_error::kind::invalid_utf8: return "invalid_utf8";
    case decode_error::kind::invalid_json: return "invalid_json";
    case decode_error::kind::schema: return "schema";
  }
  return "schema";
}

std::string decode_error::to_string() const { return field.empty() ? reason : field + ": " + reason; }

std::optional<std::size_t> find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    std::uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n)
      return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80)
        return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static constexpr std::array<std::uint32_t, 5> min_cp{0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;  // overlong, out of range or a surrogate
    i += len;
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto digits = [&](std::size_t pos, std::size_t count, int& out) {
    if (pos + count > s.size())
      return false;
    out = 0;
    for (std::size_t i = pos; i < pos + count; ++i) {
      if (s[i] < '0' || s[i] > '9')
        return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int year, mon, day, hour, min, sec;
  if (s.size() < 20 || !digits(0, 4, year) || s[4] != '-' || !digits(5, 2, mon) || s[7] != '-' || !digits(8, 2, day) ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(11, 2, hour) || s[13] != ':' || !digits(14, 2, min) ||
      s[16] != ':' || !digits(17, 2, sec))
    return std::nullopt;
  static constexpr std::array<int, 12> mdays{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] || (mon == 2 && day == 29 && !leap) || hour > 23 ||
      min > 59 || sec > 60)
    return std::nullopt;
  std::size_t pos = 19;
  int millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t start = pos;
    int scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      millis += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start)
      return std::nullopt;
  }
  int offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !digits(pos + 4, 2, om) || oh > 23 ||
        om > 59)
      return std::nullopt;
    offset_min = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size())
    return std::nullopt;
  std::int64_t days = days_from_civil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  std::int64_t secs = days * 86400 + hour * 3600 + min * 60 + std::min(sec, 59) - offset_min * 60;
  return secs * 1000 + millis;
}

namespace {

/// sourceType: email, chat or file.
void read_source_type(const json& doc, inbound_message& m) {
  auto st = get_string(doc, "sourceType", "", true, 0);
  if (st == "email")
    m.source = source_type::email;
  else if (st == "chat")
    m.source = source_type::chat;
  else if (st == "file")
    m.source = source_type::file;
  else
    violate("/sourceType", "must be one of email, chat, file; got \"" + st + "\"");
}

/// contactIds (optional): an array of identifiers.
void read_contact_ids(const json& doc, inbound_message& m) {
  if (const json* ids = member(doc, "contactIds")) {
    if (!ids->is_array())
      violate("/contactIds", std::string("must be an array, got ") + type_name(*ids));
    for (std::size_t i = 0; i < ids->size(); ++i)
      m.contact_ids.push_back(check_id((*ids)[i], "/contactIds/" + std::to_string(i)));
  }
}

/// headers (optional): an object of strings, names kept in lower case.
void read_headers(const json& doc, inbound_message& m) {
  if (const json* hs = member(doc, "headers")) {
    if (!hs->is_object())
      violate("/headers", std::string("must be an object of strings, got ") + type_name(*hs));
    if (hs->size() > max_headers)
      violate("/headers", "at most " + std::to_string(max_headers) + " headers");
    for (auto it = hs->begin(); it != hs->end(); ++it) {
      const auto at = "/headers/" + it.key();
      if (it.key().empty() || it.key().size() > max_header_name ||
          it.key().find_first_of(std::string("\0\r\n: ", 5)) != std::string::npos)
        violate("/headers", "'" + it.key().substr(0, 64) + "' is not a header name (1.." +
                                std::to_string(max_header_name) + " characters, no spaces, colons or controls)");
      if (!it.value().is_string())
        violate(at, std::string("must be a string, got ") + type_name(it.value()));
      if (it.value().get_ref<const std::string&>().size() > max_header_value)
        violate(at, "at most " + std::to_string(max_header_value) + " bytes");
      std::string name = it.key();
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      m.headers[name] = it.value().get<std::string>();
    }
  }
}

}  // namespace

std::optional<decode_error> decode(std::string_view bytes, const decode_limits& limits, inbound_message& out) {
  using k = decode_error::kind;
  if (bytes.size() > limits.max_event_bytes)
    return decode_error{k::too_large,
                        "",
                        "event is " + std::to_string(bytes.size()) + " bytes, larger than ingest.max_event_bytes (" +
                            std::to_string(limits.max_event_bytes) + ")",
                        {}};
  if (auto bad = find_invalid_utf8(bytes))
    return decode_error{k::invalid_utf8, "", "invalid UTF-8 at byte " + std::to_string(*bad), {}};
  json doc = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Parse again with exceptions only to get nlohmann's description of the problem.
    std::string why = "invalid JSON";
    try {
      json again = json::parse(bytes);    // throws: the first parse failed
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number too large
      why = std::string("invalid JSON: ") + e.what();
    }
    return decode_error{k::invalid_json, "", why, {}};
  }
  if (!doc.is_object())
    return decode_error{k::schema, "", std::string("must be a JSON object, got ") + type_name(doc), {}};
  try {
    inbound_message m;
    m.event_id = get_id(doc, "eventId", "", true);
    m.organization_id = get_string(doc, "organizationId", "", true, 0);
    if (!valid_org_id(m.organization_id))
      violate("/organizationId",
              "must be 1-128 characters of letters, digits, '.', '_', ':' or '-', starting with a "
              "letter or digit");
    read_source_type(doc, m);
    m.source_id = get_id(doc, "sourceId", "", false);
    m.thread_id = get_id(doc, "threadId", "", false);
    m.sent_at = get_string(doc, "sentAt", "", true, 0);
    auto ms = parse_rfc3339(m.sent_at);
    if (!ms)
      violate("/sentAt",
              "must be an RFC 3339 date-time such as 2026-03-05T10:00:00Z, got \"" + m.sent_at.substr(0, 64) + "\"");
    m.sent_at_ms = *ms;
    const json* from = member(doc, "from");
    if (!from)
      violate("/from", "required field is missing");
    m.from = get_participant(*from, "/from");
    m.to = get_participants(doc, "to");
    m.cc = get_participants(doc, "cc");
    m.subject = get_string(doc, "subject", "", false, 1000);
    m.body = get_string(doc, "body", "", true, 0);
    read_contact_ids(doc, m);
    read_headers(doc, m);
    if (const json* d = member(doc, "document")) {
      if (m.source != source_type::file)
        violate("/document", "only events of sourceType file are chunks of a document");
      m.document = get_document(*d);
    } else if (m.source == source_type::file) {
      violate("/document", "required for sourceType file (id, chunk, chunks)");
    }
    out = std::move(m);
  } catch (schema_violation& v) {
    decode_error e{k::schema, std::move(v.field), std::move(v.reason), {}};
    // The event's own name for it, when it has one: what a person looks it up by.
    if (auto id = doc.find("eventId"); id != doc.end() && id->is_string())
      e.event_id = id->get<std::string>().substr(0, 256);
    return e;
  }
  return std::nullopt;
}

std::string to_json(const inbound_message& m) {
  auto person = [](const participant& p) {
    json j = json::object();
    if (!p.name.empty())
      j["name"] = p.name;
    j["address"] = p.address;
    if (!p.contact_id.empty())
      j["contactId"] = p.contact_id;
    return j;
  };
  auto people = [&](const std::vector<participant>& ps) {
    json a = json::array();
    for (const auto& p : ps)
      a.push_back(person(p));
    return a;
  };
  // nlohmann's json::object is a std::map: keys come out sorted, so the text is canonical.
  json j = json::object();
  j["eventId"] = m.event_id;
  j["organizationId"] = m.organization_id;
  j["sourceType"] = to_string(m.source);
  if (!m.source_id.empty())
    j["sourceId"] = m.source_id;
  if (!m.thread_id.empty())
    j["threadId"] = m.thread_id;
  j["sentAt"] = m.sent_at;
  j["from"] = person(m.from);
  j["to"] = people(m.to);
  j["cc"] = people(m.cc);
  if (!m.subject.empty())
    j["subject"] = m.subject;
  j["body"] = m.body;
  j["contactIds"] = m.contact_ids;
  if (!m.headers.empty())
    j["headers"] = m.headers;
  if (m.document) {
    json d{{"id", m.document->id}, {"chunk", m.document->chunk}, {"chunks", m.document->chunks}};
    if (!m.document->title.empty())
      d["title"] = m.document->title;
    if (!m.document->section.empty())
      d["section"] = m.document->section;
    j["document"] = std::move(d);
  }
  return j.dump();
}

std::string format_rfc3339(std::int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace engram::schemas
