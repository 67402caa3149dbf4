#include "config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>

namespace engram::config {
namespace {

/// A problem in the configuration, carrying the dotted key it concerns.
struct config_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& key, const std::string& reason) {
  throw config_error("config key '" + key + "': " + reason);
}

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string scalar(const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar())
    fail(key, "must be a scalar");
  return n.Scalar();
}

std::string as_string(const YAML::Node& n, const std::string& key) {
  if (n.IsNull())
    fail(key, "must not be empty");
  return scalar(n, key);
}

bool as_bool(const YAML::Node& n, const std::string& key) {
  auto s = scalar(n, key);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "true" || s == "yes" || s == "on" || s == "1")
    return true;
  if (s == "false" || s == "no" || s == "off" || s == "0")
    return false;
  fail(key, "must be true or false, got '" + n.Scalar() + "'");
}

std::uint64_t as_uint(const YAML::Node& n, const std::string& key, std::uint64_t lo,
                      std::uint64_t hi) {
  auto s = scalar(n, key);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    fail(key, "must be a non-negative integer, got '" + s + "'");
  if (v < lo || v > hi)
    fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                  s);
  return v;
}

double as_double(const YAML::Node& n, const std::string& key, double lo, double hi) {
  auto s = scalar(n, key);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    fail(key, "must be a number, got '" + s + "'");
  if (v < lo || v > hi)
    fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
  return v;
}

/// Walks one YAML mapping, dispatching each known key and rejecting unknown ones.
void each_key(const YAML::Node& map, const std::string& prefix,
              const std::map<std::string, std::function<void(const YAML::Node&, const std::string&)>>&
                  fields) {
  if (map.IsNull())
    return;
  if (!map.IsMap())
    fail(prefix, "must be a mapping");
  for (const auto& kv : map) {
    auto name = kv.first.as<std::string>();
    auto key = join(prefix, name);
    auto it = fields.find(name);
    if (it == fields.end())
      throw config_error("unknown config key '" + key + "'");
    it->second(kv.second, key);
  }
}

