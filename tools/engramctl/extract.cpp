#include "tools/engramctl/extract.hpp"

#include "embedding/type_model.hpp"
#include "reading/bulk.hpp"
#include "reading/cleaner.hpp"
#include "reading/extract.hpp"
#include "reading/sentences.hpp"
#include "reading/validator.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "tools/engramctl/input.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

namespace engram::ctl {

namespace {

/// The validator's options the command's flags give; nullopt (reported) when the type
/// model cannot be loaded.
std::optional<engram::reading::validator_options> extract_settings(const extract_options& o) {
  engram::reading::validator_options opts;
  if (!o.no_type_model && !o.model_path.empty()) {
    auto types = engram::embedding::load_type_model(o.model_path);
    if (!types) {
      std::cerr << "extract: " << types.error()
                << " (tools/dev.sh setup fetches it; --no-type-model reads with the cues alone)\n";
      return std::nullopt;
    }
    opts.types = std::move(*types);
  }
  opts.confidence_threshold = o.threshold;
  opts.bulk = o.bulk == "keep"             ? engram::reading::bulk_policy::keep
              : o.bulk == "low_confidence" ? engram::reading::bulk_policy::low_confidence
                                           : engram::reading::bulk_policy::skip;
  return opts;
}

/// What extraction read from one event, as the JSON line extract prints.
nlohmann::json extracted(const engram::schemas::inbound_message& m, const engram::reading::validator_options& opts,
                         bool explain) {
  engram::reading::validation_report report;
  auto x = engram::reading::extract_validated(m, opts, &report);
  auto doc = nlohmann::json::parse(engram::schemas::to_json(x));
  nlohmann::json out{{"eventId", m.event_id}, {"organizationId", m.organization_id}};
  out.update(doc);
  if (!report.injection_signals.empty())
    out["injectionSignals"] = report.injection_signals;
  out["messageClass"] = std::string(engram::reading::to_string(report.verdict.cls));
  if (!report.verdict.signals.empty())
    out["classSignals"] = report.verdict.signals;
  if (explain) {
    auto cleaned = engram::reading::clean(m.body, m.from.name);
    out["cleanedText"] = cleaned.text;
    out["sentences"] = engram::reading::split_sentences(cleaned.text);
  }
  return out;
}

}  // namespace

int extract(const extract_options& o) {
  std::ifstream f;
  std::istream* in = open_input(o.file, f, "extract");
  if (!in)
    return 1;
  const auto opts = extract_settings(o);
  if (!opts)
    return 1;
  std::string line;
  std::size_t lineno = 0, bad = 0;
  while (std::getline(*in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    engram::schemas::inbound_message m;
    if (auto err = engram::schemas::decode(line, {}, m)) {
      std::cerr << o.file << ": line " << lineno << ": " << err->to_string() << "\n";
      ++bad;
      continue;
    }
    std::cout << extracted(m, *opts, o.explain).dump() << "\n";
  }
  return bad ? 1 : 0;
}

}  // namespace engram::ctl
