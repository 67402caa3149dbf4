#include "actors/extractor/extract.hpp"

#include "actors/extractor/rules.hpp"

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
  return x;
}

}  // namespace engram::extractor