void decode(const YAML::Node& root, engram_config& cfg, std::vector<std::string>& warnings) {
  each_key(root, "", {
    {"roles", [&](const YAML::Node& n, const std::string& k) {
       if (!n.IsSequence() || n.size() == 0)
         fail(k, "must be a non-empty list of extract, store");
       cfg.roles = {false, false};
       for (std::size_t i = 0; i < n.size(); ++i) {
         const auto role = scalar(n[i], k);
         if (role == "extract")
           cfg.roles.extract = true;
         else if (role == "store")
           cfg.roles.store = true;
         else
           fail(k, "unknown role '" + role + "' (roles are extract, store)");
       }
     }},
    {"kafka", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"brokers", [&](auto& v, auto& k) { cfg.kafka.brokers = as_string(v, k); }},
         {"group_id", [&](auto& v, auto& k) { cfg.kafka.group_id = as_string(v, k); }},
         {"min_inbound_retention_ms",
          [&](auto& v, auto& k) { cfg.kafka.min_inbound_retention_ms = as_uint(v, k, 0, UINT64_MAX / 2); }},
         {"rdkafka", [&](const YAML::Node& v, const std::string& k) {
            if (v.IsNull())
              return;
            if (!v.IsMap())
              fail(k, "must be a mapping of librdkafka properties");
            for (const auto& prop : v)
              cfg.kafka.rdkafka[prop.first.as<std::string>()] =
                  scalar(prop.second, join(k, prop.first.as<std::string>()));
          }},
         {"topics", [&](const YAML::Node& v, const std::string& k) {
            auto& t = cfg.kafka.topics;
            each_key(v, k, {
              {"inbound", [&](auto& x, auto& kk) { t.inbound = as_string(x, kk); }},
              {"log", [&](auto& x, auto& kk) { t.log = as_string(x, kk); }},
              {"reminders", [&](auto& x, auto& kk) { t.reminders = as_string(x, kk); }},
              {"dead_letter", [&](auto& x, auto& kk) { t.dead_letter = as_string(x, kk); }},
            });
          }},
       });
     }},
    {"storage", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"path", [&](auto& v, auto& k) { cfg.storage.path = as_string(v, k); }}});
     }},
    {"http", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"listen", [&](auto& v, auto& k) { cfg.http.listen = as_string(v, k); }}});
     }},
    {"samples", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"load", [&](auto& v, auto& k) { cfg.samples.load = as_bool(v, k); }},
         {"path", [&](auto& v, auto& k) { cfg.samples.path = as_string(v, k); }},
       });
     }},
    {"ingest", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"max_event_bytes",
          [&](auto& v, auto& k) { cfg.ingest.max_event_bytes = as_uint(v, k, 1024, 64u << 20); }},
         {"batch_size", [&](auto& v, auto& k) {
            cfg.ingest.batch_size = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000));
          }},
         {"extract_threads", [&](auto& v, auto& k) {
            cfg.ingest.extract_threads = static_cast<std::uint32_t>(as_uint(v, k, 0, 64));
          }},
         {"batch_ms", [&](auto& v, auto& k) {
            cfg.ingest.batch_ms = static_cast<std::uint32_t>(as_uint(v, k, 10, 600000));
          }},
         {"accept_gaps", [&](const YAML::Node& v, const std::string& k) {
            cfg.ingest.accept_gaps.clear();
            if (v.IsNull())
              return;
            auto add = [&](const std::string& item) {
              // "topic:partition": the partition is the digits after the last colon.
              auto colon = item.rfind(':');
              std::uint64_t partition = 0;
              const char* first = item.data() + (colon == std::string::npos ? 0 : colon + 1);
              const char* last = item.data() + item.size();
              auto [end, ec] = std::from_chars(first, last, partition);
              if (colon == std::string::npos || colon == 0 || first == last || ec != std::errc{} || end != last ||
                  partition > 1000000)
                fail(k, "'" + item + "' is not topic:partition (e.g. engram-log:3)");
              cfg.ingest.accept_gaps.push_back(item);
            };
            auto item = [&](const YAML::Node& x) {
              if (!x.IsScalar())
                fail(k, "must be topic:partition or a list of them (e.g. [engram-log:3])");
              add(x.Scalar());
            };
            if (v.IsSequence()) {
              for (std::size_t i = 0; i < v.size(); ++i)
                item(v[i]);
            } else {
              item(v);
            }
          }},
       });
     }},
    {"extraction", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"confidence_threshold", [&](auto& v, auto& k) {
                          cfg.extraction.confidence_threshold = as_double(v, k, 0.0, 1.0);
                        }},
                       {"max_entries_per_message", [&](auto& v, auto& k) {
                          cfg.extraction.max_entries_per_message =
                              static_cast<std::uint32_t>(as_uint(v, k, 0, 1000000));
                        }},
                       {"bulk", [&](auto& v, auto& k) {
                          cfg.extraction.bulk = as_string(v, k);
                          if (cfg.extraction.bulk != "skip" && cfg.extraction.bulk != "low_confidence" &&
                              cfg.extraction.bulk != "keep")
                            fail(k, "must be skip, low_confidence or keep, got '" + cfg.extraction.bulk + "'");
                        }},
                       {"type_model", [&](auto& v, auto& k) { cfg.extraction.type_model = as_bool(v, k); }},
                       {"passages", [&](auto& v, auto& k) { cfg.extraction.passages = as_bool(v, k); }}});
     }},
    {"extractor", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"kind", [&](auto& v, auto& k) {
            cfg.extractor.kind = as_string(v, k);
            if (cfg.extractor.kind != "rules" && cfg.extractor.kind != "llm")
              fail(k, "must be rules or llm, got '" + cfg.extractor.kind + "'");
          }},
         {"llm", [&](const YAML::Node& v, const std::string& k) {
            auto& l = cfg.extractor.llm;
            each_key(v, k, {
              {"base_url", [&](auto& x, auto& kk) {
                 l.base_url = as_string(x, kk);
                 if (l.base_url.rfind("http://", 0) != 0)
                   fail(kk, "must be an http:// URL, got '" + l.base_url + "'");
               }},
              {"model", [&](auto& x, auto& kk) { l.model = as_string(x, kk); }},
              {"api_key", [&](auto& x, auto& kk) { l.api_key = as_string(x, kk); }},
              {"timeout_ms", [&](auto& x, auto& kk) {
                 l.timeout_ms = static_cast<std::uint32_t>(as_uint(x, kk, 100, 600000));
               }},
            });
          }},
       });
     }},
    {"embedder", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"kind", [&](auto& v, auto& k) {
            cfg.embedder.kind = as_string(v, k);
            if (cfg.embedder.kind != "use-lite-int8" && cfg.embedder.kind != "use-lite" && cfg.embedder.kind != "openai")
              fail(k, "must be use-lite-int8, use-lite or openai, got '" + cfg.embedder.kind + "'");
          }},
         {"isa", [&](auto& v, auto& k) {
            cfg.embedder.isa = as_string(v, k);
            if (cfg.embedder.isa != "auto" && cfg.embedder.isa != "avx512" && cfg.embedder.isa != "avx2" &&
                cfg.embedder.isa != "portable")
              fail(k, "must be auto, avx512, avx2 or portable, got '" + cfg.embedder.isa + "'");
          }},
         {"model_path", [&](auto& v, auto& k) { cfg.embedder.model_path = as_string(v, k); }},
         {"max_per_message", [&](auto& v, auto& k) {
            cfg.embedder.max_per_message = static_cast<std::uint32_t>(as_uint(v, k, 0, 100000));
          }},
         {"cache_size", [&](auto& v, auto& k) {
            cfg.embedder.cache_size = static_cast<std::uint32_t>(as_uint(v, k, 0, 10000000));
          }},
         {"openai", [&](const YAML::Node& v, const std::string& k) {
            auto& o = cfg.embedder.openai;
            each_key(v, k, {
              {"base_url", [&](auto& x, auto& kk) {
                 o.base_url = as_string(x, kk);
                 if (o.base_url.rfind("http://", 0) != 0)
                   fail(kk, "must be an http:// URL, got '" + o.base_url + "'");
               }},
              {"model", [&](auto& x, auto& kk) { o.model = as_string(x, kk); }},
              {"api_key", [&](auto& x, auto& kk) { o.api_key = as_string(x, kk); }},
              {"dimension", [&](auto& x, auto& kk) {
                 o.dimension = static_cast<std::uint32_t>(as_uint(x, kk, 1, 65536));
               }},
              {"timeout_ms", [&](auto& x, auto& kk) {
                 o.timeout_ms = static_cast<std::uint32_t>(as_uint(x, kk, 100, 600000));
               }},
            });
          }},
       });
     }},
    {"decay", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"hide_below", [&](auto& v, auto& k) { cfg.decay.hide_below = as_double(v, k, 0.0, 1.0); }},
         {"half_life_days", [&](const YAML::Node& v, const std::string& k) {
            static const char* types[] = {"fact", "decision", "event", "preference", "goal", "relationship",
                                          "action_item"};
            std::map<std::string, std::function<void(const YAML::Node&, const std::string&)>> fields;
            for (std::size_t i = 0; i < 7; ++i)
              fields[types[i]] = [&, i](const YAML::Node& x, const std::string& kk) {
                cfg.decay.half_life_days[i] = as_double(x, kk, 0.0, 100000.0);
              };
            each_key(v, k, fields);
          }},
       });
     }},
    {"recall", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"graph_expansion", [&](auto& v, auto& k) { cfg.recall.graph_expansion = as_bool(v, k); }}});
     }},
    {"branches", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"ttl_ms", [&](auto& v, auto& k) { cfg.branches.ttl_ms = as_uint(v, k, 1000, 365ull * 86400000); }}});
     }},
    {"reminders", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p,
                {{"lead_ms", [&](auto& v, auto& k) { cfg.reminders.lead_ms = as_uint(v, k, 0, 365ull * 86400000); }},
                 {"batch", [&](auto& v, auto& k) {
                    cfg.reminders.batch = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000));
                  }}});
     }},
    {"timers", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"interval_ms", [&](auto& v, auto& k) { cfg.timers.interval_ms = as_uint(v, k, 10, 86400000); }},
         {"expiry_batch", [&](auto& v, auto& k) {
            cfg.timers.expiry_batch = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000));
          }},
       });
     }},
    {"entities", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"type_parents", [&](const YAML::Node& v, const std::string& k) {
                          if (v.IsNull())
                            return;
                          if (!v.IsMap())
                            return fail(k, "must be a map of type: parent type");
                          for (const auto& kv : v) {
                            const auto child = kv.first.as<std::string>();
                            const auto kk = k + "." + child;
                            auto parent = as_string(kv.second, kk);
                            if (child.empty() || parent.empty() || child.size() > 64 || parent.size() > 64)
                              return fail(kk, "type names must be 1..64 characters");
                            cfg.entities.type_parents[child] = std::move(parent);
                          }
                        }}});
     }},
    {"dedup", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {{"threshold", [&](auto& v, auto& k) { cfg.dedup.threshold = as_double(v, k, 0.5, 1.0); }}});
     }},
    {"log", [&](const YAML::Node& n, const std::string& p) {
       static const std::set<std::string> levels{"trace", "debug", "info", "warn", "error", "off"};
       auto level = [&](const YAML::Node& v, const std::string& k) {
         auto l = as_string(v, k);
         if (!levels.count(l))
           fail(k, "must be one of trace, debug, info, warn, error, off");
         return l;
       };
       each_key(n, p, {
         {"level", [&](auto& v, auto& k) { cfg.log.level = level(v, k); }},
         {"format", [&](auto& v, auto& k) {
            cfg.log.format = as_string(v, k);
            if (cfg.log.format != "text" && cfg.log.format != "json")
              fail(k, "must be text or json");
          }},
         {"levels", [&](const YAML::Node& v, const std::string& k) {
            std::map<std::string, std::function<void(const YAML::Node&, const std::string&)>> fields;
            for (auto module : config::log_modules)
              fields[std::string(module)] = [&, module](const YAML::Node& x, const std::string& kk) {
                cfg.log.levels[std::string(module)] = level(x, kk);
              };
            each_key(v, k, fields);
          }},
       });
     }},
    {"auth", [&](const YAML::Node& n, const std::string& p) {
       each_key(n, p, {
         {"tokens", [&](const YAML::Node& v, const std::string& k) {
            if (v.IsNull())
              return;
            if (!v.IsSequence())
              fail(k, "must be a list of {token, organization_id, scopes, name, bundles}");
            for (std::size_t i = 0; i < v.size(); ++i) {
              token_config t;
              const auto at = k + "[" + std::to_string(i) + "]";
              each_key(v[i], at, {
                {"token", [&](auto& x, auto& kk) { t.token = as_string(x, kk); }},
                {"organization_id", [&](auto& x, auto& kk) { t.organization_id = as_string(x, kk); }},
                {"name", [&](auto& x, auto& kk) { t.name = as_string(x, kk); }},
                {"scopes", [&](const YAML::Node& x, const std::string& kk) {
                   if (!x.IsSequence())
                     fail(kk, "must be a list of read, write, admin");
                   for (const auto& sc : x) {
                     auto scope = as_string(sc, kk);
                     if (scope != "read" && scope != "write" && scope != "admin")
                       fail(kk, "unknown scope '" + scope + "' (read, write, admin)");
                     t.scopes.push_back(scope);
                   }
                 }},
                {"bundles", [&](const YAML::Node& x, const std::string& kk) {
                   if (!x.IsSequence())
                     fail(kk, "must be a list of bundle names");
                   for (const auto& b : x)
                     t.bundles.push_back(as_string(b, kk));
                 }},
              });
              if (t.token.size() < 16)
                fail(at + ".token", "must be at least 16 characters");
              if (t.organization_id.empty())
                fail(at + ".organization_id", "required");
              cfg.auth.tokens.push_back(std::move(t));
            }
          }},
         {"anonymous_organization", [&](const YAML::Node& v, const std::string& k) {
            cfg.auth.anonymous_organization = v.IsNull() ? std::string() : as_string(v, k);
          }},
         {"dev_organization", [&](auto& v, auto& k) { cfg.auth.dev_organization = as_string(v, k); }},
       });
     }},
  });
}

