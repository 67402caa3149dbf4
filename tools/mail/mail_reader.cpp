#include "tools/mail/mail_reader.hpp"

#include "schemas/inbound_message.hpp"

#include <gmime/gmime.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <fcntl.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace engram::mail {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

void init_gmime() {
  static std::once_flag once;
  std::call_once(once, [] { g_mime_init(); });
}

/// Replaces invalid UTF-8 with U+FFFD and drops NUL, so any header becomes a valid string.
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    auto bad = schemas::find_invalid_utf8(s);
    auto good = bad ? s.substr(0, *bad) : s;
    for (char c : good)
      if (c != '\0')
        out += c;
    if (!bad)
      break;
    out += "\xEF\xBF\xBD";
    s.remove_prefix(*bad + 1);
  }
  return out;
}

std::string cut_utf8(std::string s, std::size_t max) {
  if (s.size() <= max)
    return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  s.resize(cut);
  return s;
}

/// An id for the store: no control characters, at most 200 characters.
std::string clean_id(std::string_view s) {
  std::string out;
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)
      out += c;
  if (!out.empty() && out.front() == '<' && out.back() == '>')
    out = out.substr(1, out.size() - 2);
  return cut_utf8(valid_utf8(out), 200);
}

std::string sha256_hex(std::string_view data, std::size_t hex_chars) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len && out.size() < hex_chars; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

json people(InternetAddressList* list) {
  json out = json::array();
  if (!list)
    return out;
  int n = internet_address_list_length(list);
  for (int i = 0; i < n; ++i) {
    InternetAddress* ia = internet_address_list_get_address(list, i);
    if (INTERNET_ADDRESS_IS_GROUP(ia)) {
      auto sub = people(internet_address_group_get_members(INTERNET_ADDRESS_GROUP(ia)));
      for (auto& p : sub)
        out.push_back(std::move(p));
      continue;
    }
    if (!INTERNET_ADDRESS_IS_MAILBOX(ia))
      continue;
    const char* addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(ia));
    if (!addr || !*addr)
      continue;
    std::string a = valid_utf8(addr);
    a.erase(std::remove_if(a.begin(), a.end(), [](unsigned char c) { return c <= 0x20 || c == 0x7f; }), a.end());
    if (a.empty())
      continue;
    json p{{"address", cut_utf8(a, 300)}};
    if (const char* name = internet_address_get_name(ia); name && *name)
      p["name"] = cut_utf8(valid_utf8(name), 200);
    out.push_back(std::move(p));
  }
  return out;
}

struct body_parts {
  std::string plain;
  std::string html;
};

void collect_part(GMimeObject* parent, GMimeObject* part, gpointer data) {
  (void)parent;
  auto* parts = static_cast<body_parts*>(data);
  if (!GMIME_IS_TEXT_PART(part))
    return;
  if (const char* disp = g_mime_object_get_disposition(part); disp && g_ascii_strcasecmp(disp, "attachment") == 0)
    return;
  GMimeContentType* ct = g_mime_object_get_content_type(part);
  bool plain = g_mime_content_type_is_type(ct, "text", "plain");
  bool html = g_mime_content_type_is_type(ct, "text", "html");
  if ((plain && !parts->plain.empty()) || (html && !parts->html.empty()) || (!plain && !html))
    return;
  char* text = g_mime_text_part_get_text(GMIME_TEXT_PART(part));  // decoded, converted to UTF-8
  if (!text)
    return;
  (plain ? parts->plain : parts->html) = text;
  g_free(text);
}

std::string rfc3339(GDateTime* dt) {
  GDateTime* utc = g_date_time_to_utc(dt);
  gchar* s = g_date_time_format(utc, "%Y-%m-%dT%H:%M:%SZ");
  std::string out = s ? s : "";
  g_free(s);
  g_date_time_unref(utc);
  return out;
}

/// The thread: the first message of References, else In-Reply-To, else empty.
std::string thread_of(GMimeObject* obj) {
  std::string thread_id;
  for (const char* header : {"References", "In-Reply-To"}) {
    const char* value = g_mime_object_get_header(obj, header);
    if (!value || !thread_id.empty())
      continue;
    GMimeReferences* refs = g_mime_references_parse(nullptr, value);
    if (refs && g_mime_references_length(refs) > 0)
      thread_id = clean_id(g_mime_references_get_message_id(refs, 0));
    if (refs)
      g_mime_references_free(refs);
  }
  return thread_id;
}

