#include "reading/parse.hpp"
#include "reading/text.hpp"

#include <link-grammar/link-includes.h>

#include <clocale>
#include <cstdint>
#include <mutex>
#include <string>

namespace engram::reading {

namespace {

/// The library's messages: warnings and errors are kept for open()'s answer; information
/// and debugging lines (the locale it picks) are dropped. Set per thread.
void keep_errors(lg_errinfo* e, void* data) {
  if (!data || e->severity > lg_Warn)
    return;
  auto* out = static_cast<std::string*>(data);
  if (!out->empty())
    *out += "; ";
  *out += e->text ? e->text : "";
  while (!out->empty() && (out->back() == '\n' || out->back() == ' '))
    out->pop_back();
}

void quiet_thread() {
  thread_local bool set = false;
  if (!set) {
    lg_error_set_handler(keep_errors, nullptr);
    set = true;
  }
}

/// Splits the parser's word ("headquartered.v-d", "Tallinn[!<CAPITALIZED-WORDS>]",
/// "[skipped]") into the word and the dictionary's tag.
parse_word word_of(std::string_view w) {
  parse_word out;
  if (w.size() > 2 && w.front() == '[' && w.back() == ']') {
    out.skipped = true;
    w = w.substr(1, w.size() - 2);
  }
  if (auto guess = w.find("[!"); guess != std::string_view::npos && guess > 0) {
    out.text = std::string(w.substr(0, guess));
    return out;
  }
  if (auto unknown = w.find("[?]"); unknown != std::string_view::npos && unknown > 0) {
    out.text = std::string(w.substr(0, unknown));
    return out;
  }
  // A subscript: ".v-d", ".n", ".r" (letters, digits, '-', '*', '#'), never the word's own dots.
  if (auto dot = w.rfind('.'); dot != std::string_view::npos && dot > 0 && dot + 1 < w.size()) {
    auto tag = w.substr(dot + 1);
    bool subscript = tag.size() <= 8;
    for (char c : tag)
      subscript &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '*' || c == '#' || c == '!';
    if (subscript) {
      out.text = std::string(w.substr(0, dot));
      out.tag = std::string(tag);
      return out;
    }
  }
  out.text = std::string(w);
  return out;
}

}  // namespace

std::optional<std::size_t> link_distance(const parsed_sentence& p, std::size_t a_begin, std::size_t a_end,
                                         std::size_t b_begin, std::size_t b_end) {
  auto head = [&](std::size_t b, std::size_t e) -> std::optional<std::size_t> {
    std::optional<std::size_t> h;
    for (std::size_t w = 1; w + 1 < p.words.size(); ++w)
      if (p.words[w].begin >= b && p.words[w].end <= e && p.words[w].end > p.words[w].begin)
        h = w;
    return h;
  };
  const auto from = head(a_begin, a_end), to = head(b_begin, b_end);
  if (!from || !to)
    return std::nullopt;
  const std::size_t walls_end = p.words.size() - 1;
  std::vector<std::vector<std::size_t>> next(p.words.size());
  for (const auto& l : p.links)
    if (l.left != 0 && l.right != walls_end && l.right != 0 && l.left != walls_end) {
      next[l.left].push_back(l.right);
      next[l.right].push_back(l.left);
    }
  std::vector<std::size_t> dist(p.words.size(), SIZE_MAX);
  std::vector<std::size_t> queue{*from};
  dist[*from] = 0;
  for (std::size_t q = 0; q < queue.size(); ++q)
    for (auto n : next[queue[q]])
      if (dist[n] == SIZE_MAX) {
        dist[n] = dist[queue[q]] + 1;
        queue.push_back(n);
      }
  if (dist[*to] == SIZE_MAX)
    return std::nullopt;
  return dist[*to];
}

struct sentence_parser::dictionary {
  Dictionary dict = nullptr;
  ~dictionary() {
    if (dict)
      dictionary_delete(dict);
  }
};

engram::result<std::shared_ptr<const sentence_parser>> sentence_parser::open(parser_limits limits) {
  // The library sets the program's locale while it opens a dictionary; the rest of Engram
  // reads bytes in the "C" locale, so it is put back. Opening is serialised for the same reason.
  static std::mutex opening;
  std::lock_guard lock(opening);
  std::string errors;
  lg_error_set_handler(keep_errors, &errors);
  const std::string saved = std::setlocale(LC_ALL, nullptr);
  auto d = std::make_unique<dictionary>();
  d->dict = dictionary_create_lang("en");
  std::setlocale(LC_ALL, saved.c_str());
  lg_error_set_handler(keep_errors, nullptr);
  if (!d->dict)
    return fail("link grammar: cannot open the English dictionary" + (errors.empty() ? "" : ": " + errors));
  return std::shared_ptr<const sentence_parser>(new sentence_parser(std::move(d), limits));
}

sentence_parser::sentence_parser(std::unique_ptr<dictionary> d, parser_limits limits)
    : dict_(std::move(d)), limits_(limits) {}

sentence_parser::~sentence_parser() = default;

std::optional<parsed_sentence> sentence_parser::parse(std::string_view sentence) const {
  const auto n = text::words(sentence).size();
  if (n < 2 || n > limits_.max_words)
    return std::nullopt;
  quiet_thread();
  Parse_Options po = parse_options_create();
  parse_options_set_verbosity(po, 0);
  parse_options_set_linkage_limit(po, limits_.linkages);
  parse_options_set_repeatable_rand(po, true);
  parse_options_set_max_parse_time(po, -1);
  parse_options_set_spell_guess(po, 0);
  parse_options_set_min_null_count(po, 0);
  parse_options_set_max_null_count(po, 0);
  const std::string text(sentence);
  Sentence s = sentence_create(text.c_str(), dict_->dict);
  std::optional<parsed_sentence> out;
  if (s) {
    int found = sentence_split(s, po) == 0 ? sentence_parse(s, po) : 0;
    if (found == 0 && limits_.max_skipped > 0 && n <= limits_.max_words_skipping) {
      parse_options_set_min_null_count(po, 1);
      parse_options_set_max_null_count(po, limits_.max_skipped);
      found = sentence_parse(s, po);
    }
    if (found > 0) {
      Linkage l = linkage_create(0, s, po);
      if (l) {
        parsed_sentence p;
        p.skipped = static_cast<std::size_t>(sentence_null_count(s));
        const int words = linkage_get_num_words(l);
        for (int w = 0; w < words; ++w) {
          auto word = word_of(linkage_get_word(l, w));
          word.begin = static_cast<std::size_t>(linkage_get_word_byte_start(l, w));
          word.end = static_cast<std::size_t>(linkage_get_word_byte_end(l, w));
          p.words.push_back(std::move(word));
        }
        const int links = linkage_get_num_links(l);
        for (int k = 0; k < links; ++k)
          p.links.push_back({linkage_get_link_label(l, k), static_cast<std::size_t>(linkage_get_link_lword(l, k)),
                             static_cast<std::size_t>(linkage_get_link_rword(l, k))});
        linkage_delete(l);
        out = std::move(p);
      }
    }
    sentence_delete(s);
  }
  parse_options_delete(po);
  return out;
}

}  // namespace engram::reading
