#pragma once
// Engram's configuration: plain structs with their defaults, loaded once by engramd
// from YAML (config/engram.yaml) plus overrides, validated, then handed to constructors.
// Each section's struct, reader and checks live in its own file (config/README.md); this
// header gathers them. The module depends on base/ alone (base/result.hpp).

#include "base/result.hpp"
#include "config/kafka.hpp"
#include "config/knowledge.hpp"
#include "config/log_section.hpp"
#include "config/pipeline.hpp"
#include "config/reading.hpp"
#include "config/serving.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::config {

/// The whole configuration of engramd.
struct engram_config {
  roles_config roles;
  kafka_config kafka;
  storage_config storage;
  store_config store;
  http_config http;
  samples_config samples;
  ingest_config ingest;
  extraction_config extraction;
  extractor_config extractor;
  embedder_config embedder;
  dedup_config dedup;
  auth_config auth;
  log_config log;
  decay_config decay;
  recall_config recall;
  branches_config branches;
  reminders_config reminders;
  timers_config timers;
  retention_config retention;
  entities_config entities;
};

/// Loads `path` (YAML), then applies `ENGRAM_A__B=c` variables from `env` (a
/// null-terminated environ array, may be null; variables without "__" are not config), then
/// `overrides` ("a.b=c", later wins). Values of overrides are parsed as YAML scalars or flow
/// collections. Returns the validated configuration, or the first error: an unknown key is
/// an error that names it. Never throws.
[[nodiscard]] engram::result<engram_config> load(const std::string& path, const std::vector<std::string>& overrides,
                                                 char** env);

/// Checks cross-field rules; returns the first problem found ("config key '<key>': <reason>"),
/// or nothing.
[[nodiscard]] std::optional<std::string> validate(const engram_config& cfg);

}  // namespace engram::config