/// How it was sent: list, bulk, automated and spam markers, for the extractor's bulk-mail
/// classification (extraction.bulk), lower-case names.
json delivery_headers(GMimeMessage* msg) {
  auto* obj = GMIME_OBJECT(msg);
  json headers = json::object();
  for (const char* h : {"List-Id", "List-Unsubscribe", "List-Post", "List-Help", "Precedence", "Auto-Submitted",
                        "X-Auto-Response-Suppress", "X-Mailing-List", "Mailing-List", "Feedback-ID", "X-Campaign",
                        "X-Spam-Flag", "X-Spam-Status"}) {
    if (const char* v = g_mime_object_get_header(obj, h)) {
      std::string name(h);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      headers[name] = cut_utf8(valid_utf8(v), schemas::max_header_value);
    }
  }
  // HTML alone, no text part: how mass mailers send (the bulk classifier reads it).
  if (GMimeObject* part = g_mime_message_get_mime_part(msg))
    if (GMimeContentType* ct = g_mime_object_get_content_type(part))
      if (char* type = g_mime_content_type_get_mime_type(ct)) {
        if (std::string_view(type) == "text/html")
          headers["content-type"] = "text/html";
        g_free(type);
      }
  return headers;
}

mail_result to_event(GMimeMessage* msg, const std::string& source, const read_options& opts) {
  mail_result r;
  r.source = source;
  json from = people(g_mime_message_get_from(msg));
  if (from.empty()) {
    r.error = "no From address";
    return r;
  }
  GDateTime* date = g_mime_message_get_date(msg);
  if (!date) {
    r.error = "no valid Date header";
    return r;
  }
  body_parts parts;
  g_mime_message_foreach(msg, collect_part, &parts);
  if (GMIME_IS_TEXT_PART(g_mime_message_get_mime_part(msg)) && parts.plain.empty() && parts.html.empty())
    collect_part(nullptr, g_mime_message_get_mime_part(msg), &parts);
  std::string body = !parts.plain.empty() ? parts.plain : html_to_text(parts.html);
  body = cut_utf8(valid_utf8(body), opts.max_body_bytes);
  body.erase(std::remove(body.begin(), body.end(), '\r'), body.end());
  std::string subject;
  if (const char* s = g_mime_message_get_subject(msg))
    subject = cut_utf8(valid_utf8(s), 900);
  std::string message_id;
  if (const char* id = g_mime_message_get_message_id(msg))
    message_id = clean_id(id);
  std::string sent_at = rfc3339(date);
  std::string event_id = !message_id.empty()
                             ? message_id
                             : "sha256-" + sha256_hex(from.dump() + "\n" + sent_at + "\n" + subject + "\n" + body, 32);
  std::string thread_id = thread_of(GMIME_OBJECT(msg));
  if (thread_id.empty())
    thread_id = event_id;
  json ev{{"eventId", event_id},
          {"organizationId", opts.organization_id},
          {"sourceType", "email"},
          {"threadId", thread_id},
          {"sentAt", sent_at},
          {"from", from[0]},
          {"to", people(g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO))},
          {"cc", people(g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_CC))},
          {"subject", subject},
          {"body", body},
          {"contactIds", json::array()}};
  if (!message_id.empty())
    ev["sourceId"] = message_id;
  json headers = delivery_headers(msg);
  if (!headers.empty())
    ev["headers"] = std::move(headers);
  // The decoder is the judge: an event it refuses is reported, never produced.
  auto text = ev.dump();
  schemas::inbound_message check;
  if (auto bad = schemas::decode(text, {opts.max_body_bytes + 64 * 1024}, check)) {
    r.error = "not a valid inbound event: " + bad->to_string();
    return r;
  }
  r.event_json = std::move(text);
  return r;
}

bool starts_with_from_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[5] = {};
  in.read(head, 5);
  return in.gcount() == 5 && std::string_view(head, 5) == "From ";
}

}  // namespace

engram::result<std::vector<std::string>> list_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st))
      return engram::fail("no such file or folder: " + p);
    if (fs::is_regular_file(st)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory() && it->path().filename() == "tmp") {
        it.disable_recursion_pending();  // maildir: messages still being delivered
        continue;
      }
      auto name = it->path().filename().string();
      if (it->is_regular_file() && !name.empty() && name[0] != '.')
        found.push_back(it->path().string());
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

