#include "tools/engramctl/documents.hpp"

#include "base/hash.hpp"
#include "base/text.hpp"
#include "tools/mail/mail_reader.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace engram::ctl {

namespace {

namespace fs = std::filesystem;

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n\f");
  if (b == std::string_view::npos)
    return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n\f") - b + 1));
}

std::string hex16(std::string_view bytes) {
  const std::uint64_t h = fnv1a(bytes);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// Paragraphs of plain text: blank lines separate them; the lines of one are joined (a
/// line broken after a hyphen is joined without it), spaces made single.
std::vector<std::string> paragraphs(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    auto t = trim(cur);
    // A page number ("-2-", "12") is no text.
    const bool page_number = !t.empty() && t.size() <= 8 && t.find_first_not_of("-0123456789 ") == std::string::npos;
    if (!t.empty() && !page_number)
      out.push_back(std::move(t));
    cur.clear();
  };
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    auto t = trim(line);
    if (t.empty()) {
      flush();
      continue;
    }
    if (!cur.empty()) {
      if (cur.back() == '-' && cur.size() > 1 && std::isalpha(static_cast<unsigned char>(cur[cur.size() - 2])))
        cur.pop_back();
      else
        cur += ' ';
    }
    // Runs of spaces (columns of a PDF's layout) as one.
    for (char c : t)
      if (!(c == ' ' || c == '\t') || cur.empty() || cur.back() != ' ')
        cur += c == '\t' ? ' ' : c;
  }
  flush();
  return out;
}

/// The first non-empty line of a text when it is short enough to be its title, else "".
std::string first_line(std::string_view text) {
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    if (auto t = trim(line); !t.empty())
      return t.size() <= 120 ? t : std::string();
  return {};
}

/// A section's paragraphs as chunks of at most `max` bytes, cut at paragraph ends; a longer
/// paragraph is cut at sentence ends, then anywhere.
void chunk_section(const std::string& section, const std::vector<std::string>& paras, std::size_t max,
                   std::vector<document_chunk>& out) {
  std::string cur;
  auto emit = [&] {
    if (!cur.empty())
      out.push_back({section, std::move(cur)});
    cur.clear();
  };
  for (auto p : paras) {
    while (p.size() > max) {
      auto cut = p.rfind(". ", max);
      cut = cut == std::string::npos || cut < max / 2 ? max : cut + 1;
      emit();
      cur = trim(p.substr(0, cut));
      emit();
      p = trim(p.substr(cut));
    }
    if (!cur.empty() && cur.size() + 2 + p.size() > max)
      emit();
    cur += (cur.empty() ? "" : "\n\n") + p;
  }
  emit();
}

/// The headings a chunk sits under, " > "-joined; the document's own heading is its title.
std::string section_of(const std::vector<std::string>& headings, const std::string& title) {
  std::string s;
  for (const auto& h : headings)
    if (!h.empty() && h != title)
      s += (s.empty() ? "" : " > ") + h;
  return s;
}

/// Markdown: '#' lines are headings; emphasis, inline code and link targets are dropped.
void read_markdown(const std::string& text, std::size_t max, document& d) {
  std::vector<std::string> stack;  // heading of each level so far
  std::string body;
  auto section = [&] { return section_of(stack, d.title); };
  auto close = [&] {
    chunk_section(section(), paragraphs(body), max, d.chunks);
    body.clear();
  };
  std::istringstream in(text);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    std::size_t level = 0;
    while (!fenced && level < line.size() && line[level] == '#')
      ++level;
    if (level >= 1 && level <= 6 && level < line.size() && line[level] == ' ') {
      close();
      auto heading = trim(line.substr(level));
      if (d.title.empty() && level == 1)
        d.title = heading;
      stack.resize(level);
      stack[level - 1] = heading;
      continue;
    }
    std::string clean;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '*' || c == '_' || c == '`')
        continue;
      if (c == ']' && i + 1 < line.size() && line[i + 1] == '(') {  // [text](target): the text
        const auto close_paren = line.find(')', i);
        if (close_paren != std::string::npos) {
          i = close_paren;
          continue;
        }
      }
      if (c == '[')
        continue;
      clean += c;
    }
    // List markers and quotes start a paragraph of their own.
    auto t = trim(clean);
    if (t.rfind("- ", 0) == 0 || t.rfind("> ", 0) == 0 || t.rfind("+ ", 0) == 0) {
      body += "\n";
      t = t.substr(2);
    }
    body += t + "\n";
  }
  close();
}

