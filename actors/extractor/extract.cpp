#include "actors/extractor/extract.hpp"

#include "actors/extractor/rules.hpp"

namespace engram::extractor {

schemas::extraction extract_validated(const schemas::inbound_message& m, const validator_options& opts,
                                      validation_report* report) {
  auto x = extract_rules(m);
  auto r = validate(x, m.subject + "\n" + m.body, opts);
  if (report)
    *report = std::move(r);
  return x;
}

}  // namespace engram::extractor
