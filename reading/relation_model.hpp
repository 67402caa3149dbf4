#pragma once
// Relation types by meaning. For two mentions of one sentence, the words around them (the
// mentions replaced by a token of their kind) are embedded with the int8 sentence encoder
// and compared with labelled examples of each predicate (reading/relation_examples/, one
// file per predicate, compiled in). The closest example decides the predicate, whether the
// relation has ended, and which mention is its subject; a pair whose closest example is
// one of the counter-examples (none.txt), or that is not close enough to any, gets none.
//
// It serves where the cue rules (relations.cpp) read nothing: "X has its head office in
// Y", "the vendor behind P", "after migrating away from A, everything at X runs on B".
// Deterministic: the int8 encoder gives the same bits for a text alone or in any batch,
// and every comparison runs in the examples' fixed order.

#include "base/result.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engram::embedding {
class embedder;
}

namespace engram::reading {

/// What an end of a relation is. `thing`: a name the reader found no kind for (a run of
/// capitals); the predicate decides it (a place, a technology, a product or an organisation).
enum class end_kind : std::uint8_t { person, org, place, tech, product, thing };

struct relation_example {
  /// A predicate of schemas::relation_predicates (or "makes"), or "none".
  std::string predicate;
  bool ended = false;
  end_kind subject = end_kind::thing, object = end_kind::thing;
  /// The example with {S:kind} and {O:kind} in place of its ends.
  std::string text;
};

/// The examples of one file's text (`predicate` is the file's name); an error names the line.
[[nodiscard]] engram::result<std::vector<relation_example>> parse_relation_examples(std::string_view predicate,
                                                                                    std::string_view text);
struct relation_example_file {
  std::string_view predicate;
  std::string_view text;
};
/// The example files compiled in (reading/relation_examples/*.txt), in name order.
[[nodiscard]] std::span<const relation_example_file> builtin_relation_example_files();
/// Every example of those files (a file that does not parse contributes none: the tests
/// parse each one).
[[nodiscard]] const std::vector<relation_example>& builtin_relation_examples();

/// Two mentions in one stretch of text: `text` with the first at [first_begin, first_end),
/// the second after it at [second_begin, second_end).
struct relation_candidate {
  std::string_view text;
  std::size_t first_begin = 0, first_end = 0, second_begin = 0, second_end = 0;
  end_kind first = end_kind::thing, second = end_kind::thing;
};

struct relation_reading {
  /// Empty: no relation.
  std::string predicate;
  bool ended = false;
  /// The second mention is the subject.
  bool reversed = false;
  /// The kinds of the subject and object as the matched example has them.
  end_kind subject = end_kind::thing, object = end_kind::thing;
  /// Cosine to the closest example, and its lead over the closest example of another predicate.
  float similarity = 0, margin = 0;
};

struct relation_model_options {
  /// The closest example must be at least this close ...
  float min_similarity = 0.55f;
  /// ... and this much closer than the closest of any other predicate (none included).
  float min_margin = 0.02f;
  /// Words kept before the first mention and after the second.
  std::size_t context_words = 3;
};

/// The text of a candidate as the model embeds it: the stretch from `context_words` words
/// before the first mention to as many after the second, the mentions replaced by the
/// tokens of their kinds, the first as the subject (or, `reversed`, as the object).
[[nodiscard]] std::string masked_text(const relation_candidate& c, bool reversed, std::size_t context_words);

/// The examples embedded once; thread-safe.
class relation_model {
public:
  /// Embeds the examples with `encoder`; an error when it fails.
  [[nodiscard]] static engram::result<std::shared_ptr<const relation_model>> make(
      std::shared_ptr<const embedding::embedder> encoder,
      const std::vector<relation_example>& examples = builtin_relation_examples(), relation_model_options options = {});

  /// The reading of each candidate, in order (one run of the encoder for all of them).
  [[nodiscard]] engram::result<std::vector<relation_reading>> read(std::span<const relation_candidate> cs) const;

  [[nodiscard]] const relation_model_options& options() const { return options_; }

private:
  struct example_vector {
    const relation_example* example;
    std::vector<float> v;
  };
  relation_model(std::shared_ptr<const embedding::embedder> encoder, std::vector<relation_example> examples,
                 relation_model_options options);
  std::shared_ptr<const embedding::embedder> encoder_;
  std::vector<relation_example> examples_;
  std::vector<example_vector> vectors_;
  relation_model_options options_;
  /// Whether any example has a person as its subject / object, by [subject is a person]
  /// [object is a person]: an orientation no example has is not embedded ("Acme employs
  /// Dana" is read as Dana -> Acme, never the other way round).
  bool oriented_[2][2] = {};
};

}  // namespace engram::reading