/// HTML: <title>, and <h1>..<h6> as headings; everything else through mail's html_to_text.
void read_html(const std::string& html, std::size_t max, document& d) {
  const auto lc = lower_ascii(html);
  if (auto t = lc.find("<title"); t != std::string::npos)
    if (auto gt = lc.find('>', t); gt != std::string::npos)
      if (auto end = lc.find("</title", gt); end != std::string::npos)
        d.title = trim(mail::html_to_text(html.substr(gt + 1, end - gt - 1)));
  std::vector<std::string> stack;
  auto section = [&] { return section_of(stack, d.title); };
  std::size_t at = 0;
  if (auto body = lc.find("<body"); body != std::string::npos)
    at = body;
  while (at < html.size()) {
    // The next heading.
    std::size_t h = at;
    for (;;) {
      h = lc.find("<h", h);
      if (h == std::string::npos || (h + 2 < lc.size() && lc[h + 2] >= '1' && lc[h + 2] <= '6'))
        break;
      h += 2;
    }
    const auto text_end = h == std::string::npos ? html.size() : h;
    chunk_section(section(), paragraphs(mail::html_to_text(html.substr(at, text_end - at))), max, d.chunks);
    if (h == std::string::npos)
      break;
    const std::size_t level = static_cast<std::size_t>(lc[h + 2] - '0');
    const auto open_end = lc.find('>', h);
    const auto close = lc.find("</h" + std::string(1, lc[h + 2]), open_end == std::string::npos ? h : open_end);
    if (open_end == std::string::npos || close == std::string::npos)
      break;
    auto heading = trim(mail::html_to_text(html.substr(open_end + 1, close - open_end - 1)));
    if (d.title.empty() && level == 1)
      d.title = heading;
    stack.resize(level);
    stack[level - 1] = heading;
    at = lc.find('>', close);
    at = at == std::string::npos ? html.size() : at + 1;
  }
}

/// pdftotext's text of `path` (pages separated by form feeds), or an error.
bool pdf_text(const std::string& path, std::string* text, std::string* error) {
  std::string quoted = "'";
  for (char c : path)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(("pdftotext -enc UTF-8 " + quoted + " - 2>&1").c_str(), "r"),
                                          ::pclose);
  if (!p) {
    *error = "cannot run pdftotext (Debian package poppler-utils)";
    return false;
  }
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p.get())) > 0)
    text->append(buf.data(), n);
  const int status = ::pclose(p.release());
  if (status != 0) {
    const auto said = trim(*text);
    *error = status == 127 * 256 || said.find("not found") != std::string::npos
                 ? "pdftotext not found (install the Debian package poppler-utils)"
                 : "pdftotext failed: " + said.substr(0, 200);
    return false;
  }
  return true;
}

}  // namespace

bool read_document(const std::string& path, std::size_t chunk_chars, document* out, std::string* error) {
  document d;
  d.path = path;
  const auto ext = lower_ascii(fs::path(path).extension().string());
  std::string raw;
  if (ext == ".pdf") {
    if (!pdf_text(path, &raw, error))
      return false;
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      *error = "cannot read the file";
      return false;
    }
    std::ostringstream s;
    s << in.rdbuf();
    raw = s.str();
  }
  d.id = "doc-" + hex16(raw);
  if (ext == ".md" || ext == ".markdown") {
    read_markdown(raw, chunk_chars, d);
  } else if (ext == ".html" || ext == ".htm") {
    read_html(raw, chunk_chars, d);
  } else if (ext == ".pdf") {
    // Pages are sections ("Page 2"); the first line of the text is the title.
    std::size_t page = 0, at = 0;
    while (at <= raw.size()) {
      auto ff = raw.find('\f', at);
      auto text = raw.substr(at, ff == std::string::npos ? std::string::npos : ff - at);
      ++page;
      auto paras = paragraphs(text);
      if (d.title.empty())
        d.title = first_line(text);
      chunk_section(page == 1 ? std::string() : "Page " + std::to_string(page), paras, chunk_chars, d.chunks);
      if (ff == std::string::npos)
        break;
      at = ff + 1;
    }
    // pdftotext ends every page with a form feed.
    d.pages = std::max<std::size_t>(1, static_cast<std::size_t>(std::count(raw.begin(), raw.end(), '\f')));
  } else if (ext == ".txt" || ext == ".text" || ext.empty()) {
    auto paras = paragraphs(raw);
    d.title = first_line(raw);
    chunk_section("", paras, chunk_chars, d.chunks);
  } else {
    *error = "not a document this reads (.txt, .md, .markdown, .html, .htm, .pdf)";
    return false;
  }
  if (d.title.empty())
    d.title = fs::path(path).stem().string();
  if (d.chunks.empty()) {
    *error = "no text in it";
    return false;
  }
  *out = std::move(d);
  return true;
}
}  // namespace engram::ctl
