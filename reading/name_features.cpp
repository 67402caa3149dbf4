#include "reading/name_features.hpp"

#include <algorithm>
#include <array>

namespace engram::reading::tagging {

namespace {

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/// Length in bytes of the UTF-8 sequence that starts with `c` (1 for a stray byte).
std::size_t utf8_length(unsigned char c) {
  if (c >= 0xF0)
    return 4;
  if (c >= 0xE0)
    return 3;
  if (c >= 0xC0)
    return 2;
  return 1;
}

/// Opening punctuation at the front of `s`: its length in bytes, else 0.
std::size_t opening(std::string_view s) {
  static constexpr std::array<std::string_view, 12> marks{
      "(", "[", "{", "\"", "'", "@", "*", "<", "`", "\xE2\x80\x9C", "\xE2\x80\x98", "\xC2\xAB"};
  for (auto m : marks)
    if (s.size() > m.size() && s.substr(0, m.size()) == m)
      return m.size();
  return 0;
}

/// Closing punctuation at the end of `s`: its length in bytes, else 0.
std::size_t closing(std::string_view s) {
  static constexpr std::array<std::string_view, 18> marks{".",
                                                          ",",
                                                          ";",
                                                          ":",
                                                          "!",
                                                          "?",
                                                          ")",
                                                          "]",
                                                          "}",
                                                          "\"",
                                                          "'",
                                                          "*",
                                                          ">",
                                                          "\xE2\x80\x9D",
                                                          "\xE2\x80\x99",
                                                          "\xC2\xBB",
                                                          "\xE2\x80\xA6",
                                                          "\xE2\x80\x94"};
  for (auto m : marks)
    if (s.size() > m.size() && s.substr(s.size() - m.size()) == m)
      return m.size();
  return 0;
}

/// The length of a possessive 's at the end of `s`, else 0.
std::size_t possessive(std::string_view s) {
  for (std::string_view m : {std::string_view("'s"), std::string_view("\xE2\x80\x99s")})
    if (s.size() > m.size() + 1 && s.substr(s.size() - m.size()) == m)
      return m.size();
  return 0;
}

/// Cuts one whitespace-free piece [b, e) of `s` into tokens.
void cut_piece(std::string_view s, std::size_t b, std::size_t e, std::vector<token>& out) {
  while (auto n = opening(s.substr(b, e - b))) {
    out.push_back({b, b + n});
    b += n;
  }
  std::vector<token> tail;
  while (auto n = closing(s.substr(b, e - b))) {
    tail.push_back({e - n, e});
    e -= n;
  }
  if (auto n = possessive(s.substr(b, e - b))) {
    tail.push_back({e - n, e});
    e -= n;
  }
  out.push_back({b, e});
  out.insert(out.end(), tail.rbegin(), tail.rend());
}

/// Upper case of a code point by the rules fold_case lowers by: 1 upper, 0 lower, -1 neither.
int case_of(std::string_view cp) {
  const auto c0 = static_cast<unsigned char>(cp[0]);
  if (cp.size() == 1) {
    if (c0 >= 'A' && c0 <= 'Z')
      return 1;
    if (c0 >= 'a' && c0 <= 'z')
      return 0;
    return -1;
  }
  if (cp.size() == 2) {
    const auto c1 = static_cast<unsigned char>(cp[1]);
    const unsigned code = ((c0 & 0x1Fu) << 6) | (c1 & 0x3Fu);
    if (code >= 0xC0 && code <= 0xDE && code != 0xD7)
      return 1;
    if (code >= 0xDF && code <= 0xFF && code != 0xF7)
      return 0;
    if (code >= 0x100 && code <= 0x17F) {
      const bool odd_upper = (code >= 0x139 && code <= 0x148) || (code >= 0x179 && code <= 0x17E);
      return ((code % 2 == 1) == odd_upper) ? 1 : 0;
    }
    if (code >= 0x370 && code <= 0x4FF)  // Greek and Cyrillic: letters, case not read
      return 0;
  }
  if (cp.size() == 4)  // emoji and other symbols outside the basic plane
    return -1;
  if (cp.size() == 3) {
    const unsigned code = ((c0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(cp[1]) & 0x3Fu) << 6) |
                          (static_cast<unsigned char>(cp[2]) & 0x3Fu);
    // General punctuation, currency, arrows, maths, box drawing, dingbats (U+2000-2BFF), CJK
    // punctuation (U+3000-303F), variation selectors and the BOM: symbols, not letters.
    if ((code >= 0x2000 && code <= 0x2BFF) || (code >= 0x3000 && code <= 0x303F) ||
        (code >= 0xFE00 && code <= 0xFE0F) || code == 0xFEFF)
      return -1;
  }
  return cp.size() >= 2 ? 0 : -1;  // other scripts: letters without case
}

std::string shape_of(std::string_view w) {
  std::string out;
  for (std::size_t i = 0; i < w.size();) {
    const auto n = std::min(utf8_length(static_cast<unsigned char>(w[i])), w.size() - i);
    const auto cp = w.substr(i, n);
    char c;
    if (n == 1 && cp[0] >= '0' && cp[0] <= '9')
      c = 'd';
    else if (const int k = case_of(cp); k >= 0)
      c = k == 1 ? 'X' : 'x';
    else
      c = cp[0];
    if (out.empty() || out.back() != c)
      out += c;
    i += n;
  }
  return out;
}

std::string_view case_pattern(std::string_view shape) {
  const bool upper = shape.find('X') != std::string_view::npos, lower = shape.find('x') != std::string_view::npos,
             digit = shape.find('d') != std::string_view::npos;
  if (!upper && !lower)
    return digit ? "digits" : "punct";
  if (digit)
    return "alnum";
  if (upper && !lower)
    return "caps";
  if (!upper)
    return "lower";
  return shape.rfind('X') == 0 ? "initcap" : "mixed";
}

/// The first or last `n` code points of `w`.
std::string_view code_points(std::string_view w, std::size_t n, bool from_end) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < w.size(); i += std::max<std::size_t>(1, utf8_length(static_cast<unsigned char>(w[i]))))
    starts.push_back(i);
  if (starts.size() <= n)
    return w;
  return from_end ? w.substr(starts[starts.size() - n]) : w.substr(0, starts[n]);
}

