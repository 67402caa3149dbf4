#include "reading/validator.hpp"

#include "reading/injection.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <array>

namespace engram::reading {
namespace {

std::string cut_chars(std::string_view s, std::size_t max) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && chars++ == max)
      return std::string(s.substr(0, i));
  return std::string(s);
}

/// An entry that is an injected instruction, or repeats what an injected block said
/// (`injected_folded`: the blocks cut, look-alikes folded).
bool from_injection(const schemas::entry& e, const std::string& injected_folded) {
  if (is_injected_instruction(e.content) || is_injected_instruction(e.title))
    return true;
  auto body = fold_lookalikes(text::trim(e.content));
  while (!body.empty() && (body.back() == '.' || body.back() == '!'))
    body.pop_back();
  return !body.empty() && injected_folded.find(body) != std::string::npos;
}

/// Mentions: names within limits; keep indexes stable by blanking, then remap. The new index
/// of each mention (SIZE_MAX: dropped).
std::vector<std::size_t> validate_mentions(schemas::extraction& x, const validator_options& opts,
                                           validation_report& r) {
  std::vector<std::size_t> remap(x.mentions.size(), SIZE_MAX);
  std::vector<schemas::entity_mention> kept;
  for (std::size_t i = 0; i < x.mentions.size(); ++i) {
    auto& m = x.mentions[i];
    auto n = utf8_chars(m.value);
    // An instruction is never an entity (suspicious names are refused).
    if (n == 0 || n > opts.max_entity_chars || utf8_chars(m.text) > opts.max_entity_chars ||
        is_injected_instruction(m.value)) {
      ++r.dropped_invalid;
      continue;
    }
    remap[i] = kept.size();
    kept.push_back(std::move(m));
  }
  x.mentions = std::move(kept);
  return remap;
}

/// Entries: valid, not from an injection, confident enough, cut to length, their mentions
/// remapped (`remap`), at most opts.max_entries. The new index of each entry (SIZE_MAX:
/// dropped).
std::vector<std::size_t> validate_entries(schemas::extraction& x, const validator_options& opts, validation_report& r,
                                          const std::vector<std::size_t>& remap, const std::string& injected_folded) {
  std::vector<schemas::entry> entries;
  std::vector<std::size_t> entry_remap(x.entries.size(), SIZE_MAX);
  for (std::size_t ei = 0; ei < x.entries.size(); ++ei) {
    auto& e = x.entries[ei];
    if (!(e.confidence >= 0 && e.confidence <= 1) || schemas::to_string(e.type).empty() ||
        text::trim(e.content).empty()) {
      ++r.dropped_invalid;
      continue;
    }
    if (from_injection(e, injected_folded)) {  // the instruction itself is never knowledge
      ++r.dropped_injected;
      continue;
    }
    if (e.confidence < opts.confidence_threshold) {
      ++r.dropped_low_confidence;
      continue;
    }
    if (utf8_chars(e.content) > opts.max_content_chars)
      e.content = cut_chars(e.content, opts.max_content_chars);
    if (utf8_chars(e.title) > 80)
      e.title = cut_chars(e.title, 79) + "\xE2\x80\xA6";
    std::vector<std::size_t> ms;
    for (auto i : e.mentions)
      if (i < remap.size() && remap[i] != SIZE_MAX)
        ms.push_back(remap[i]);
    e.mentions = std::move(ms);
    // Kept, but never handed to agents unmarked.
    if (!r.injection_signals.empty()) {
      e.suspicious = true;
      e.confidence = std::max(0.05, e.confidence - opts.suspicious_penalty);
    }
    if (opts.max_entries == 0 || entries.size() < opts.max_entries)
      entry_remap[ei] = entries.size();
    entries.push_back(std::move(e));
  }
  if (opts.max_entries > 0 && entries.size() > opts.max_entries) {
    r.dropped_over_cap = entries.size() - opts.max_entries;
    entries.resize(opts.max_entries);
  }
  x.entries = std::move(entries);
  return entry_remap;
}

/// Relations: both ends kept, a known predicate, enough confidence, and the statement that
/// says it kept (a relation read from a dropped or injected statement goes with it); none
/// at all from a message that looks like a prompt injection.
void validate_relations(schemas::extraction& x, const validator_options& opts, validation_report& r,
                        const std::vector<std::size_t>& remap, const std::vector<std::size_t>& entry_remap) {
  std::vector<schemas::entity_relation> relations;
  for (auto& rel : x.relations) {
    const bool ends = rel.subject < remap.size() && remap[rel.subject] != SIZE_MAX && rel.object < remap.size() &&
                      remap[rel.object] != SIZE_MAX && rel.subject != rel.object;
    const bool stated = !rel.entry || (*rel.entry < entry_remap.size() && entry_remap[*rel.entry] != SIZE_MAX);
    // A document's structure (contains, mentions) is the store's to write, never read.
    const bool structure = rel.predicate == "contains" || rel.predicate == "mentions";
    if (!ends || !stated || !schemas::is_relation_predicate(rel.predicate) || structure || !(rel.confidence <= 1) ||
        !r.injection_signals.empty()) {
      ++r.dropped_relations;
      continue;
    }
    if (rel.confidence < opts.confidence_threshold) {
      ++r.dropped_relations;
      continue;
    }
    rel.subject = remap[rel.subject];
    rel.object = remap[rel.object];
    if (rel.entry)
      rel.entry = entry_remap[*rel.entry];
    relations.push_back(std::move(rel));
  }
  x.relations = std::move(relations);
}

}  // namespace

std::size_t utf8_chars(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

validation_report validate(schemas::extraction& x, std::string_view source, const validator_options& opts) {
  validation_report r;
  r.injection_signals = injection_signals(source);
  // What an injected block says, to recognise an entry read from it (an LLM may copy it).
  std::string injected;
  if (!r.injection_signals.empty())
    (void)cut_injected_blocks(source, &injected);  // only what was cut is wanted here
  const std::string injected_folded = fold_lookalikes(injected);
  const auto remap = validate_mentions(x, opts, r);
  const auto entry_remap = validate_entries(x, opts, r, remap, injected_folded);
  validate_relations(x, opts, r, remap, entry_remap);
  x.dropped_low_confidence += r.dropped_low_confidence;
  return r;
}

}  // namespace engram::reading