void read_file(const std::string& path, const read_options& opts, const std::function<void(mail_result)>& on_message) {
  init_gmime();
  GError* err = nullptr;
  GMimeStream* stream = g_mime_stream_fs_open(path.c_str(), O_RDONLY, 0, &err);
  if (!stream) {
    on_message({path, {}, std::string("cannot open: ") + (err ? err->message : "unknown error")});
    if (err)
      g_error_free(err);
    return;
  }
  bool mbox = starts_with_from_line(path);
  GMimeParser* parser = g_mime_parser_new_with_stream(stream);
  g_mime_parser_set_format(parser, mbox ? GMIME_FORMAT_MBOX : GMIME_FORMAT_MESSAGE);
  std::size_t n = 0;
  while (!g_mime_parser_eos(parser)) {
    GMimeMessage* msg = g_mime_parser_construct_message(parser, nullptr);
    std::string source = mbox ? path + "#" + std::to_string(++n) : path;
    if (!msg) {
      if (n <= 1 || !mbox)
        on_message({source, {}, "not a parsable e-mail message"});
      break;
    }
    on_message(to_event(msg, source, opts));
    g_object_unref(msg);
    if (!mbox)
      break;
  }
  g_object_unref(parser);
  g_object_unref(stream);
}

namespace {

/// The text of an HTML character reference's name ("amp", "#233", "#xE9"); empty when unknown.
std::string entity_text(std::string_view ent) {
  std::string rep;
  if (ent == "amp")
    rep = "&";
  else if (ent == "lt")
    rep = "<";
  else if (ent == "gt")
    rep = ">";
  else if (ent == "quot")
    rep = "\"";
  else if (ent == "apos" || ent == "#39")
    rep = "'";
  else if (ent == "nbsp")
    rep = " ";
  else if (!ent.empty() && ent[0] == '#') {
    unsigned long cp = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X')
                           ? std::strtoul(std::string(ent.substr(2)).c_str(), nullptr, 16)
                           : std::strtoul(std::string(ent.substr(1)).c_str(), nullptr, 10);
    if (cp > 0 && cp < 0x110000 && !(cp >= 0xD800 && cp <= 0xDFFF)) {
      if (cp < 0x80)
        rep += static_cast<char>(cp);
      else if (cp < 0x800) {
        rep += static_cast<char>(0xC0 | (cp >> 6));
        rep += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        rep += static_cast<char>(0xE0 | (cp >> 12));
        rep += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        rep += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        rep += static_cast<char>(0xF0 | (cp >> 18));
        rep += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        rep += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        rep += static_cast<char>(0x80 | (cp & 0x3F));
      }
    }
  }
  return rep;
}

/// Collapses runs of spaces and of blank lines; trims the ends.
std::string collapse_blanks(const std::string& out) {
  std::string clean;
  int newlines = 0;
  for (char ch : out) {
    if (ch == '\n') {
      while (!clean.empty() && clean.back() == ' ')
        clean.pop_back();
      if (++newlines <= 2)
        clean += '\n';
      continue;
    }
    if (ch == ' ' && (clean.empty() || clean.back() == ' ' || clean.back() == '\n'))
      continue;
    newlines = 0;
    clean += ch;
  }
  while (!clean.empty() && (clean.front() == '\n'))
    clean.erase(0, 1);
  while (!clean.empty() && (clean.back() == '\n' || clean.back() == ' '))
    clean.pop_back();
  return clean;
}

}  // namespace

std::string html_to_text(std::string_view html) {
  std::string out;
  std::size_t i = 0;
  auto lower_tag = [&](std::size_t from) {
    std::string name;
    std::size_t k = from;
    if (k < html.size() && html[k] == '/')
      name += html[k++];
    while (k < html.size() && std::isalnum(static_cast<unsigned char>(html[k])))
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(html[k++])));
    return name;
  };
  while (i < html.size()) {
    char c = html[i];
    if (c == '<') {
      auto name = lower_tag(i + 1);
      auto close = html.find('>', i);
      if (close == std::string_view::npos)
        break;
      if (name == "script" || name == "style" || name == "head") {
        auto end = html.find("</" + name, close);
        if (end == std::string_view::npos)
          break;
        close = html.find('>', end);
        if (close == std::string_view::npos)
          break;
      } else if (name == "br" || name == "/p" || name == "/div" || name == "/li" || name == "/tr" || name == "/h1" ||
                 name == "/h2" || name == "/h3" || name == "p" || name == "/table" || name == "/blockquote") {
        out += '\n';
      } else if (name == "li") {
        out += "\n- ";
      } else if (name == "td" || name == "th") {
        out += ' ';
      }
      i = close + 1;
      continue;
    }
    if (c == '&') {
      auto semi = html.find(';', i);
      if (semi != std::string_view::npos && semi - i <= 8) {
        auto ent = html.substr(i + 1, semi - i - 1);
        std::string rep = entity_text(ent);
        if (!rep.empty() || ent == "nbsp") {
          out += rep;
          i = semi + 1;
          continue;
        }
      }
    }
    if (c == '\r' || c == '\n' || c == '\t')
      c = ' ';
    out += c;
    ++i;
  }
  return collapse_blanks(out);
}

}  // namespace engram::mail
