#pragma once
// The structure of a sentence, read by Link Grammar (Debian's liblink-grammar 5.12 with its
// English dictionary): its words and the typed links between them ("Ss" subject–verb,
// "Os" verb–object, "Pv" passive, "MVp" a verb's preposition, "Js" a preposition's object,
// "MX" an apposition or relative clause, "SJ" coordination, "YS" a possessive …; the
// dictionary's documentation names them all).
//
// The parser's work is bounded by the sentence's length and the number of linkages it
// enumerates, never by time: a time cap would make two runs of the same log read
// differently under load. Its sampling of linkages is repeatable, so the same sentence
// always gives the same parse.

#include "base/result.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

struct parse_word {
  /// The word as the sentence writes it ("headquartered", "Tallinn"); "LEFT-WALL" and
  /// "RIGHT-WALL" for the parser's two walls.
  std::string text;
  /// What the dictionary read it as: "v" for a verb ("v-d" past), "n" a noun, "r" or "p" a
  /// preposition …; empty when the dictionary gives none (many function words, and the
  /// names it guessed from their capitals).
  std::string tag;
  /// Byte offsets into the sentence; begin == end for the walls.
  std::size_t begin = 0, end = 0;
  /// A word the linkage left out (allowed only when no full parse exists).
  bool skipped = false;
};

struct parse_link {
  /// The link type with its subscripts ("Ss*s", "MVp", "Js").
  std::string label;
  /// Word indexes, left < right.
  std::size_t left = 0, right = 0;
};

struct parsed_sentence {
  std::vector<parse_word> words;
  std::vector<parse_link> links;
  /// Words the linkage skipped (0 for a complete parse).
  std::size_t skipped = 0;
};

/// Measured on 600 ham messages (1,019 sentences reach the parser; docs/benchmarks.md): a
/// sentence of 10-14 words took ~23 ms, of 25-29 ~116 ms, of 35-39 ~580 ms with the old
/// bounds (40 words, skipped words at any length), most of it in the second pass that looks
/// for a parse with skipped words; the parses took 90 s of the run's CPU. With these bounds
/// they take 3.3 s, and the relation sets read the same within a few hundredths.
struct parser_limits {
  /// Longer sentences are not parsed (their cost grows with the cube of the length).
  std::size_t max_words = 20;
  /// Linkages the parser enumerates before it samples (repeatably).
  int linkages = 10;
  /// When no complete parse exists, at most this many words may be skipped ...
  int max_skipped = 3;
  /// ... in a sentence of at most this many words (longer: a complete parse or none).
  std::size_t max_words_skipping = 10;
};

/// The fewest links between the words of two byte ranges of the sentence (each range's
/// last word standing for it; the walls are not crossed), or nothing when they are not
/// connected or a range holds no word.
[[nodiscard]] std::optional<std::size_t> link_distance(const parsed_sentence& p, std::size_t a_begin, std::size_t a_end,
                                                       std::size_t b_begin, std::size_t b_end);

/// One dictionary, shared: parse() may be called from any number of threads at once.
class sentence_parser {
public:
  /// Opens the English dictionary, or says why it cannot.
  static engram::result<std::shared_ptr<const sentence_parser>> open(parser_limits limits = {});
  ~sentence_parser();
  sentence_parser(const sentence_parser&) = delete;
  sentence_parser& operator=(const sentence_parser&) = delete;

  /// The best linkage of `sentence`, or nothing when it is too long or has none within the limits.
  [[nodiscard]] std::optional<parsed_sentence> parse(std::string_view sentence) const;

  [[nodiscard]] const parser_limits& limits() const { return limits_; }

private:
  struct dictionary;
  sentence_parser(std::unique_ptr<dictionary> d, parser_limits limits);
  std::unique_ptr<dictionary> dict_;
  parser_limits limits_;
};

}  // namespace engram::reading
