#include "actors/extractor/extract.hpp"

#include "actors/extractor/cleaner.hpp"
#include "actors/extractor/rules.hpp"
#include "actors/extractor/signature.hpp"

namespace engram::extractor {

namespace {

/// Bulk and spam (bulk.hpp): nothing read (skip), or what was read kept with half its
/// confidence (low_confidence), or kept as is.
bool bulk_gate(const schemas::inbound_message& m, const validator_options& opts, message_verdict& verdict) {
  verdict = classify_message(m);
  return verdict.cls == message_class::person || opts.bulk != bulk_policy::skip;
}

void mark_bulk(schemas::extraction& x, const validator_options& opts, const message_verdict& verdict) {
  if (verdict.cls == message_class::person || opts.bulk != bulk_policy::low_confidence)
    return;
  for (auto& e : x.entries)
    e.confidence *= 0.5;
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
  auto x = extract_rules(m, &cleaned, opts.types.get());
  auto r = validate(x, m.subject + "\n" + cleaned, opts);
  mark_bulk(x, opts, verdict);
  r.verdict = std::move(verdict);
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
      auto r = validate(*x, m.subject + "\n" + clean(m.body, m.from.name).text, opts.validator);
      mark_bulk(*x, opts.validator, verdict);
      r.verdict = std::move(verdict);
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

}  // namespace engram::extractor