std::string_view length_bucket(std::size_t n) {
  if (n <= 3)
    return n == 1 ? "1" : (n == 2 ? "2" : "3");
  if (n <= 5)
    return "4-5";
  if (n <= 8)
    return "6-8";
  return "9+";
}

/// A word as the features read it.
struct word {
  std::string lower, shape;
  std::string_view pattern;
  std::vector<std::string_view> lists;  // the names of the word lists it is in
  std::string coarse, fine;             // its clusters ("-" when it has none)
};

}  // namespace

std::vector<token> tokenize(std::string_view s) {
  std::vector<token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(static_cast<unsigned char>(s[i]))) {
      if (s[i] == '\n')
        out.push_back({i, i + 1});  // a line break is a token: names do not run across lines
      ++i;
    }
    std::size_t j = i;
    while (j < s.size() && !is_space(static_cast<unsigned char>(s[j])))
      ++j;
    if (j > i)
      cut_piece(s, i, j, out);
    i = j;
  }
  return out;
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string fold_case(std::string_view w) {
  std::string out(w);
  for (std::size_t i = 0; i < out.size();) {
    const auto c0 = static_cast<unsigned char>(out[i]);
    const auto n = std::min(utf8_length(c0), out.size() - i);
    if (n == 1 && c0 >= 'A' && c0 <= 'Z')
      out[i] = static_cast<char>(c0 + 32);
    if (n == 2 && case_of(std::string_view(out).substr(i, 2)) == 1) {
      unsigned code = ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(out[i + 1]) & 0x3Fu);
      code += code < 0x100 ? 0x20 : 1;
      out[i] = static_cast<char>(0xC0 | (code >> 6));
      out[i + 1] = static_cast<char>(0x80 | (code & 0x3F));
    }
    i += n;
  }
  return out;
}

std::string_view to_string(word_list l) {
  static constexpr std::array<std::string_view, word_list_count> n{"dict",  "proper", "first", "surname",
                                                                   "place", "legal",  "tech"};
  return n[static_cast<std::size_t>(l)];
}