/// Sets `root[path...] = value`, creating mappings on the way. Under kafka.rdkafka the rest
/// of the key is one librdkafka property name, dots included.
void set_path(YAML::Node root, const std::string& dotted, const std::string& value,
              const std::string& origin) {
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

}  // namespace

load_result load(const std::string& path, const std::vector<std::string>& overrides, char** env) {
  load_result out;
  try {
    YAML::Node root;
    try {
      root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
      out.error = "cannot read config file '" + path + "'";
      return out;
    } catch (const YAML::Exception& e) {
      out.error = "config file '" + path + "' is not valid YAML: " + e.what();
      return out;
    }
    if (root.IsNull())
      root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap()) {
      out.error = "config file '" + path + "' must hold a mapping";
      return out;
    }
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
    for (const auto& o : overrides) {
      auto eq = o.find('=');
      if (eq == std::string::npos || eq == 0)
        throw config_error("--set '" + o + "': expected key=value");
      set_path(root, o.substr(0, eq), o.substr(eq + 1), "--set " + o.substr(0, eq));
    }
    decode(root, out.config, out.warnings);
    out.error = validate(out.config);
  } catch (const config_error& e) {
    out.error = e.what();
  } catch (const YAML::Exception& e) {
    out.error = std::string("config: ") + e.what();
  }
  return out;
}

