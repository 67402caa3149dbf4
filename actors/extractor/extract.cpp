#include "actors/extractor/extract.hpp"

#include "actors/extractor/cleaner.hpp"
#include "actors/extractor/rules.hpp"
#include "actors/extractor/signature.hpp"

namespace engram::extractor {

schemas::extraction extract_validated(const schemas::inbound_message& m, const validator_options& opts,
                                      validation_report* report) {
  // The source the validator screens is what the entries were read from: subject and new
  // text. Quoted parts never reach an extractor (rules or LLM).
  std::string cleaned;
  auto x = extract_rules(m, &cleaned);
  auto r = validate(x, m.subject + "\n" + cleaned, opts);
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
    llm_failure failure = llm_failure::none;
    if (auto x = extract_llm(m, opts.llm, &failure)) {
      auto r = validate(*x, m.subject + "\n" + clean(m.body, m.from.name).text, opts.validator);
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
