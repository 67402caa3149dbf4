#pragma once
// How the config files read YAML: typed field readers that name the dotted key they read,
// and each section's reader (defined next to its struct: kafka.cpp, pipeline.cpp, ...).
// Private to the config module: yaml-cpp is never seen outside config/.

#include "config/kafka.hpp"
#include "config/knowledge.hpp"
#include "config/log_section.hpp"
#include "config/pipeline.hpp"
#include "config/reading.hpp"
#include "config/serving.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace engram::config::detail {

/// A problem in the configuration, carrying the dotted key it concerns. Thrown while
/// reading; load() turns it into its error.
struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws "config key '<key>': <reason>".
[[noreturn]] void reject(const std::string& key, const std::string& reason);

/// "prefix.key", or "key" at the top.
std::string join(const std::string& prefix, const std::string& key);

std::string scalar(const YAML::Node& n, const std::string& key);
/// A scalar that is not null.
std::string as_string(const YAML::Node& n, const std::string& key);
/// true/yes/on/1 or false/no/off/0, any case.
bool as_bool(const YAML::Node& n, const std::string& key);
std::uint64_t as_uint(const YAML::Node& n, const std::string& key, std::uint64_t lo, std::uint64_t hi);
double as_double(const YAML::Node& n, const std::string& key, double lo, double hi);

/// Readers of a mapping's keys: each gets the value and its dotted key.
using field_readers = std::map<std::string, std::function<void(const YAML::Node&, const std::string&)>>;

/// Walks one YAML mapping, dispatching each known key and rejecting unknown ones.
void each_key(const YAML::Node& map, const std::string& prefix, const field_readers& fields);

// Each section's reader: `n` is the section's node, `key` its dotted key. Values it does not
// set keep their defaults; a bad value throws config_error.

// kafka.cpp
void read_kafka(const YAML::Node& n, const std::string& key, kafka_config& out);
// pipeline.cpp
void read_roles(const YAML::Node& n, const std::string& key, roles_config& out);
void read_storage(const YAML::Node& n, const std::string& key, storage_config& out);
void read_ingest(const YAML::Node& n, const std::string& key, ingest_config& out);
void read_store(const YAML::Node& n, const std::string& key, store_config& out);
// reading.cpp
void read_extraction(const YAML::Node& n, const std::string& key, extraction_config& out);
void read_extractor(const YAML::Node& n, const std::string& key, extractor_config& out);
void read_embedder(const YAML::Node& n, const std::string& key, embedder_config& out);
void read_dedup(const YAML::Node& n, const std::string& key, dedup_config& out);
// serving.cpp
void read_http(const YAML::Node& n, const std::string& key, http_config& out);
void read_auth(const YAML::Node& n, const std::string& key, auth_config& out);
void read_samples(const YAML::Node& n, const std::string& key, samples_config& out);
void read_recall(const YAML::Node& n, const std::string& key, recall_config& out);
void read_entities(const YAML::Node& n, const std::string& key, entities_config& out);
// knowledge.cpp
void read_decay(const YAML::Node& n, const std::string& key, decay_config& out);
void read_branches(const YAML::Node& n, const std::string& key, branches_config& out);
void read_reminders(const YAML::Node& n, const std::string& key, reminders_config& out);
void read_timers(const YAML::Node& n, const std::string& key, timers_config& out);
void read_retention(const YAML::Node& n, const std::string& key, retention_config& out);
// log_section.cpp
void read_log(const YAML::Node& n, const std::string& key, log_config& out);

}  // namespace engram::config::detail
