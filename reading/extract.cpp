#include "reading/extract.hpp"

#include "reading/cleaner.hpp"
#include "reading/rules.hpp"
#include "reading/signature.hpp"

#include <algorithm>
#include <set>

namespace engram::reading {

namespace {

/// Bulk and spam (bulk.hpp): nothing read (skip), or what was read kept with half its
/// confidence (low_confidence), or kept as is.
bool bulk_gate(const schemas::inbound_message& m, const validator_options& opts, message_verdict& verdict) {
  verdict = classify_message(m);
  return verdict.cls == message_class::person || opts.bulk != bulk_policy::skip;
}

/// Person mail, chat and document chunks keep their passages (bulk and spam do not: what
/// they say is not an organisation's knowledge); a message that looks like a prompt
/// injection marks them suspicious (its injected blocks are cut from them).
void add_passages(schemas::extraction& x, const schemas::inbound_message& m, std::string_view cleaned,
                  const validation_report& r, const validator_options& opts) {
  if (r.verdict.cls != message_class::person || !opts.passages)
    return;
  x.passages = make_passages(cleaned, m.sent_at_ms);
  if (!r.injection_signals.empty())
    for (auto& p : x.passages)
      p.suspicious = true;
}

void mark_bulk(schemas::extraction& x, const validator_options& opts, const message_verdict& verdict) {
  if (verdict.cls == message_class::person || opts.bulk != bulk_policy::low_confidence)
    return;
  for (auto& e : x.entries)
    e.confidence *= 0.5;
}

/// The seed's relates_to: two people, organisations, technologies or places one statement
/// names together that no relation of the message the validator will keep already links.
/// A statement naming more than max_named is a list, not a relation between each two.
void add_co_mentions(schemas::extraction& x, const validator_options& opts) {
  constexpr std::size_t max_named = 5;
  std::set<std::pair<std::size_t, std::size_t>> linked;
  for (const auto& r : x.relations)
    if (schemas::is_relation_predicate(r.predicate) && r.confidence >= opts.confidence_threshold && r.confidence <= 1)
      linked.insert(std::minmax(r.subject, r.object));
  for (std::size_t e = 0; e < x.entries.size(); ++e) {
    std::vector<std::size_t> named;
    for (auto m : x.entries[e].mentions)
      if (m < x.mentions.size() && schemas::is_named_entity(x.mentions[m].kind))
        named.push_back(m);
    if (named.size() < 2 || named.size() > max_named)
      continue;
    for (std::size_t a = 0; a < named.size(); ++a)
      for (std::size_t b = a + 1; b < named.size(); ++b)
        if (linked.insert(std::minmax(named[a], named[b])).second)
          x.relations.push_back(
              {named[a], named[b], "relates_to", schemas::co_mention_confidence, e, false, std::string()});
  }
}

}  // namespace

schemas::extraction extract_validated(const schemas::inbound_message& m, const validator_options& opts,
                                      validation_report* report) {
  message_verdict verdict;
  if (!bulk_gate(m, opts, verdict)) {
    if (report)
      report->verdict = std::move(verdict);
    schemas::extraction none;
    sign(none);
    return none;
  }
  // The source the validator screens is what the entries were read from: subject and new
  // text. Quoted parts never reach an extractor (rules or LLM).
  std::string cleaned;
  auto x = extract_rules(
      m, &cleaned,
      {opts.types.get(), opts.relations.get(), opts.parser.get(), opts.names.get(), opts.classifier.get()});
  add_co_mentions(x, opts);
  auto r = validate(x, m.subject + "\n" + cleaned, opts);
  mark_bulk(x, opts, verdict);
  r.verdict = std::move(verdict);
  add_passages(x, m, cleaned, r, opts);
  if (report)
    *report = std::move(r);
  sign(x);
  return x;
}

schemas::extraction extract_message(const schemas::inbound_message& m, const extractor_options& opts,
                                    validation_report* report, llm_failure* fallback) {
  if (fallback)
    *fallback = llm_failure::none;
  if (opts.kind == extractor_kind::llm) {
    message_verdict verdict;
    if (!bulk_gate(m, opts.validator, verdict))
      return extract_validated(m, opts.validator, report);  // skipped without asking the model
    llm_failure failure = llm_failure::none;
    if (auto x = extract_llm(m, opts.llm, &failure)) {
      add_co_mentions(*x, opts.validator);
      const auto cleaned = clean(m.body, m.from.name).text;
      auto r = validate(*x, m.subject + "\n" + cleaned, opts.validator);
      mark_bulk(*x, opts.validator, verdict);
      r.verdict = std::move(verdict);
      add_passages(*x, m, cleaned, r, opts.validator);
      if (report)
        *report = std::move(r);
      sign(*x);
      return std::move(*x);
    }
    if (fallback)
      *fallback = failure;
  }
  return extract_validated(m, opts.validator, report);
}

}  // namespace engram::reading
