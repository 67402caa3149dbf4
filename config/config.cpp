#include "config/config.hpp"

#include "config/internal/yaml_read.hpp"

#include <algorithm>
#include <cctype>

namespace engram::config {
namespace {

using detail::config_error;

/// Every section, each read by the reader next to its struct.
void decode(const YAML::Node& root, engram_config& cfg) {
  using namespace detail;
  each_key(
      root, "",
      {
          {"roles", [&](const YAML::Node& n, const std::string& k) { read_roles(n, k, cfg.roles); }},
          {"kafka", [&](const YAML::Node& n, const std::string& k) { read_kafka(n, k, cfg.kafka); }},
          {"storage", [&](const YAML::Node& n, const std::string& k) { read_storage(n, k, cfg.storage); }},
          {"http", [&](const YAML::Node& n, const std::string& k) { read_http(n, k, cfg.http); }},
          {"samples", [&](const YAML::Node& n, const std::string& k) { read_samples(n, k, cfg.samples); }},
          {"ingest", [&](const YAML::Node& n, const std::string& k) { read_ingest(n, k, cfg.ingest); }},
          {"store", [&](const YAML::Node& n, const std::string& k) { read_store(n, k, cfg.store); }},
          {"extraction", [&](const YAML::Node& n, const std::string& k) { read_extraction(n, k, cfg.extraction); }},
          {"extractor", [&](const YAML::Node& n, const std::string& k) { read_extractor(n, k, cfg.extractor); }},
          {"embedder", [&](const YAML::Node& n, const std::string& k) { read_embedder(n, k, cfg.embedder); }},
          {"decay", [&](const YAML::Node& n, const std::string& k) { read_decay(n, k, cfg.decay); }},
          {"recall", [&](const YAML::Node& n, const std::string& k) { read_recall(n, k, cfg.recall); }},
          {"branches", [&](const YAML::Node& n, const std::string& k) { read_branches(n, k, cfg.branches); }},
          {"reminders", [&](const YAML::Node& n, const std::string& k) { read_reminders(n, k, cfg.reminders); }},
          {"timers", [&](const YAML::Node& n, const std::string& k) { read_timers(n, k, cfg.timers); }},
          {"retention", [&](const YAML::Node& n, const std::string& k) { read_retention(n, k, cfg.retention); }},
          {"entities", [&](const YAML::Node& n, const std::string& k) { read_entities(n, k, cfg.entities); }},
          {"dedup", [&](const YAML::Node& n, const std::string& k) { read_dedup(n, k, cfg.dedup); }},
          {"log", [&](const YAML::Node& n, const std::string& k) { read_log(n, k, cfg.log); }},
          {"auth", [&](const YAML::Node& n, const std::string& k) { read_auth(n, k, cfg.auth); }},
      });
}

/// Sets `root[path...] = value`, creating mappings on the way. Under kafka.rdkafka the rest
/// of the key is one librdkafka property name, dots included.
void set_path(YAML::Node root, const std::string& dotted, const std::string& value, const std::string& origin) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto dot = dotted.find('.', start);
    if (parts.size() == 2 && parts[0] == "kafka" && parts[1] == "rdkafka") {
      parts.push_back(dotted.substr(start));
      break;
    }
    parts.push_back(dotted.substr(start, dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  for (const auto& p : parts)
    if (p.empty())
      throw config_error(origin + ": '" + dotted + "' is not a valid key");
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw config_error(origin + ": value of '" + dotted + "' is not valid YAML: " + e.what());
  }
  if (parts.size() == 3 && parts[0] == "kafka" && parts[1] == "rdkafka")
    parsed = YAML::Node(value);  // librdkafka wants the text as written
  // YAML::Node is a handle: walk with fresh handles, never by assigning to `node`.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    if (!cur[parts[i]] || !cur[parts[i]].IsMap())
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    chain.push_back(cur[parts[i]]);
  }
  chain.back()[parts.back()] = parsed;
}

/// The file's top-level mapping (an empty file is an empty one), or why there is none.
engram::result<YAML::Node> read_file(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return engram::fail("cannot read config file '" + path + "'");
  } catch (const YAML::Exception& e) {
    return engram::fail("config file '" + path + "' is not valid YAML: " + e.what());
  }
  if (root.IsNull())
    root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    return engram::fail("config file '" + path + "' must hold a mapping");
  return root;
}

/// Applies the `ENGRAM_A__B=c` variables of `env` (may be null) to `root`.
void apply_environment(YAML::Node root, char** env) {
  for (char** e = env; e && *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("ENGRAM_", 0) != 0)
      continue;
    auto eq = kv.find('=');
    if (eq == std::string::npos)
      continue;
    std::string name = kv.substr(7, eq - 7);
    // Every config key has at least two levels: a variable without "__" is not config
    // (ENGRAM_JOBS and the like belong to scripts).
    if (name.find("__") == std::string::npos)
      continue;
    std::string dotted;
    for (std::size_t i = 0; i < name.size(); ++i) {
      if (name.compare(i, 2, "__") == 0) {
        dotted += '.';
        ++i;
      } else {
        dotted += static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
      }
    }
    // librdkafka properties are dotted and never contain '_': ENGRAM_KAFKA__RDKAFKA__SESSION_TIMEOUT_MS.
    if (dotted.rfind("kafka.rdkafka.", 0) == 0)
      std::replace(dotted.begin() + 14, dotted.end(), '_', '.');
    set_path(root, dotted, kv.substr(eq + 1), "environment variable ENGRAM_" + name);
  }
}

/// Applies the `--set a.b=c` overrides to `root`, in order.
void apply_overrides(YAML::Node root, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw config_error("--set '" + o + "': expected key=value");
    set_path(root, o.substr(0, eq), o.substr(eq + 1), "--set " + o.substr(0, eq));
  }
}

}  // namespace

engram::result<engram_config> load(const std::string& path, const std::vector<std::string>& overrides, char** env) {
  try {
    auto root = read_file(path);
    if (!root)
      return engram::fail(root.error());
    apply_environment(*root, env);
    apply_overrides(*root, overrides);
    engram_config cfg;
    decode(*root, cfg);
    if (auto problem = validate(cfg))
      return engram::fail(std::move(*problem));
    return cfg;
  } catch (const config_error& e) {
    return engram::fail(e.what());
  } catch (const YAML::Exception& e) {
    return engram::fail(std::string("config: ") + e.what());
  }
}

std::optional<std::string> validate(const engram_config& cfg) {
  // The order engramd has always checked them in: the first problem is the one reported.
  if (auto problem = validate(cfg.kafka.topics))
    return problem;
  if (auto problem = validate(cfg.http))
    return problem;
  if (auto problem = validate(cfg.kafka))
    return problem;
  if (auto problem = validate(cfg.auth, cfg.http))
    return problem;
  if (auto problem = validate(cfg.store, cfg.kafka))
    return problem;
  return validate(cfg.embedder);
}

}  // namespace engram::config