std::string validate(const engram_config& cfg) {
  const auto& t = cfg.kafka.topics;
  std::set<std::string> names{t.inbound, t.log, t.reminders, t.dead_letter};
  if (names.size() != 4)
    return "config key 'kafka.topics': the four topics must have distinct names";
  const auto& listen = cfg.http.listen;
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size())
    return "config key 'http.listen': expected host:port, got '" + listen + "'";
  auto port = listen.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }) ||
      std::stoul(port) > 65535)
    return "config key 'http.listen': port must be a number 0..65535, got '" + port + "'";
  if (cfg.kafka.group_id.empty())
    return "config key 'kafka.group_id': must not be empty";
  if (!cfg.auth.anonymous_organization.empty()) {
    auto host = listen.substr(0, colon);
    if (host != "127.0.0.1" && host != "localhost" && host != "[::1]" && host != "::1")
      return "config key 'auth.anonymous_organization': only allowed when http.listen is a loopback address, got '" +
             listen + "'";
  }
  if (cfg.embedder.kind == "openai") {
    const auto& o = cfg.embedder.openai;
    if (o.base_url.empty())
      return "config key 'embedder.openai.base_url': required when embedder.kind is openai";
    if (o.model.empty())
      return "config key 'embedder.openai.model': required when embedder.kind is openai";
    if (o.dimension == 0)
      return "config key 'embedder.openai.dimension': required when embedder.kind is openai";
  }
  return {};
}

bool ingest_config::accepts_gap(const std::string& topic, std::int32_t partition) const {
  const auto wanted = topic + ":" + std::to_string(partition);
  return std::find(accept_gaps.begin(), accept_gaps.end(), wanted) != accept_gaps.end();
}

}  // namespace engram::config