bloom::bloom(std::uint64_t bits, std::uint32_t hashes)
    : bits_(std::max<std::uint64_t>(bits, 8)), hashes_(hashes), bytes_((bits_ + 7) / 8) {}

void bloom::add(std::string_view lowered) {
  const auto h = fnv1a(lowered);
  const std::uint64_t h1 = h & 0xFFFFFFFFULL, h2 = (h >> 32) | 1;
  for (std::uint32_t j = 0; j < hashes_; ++j) {
    const auto bit = (h1 + j * h2) % bits_;
    bytes_[bit / 8] = static_cast<std::uint8_t>(bytes_[bit / 8] | (1u << (bit % 8)));
  }
}

bool bloom::contains(std::string_view lowered) const {
  if (bits_ == 0)
    return false;
  const auto h = fnv1a(lowered);
  const std::uint64_t h1 = h & 0xFFFFFFFFULL, h2 = (h >> 32) | 1;
  for (std::uint32_t j = 0; j < hashes_; ++j) {
    const auto bit = (h1 + j * h2) % bits_;
    if (!(bytes_[bit / 8] & (1u << (bit % 8))))
      return false;
  }
  return true;
}

namespace {

void put_u64(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

bool get_u64(std::string_view in, std::size_t& pos, std::uint64_t& v, int bytes) {
  if (in.size() - std::min(pos, in.size()) < static_cast<std::size_t>(bytes))
    return false;
  v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= std::uint64_t(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += bytes;
  return true;
}

}  // namespace

void bloom::write(std::string& out) const {
  put_u64(out, bits_, 8);
  put_u64(out, hashes_, 4);
  out.append(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
}

bool bloom::read(std::string_view in, std::size_t& pos) {
  std::uint64_t bits = 0, hashes = 0;
  if (!get_u64(in, pos, bits, 8) || !get_u64(in, pos, hashes, 4) || bits > (1ULL << 34) || hashes > 32)
    return false;
  const auto n = static_cast<std::size_t>((bits + 7) / 8);
  if (in.size() - pos < n)
    return false;
  bits_ = bits;
  hashes_ = static_cast<std::uint32_t>(hashes);
  bytes_.assign(in.begin() + static_cast<std::ptrdiff_t>(pos), in.begin() + static_cast<std::ptrdiff_t>(pos + n));
  pos += n;
  return true;
}

std::optional<word_cluster> lexicon::cluster(std::string_view lowered) const {
  const auto key = static_cast<std::uint32_t>(fnv1a(lowered));
  const auto it = std::lower_bound(cluster_keys.begin(), cluster_keys.end(), key);
  if (it == cluster_keys.end() || *it != key)
    return std::nullopt;
  return clusters[static_cast<std::size_t>(it - cluster_keys.begin())];
}

std::string lexicon::serialise() const {
  std::string out;
  for (const auto& l : lists)
    l.write(out);
  put_u64(out, cluster_keys.size(), 4);
  for (auto k : cluster_keys)
    put_u64(out, k, 4);
  for (auto c : clusters) {
    out += static_cast<char>(c.coarse);
    out += static_cast<char>(c.fine);
  }
  return out;
}

std::optional<lexicon> lexicon::parse(std::string_view bytes) {
  lexicon lex;
  std::size_t pos = 0;
  for (auto& l : lex.lists)
    if (!l.read(bytes, pos))
      return std::nullopt;
  std::uint64_t n = 0;
  if (!get_u64(bytes, pos, n, 4) || (bytes.size() - pos) / 6 < n)
    return std::nullopt;
  lex.cluster_keys.resize(n);
  for (auto& k : lex.cluster_keys) {
    std::uint64_t v = 0;
    get_u64(bytes, pos, v, 4);
    k = static_cast<std::uint32_t>(v);
  }
  if (!std::is_sorted(lex.cluster_keys.begin(), lex.cluster_keys.end()))
    return std::nullopt;
  lex.clusters.resize(n);
  for (auto& c : lex.clusters) {
    c.coarse = static_cast<std::uint8_t>(bytes[pos++]);
    c.fine = static_cast<std::uint8_t>(bytes[pos++]);
  }
  if (pos != bytes.size())
    return std::nullopt;
  return lex;
}

std::vector<std::vector<std::uint32_t>> features(std::string_view s, const std::vector<token>& tokens,
                                                 const lexicon& lex, std::uint32_t buckets) {
  const std::size_t n = tokens.size();
  std::vector<word> ws(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto w = s.substr(tokens[i].begin, tokens[i].end - tokens[i].begin);
    ws[i].lower = fold_case(w);
    ws[i].shape = shape_of(w);
    ws[i].pattern = case_pattern(ws[i].shape);
    for (std::size_t l = 0; l < word_list_count; ++l)
      if (lex.lists[l].contains(ws[i].lower))
        ws[i].lists.push_back(to_string(static_cast<word_list>(l)));
    const auto c = lex.cluster(ws[i].lower);
    ws[i].coarse = c ? std::to_string(c->coarse) : "-";
    ws[i].fine = c ? std::to_string(c->fine) : "-";
  }
  // Names of two or three words in the lists of places and technologies ("new york",
  // "google cloud platform"): B for the first word, I for the others.
  std::vector<std::vector<std::string>> phrase(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t len = 3; len >= 2; --len) {
      if (i + len > n)
        continue;
      std::string joined = ws[i].lower;
      for (std::size_t k = 1; k < len; ++k)
        joined += " " + ws[i + k].lower;
      bool found = false;
      for (auto l : {word_list::place, word_list::technology})
        if (lex.lists[static_cast<std::size_t>(l)].contains(joined)) {
          for (std::size_t k = 0; k < len; ++k)
            phrase[i + k].push_back(std::string(to_string(l)) + (k == 0 ? "|B" : "|I"));
          found = true;
        }
      if (found)
        break;
    }
  std::vector<std::vector<std::uint32_t>> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& f = out[i];
    auto add = [&](std::string_view name, std::string_view value) {
      f.push_back(static_cast<std::uint32_t>(fnv1a(value, fnv1a("=", fnv1a(name))) % buckets));
    };
    const auto& w = ws[i];
    add("bias", "");
    add("w", w.lower);
    add("s", w.shape);
    add("c", w.pattern);
    add("c0", std::string(w.pattern) + (i == 0 ? "|first" : "|rest"));
    add("len", length_bucket(w.lower.size()));
    for (std::size_t k = 1; k <= 3; ++k)
      add("p" + std::to_string(k), code_points(w.lower, k, false));
    for (std::size_t k = 1; k <= 4; ++k)
      add("x" + std::to_string(k), code_points(w.lower, k, true));
    for (auto l : w.lists) {
      add("L", l);
      add("Lc", std::string(l) + "|" + std::string(w.pattern));
    }
    if (w.lists.empty())
      add("unlisted", w.pattern);
    add("k", w.coarse);
    add("kk", w.fine);
    add("kkc", w.fine + "|" + std::string(w.pattern));
    for (const auto& p : phrase[i])
      add("G", p);
    for (int d : {-2, -1, 1, 2}) {
      const auto j = static_cast<std::ptrdiff_t>(i) + d;
      const auto tag = std::to_string(d);
      if (j < 0 || j >= static_cast<std::ptrdiff_t>(n)) {
        add("w" + tag, d < 0 ? "<s>" : "</s>");
        continue;
      }
      const auto& v = ws[static_cast<std::size_t>(j)];
      add("w" + tag, v.lower);
      add("s" + tag, v.shape);
      if (d == -1 || d == 1) {
        add("c" + tag, v.pattern);
        for (auto l : v.lists)
          add("L" + tag, l);
        if (v.lists.empty())
          add("unlisted" + tag, v.pattern);
        add("kk" + tag, v.fine);
      }
    }
    const std::string prev = i > 0 ? ws[i - 1].lower : "<s>", next = i + 1 < n ? ws[i + 1].lower : "</s>";
    add("w-1w0", prev + "|" + w.lower);
    add("w0w1", w.lower + "|" + next);
    add("s-1s0s1", (i > 0 ? ws[i - 1].shape : "<s>") + "|" + w.shape + "|" + (i + 1 < n ? ws[i + 1].shape : "</s>"));
  }
  return out;
}

}  // namespace engram::reading::tagging
