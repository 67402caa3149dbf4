#pragma once
// What the name tagger (name_tagger.hpp) sees of a sentence: its tokens and, for each token,
// the hashed features its weights are indexed by. The tagger and its trainer
// (tools/train/train_names.cpp) share this one definition, so a model is always read with the
// features it was trained on. Pure, integer-only and thread-safe.
//
// Tokens: the sentence is cut at whitespace, and a line break is a token of its own; around
// each piece, opening punctuation (([{"' and their typographic forms, @, *) and closing
// punctuation (.,;:!?)]}"' …) become tokens of their own, and so does a possessive 's. Inside a
// piece nothing is cut: O'Brien, INV-2026-0113, S/4HANA and e-mail stay one token, and so does
// # before a digit (#4411).
//
// Features (format 1): the word lower-cased, its shape (Xx, XX, dd-d, x.x), its first one to
// three and last one to four letters, where it stands (first token), its case pattern, the
// word lists it is in and its word clusters (lexicon below), and the words, shapes, lists and
// clusters of the tokens around it; each hashed (FNV-1a, 64 bits) with its template's name into `buckets` rows.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::reading::tagging {

/// The feature format the hashing below implements; a model names the one it was trained on.
inline constexpr int feature_format = 2;

struct token {
  std::size_t begin, end;  // byte range in the sentence
};

/// The tokens of `s`, in order (see above).
[[nodiscard]] std::vector<token> tokenize(std::string_view s);

/// FNV-1a, 64 bits: the hash of every feature and every word-list entry.
[[nodiscard]] std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ULL);

/// `w` in lower case: ASCII, and the Latin-1 and Latin Extended-A capitals of UTF-8.
[[nodiscard]] std::string fold_case(std::string_view w);

/// The word lists a model carries, each a Bloom filter over fnv1a of the lower-cased entry.
/// The lists (by index): ordinary lower-case words of a dictionary, words a dictionary has
/// only capitalised, first names, surnames, places, legal forms of companies, technologies.
enum class word_list : std::uint8_t {
  dictionary_lower,
  dictionary_proper,
  first_name,
  surname,
  place,
  legal_form,
  technology,
};
inline constexpr std::size_t word_list_count = 7;
[[nodiscard]] std::string_view to_string(word_list l);

/// A Bloom filter (k hashes from two halves of fnv1a, m bits). Deterministic.
class bloom {
public:
  bloom() = default;
  bloom(std::uint64_t bits, std::uint32_t hashes);
  void add(std::string_view lowered);
  [[nodiscard]] bool contains(std::string_view lowered) const;
  /// Serialised: u64 bits, u32 hashes, then the bit bytes (little-endian).
  void write(std::string& out) const;
  /// Reads one from `in` at `pos` (advanced); false when the bytes are short.
  bool read(std::string_view in, std::size_t& pos);
  [[nodiscard]] std::uint64_t bits() const { return bits_; }

private:
  std::uint64_t bits_ = 0;
  std::uint32_t hashes_ = 0;
  std::vector<std::uint8_t> bytes_;
};

/// A word's clusters (k-means over word vectors, tools/train/names/clusters.py): a coarse one
/// and a fine one.
struct word_cluster {
  std::uint8_t coarse, fine;
};

/// The word lists and word clusters of a model.
struct lexicon {
  bloom lists[word_list_count];
  /// Clusters of the most frequent words, by the low 32 bits of fnv1a of the lower-cased word,
  /// sorted by key (the first word of a key kept).
  std::vector<std::uint32_t> cluster_keys;
  std::vector<word_cluster> clusters;

  /// The clusters of a lower-cased word; nullopt for a word the vectors did not have.
  [[nodiscard]] std::optional<word_cluster> cluster(std::string_view lowered) const;

  /// Serialised: the lists in order, then u32 n, n u32 keys, n (coarse, fine) byte pairs.
  [[nodiscard]] std::string serialise() const;
  /// Parses serialise()'s bytes; nullopt when they are short or malformed.
  [[nodiscard]] static std::optional<lexicon> parse(std::string_view bytes);
};

/// The feature rows of each token of `s` (tokenize(s)), hashed into [0, buckets).
[[nodiscard]] std::vector<std::vector<std::uint32_t>> features(std::string_view s, const std::vector<token>& tokens,
                                                               const lexicon& lex, std::uint32_t buckets);

}  // namespace engram::reading::tagging
