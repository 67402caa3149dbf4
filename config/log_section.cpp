#include "config/log_section.hpp"

#include "config/internal/yaml_read.hpp"

#include <set>

namespace engram::config::detail {

void read_log(const YAML::Node& n, const std::string& key, log_config& out) {
  static const std::set<std::string> levels{"trace", "debug", "info", "warn", "error", "off"};
  auto level = [&](const YAML::Node& v, const std::string& k) {
    auto l = as_string(v, k);
    if (!levels.count(l))
      reject(k, "must be one of trace, debug, info, warn, error, off");
    return l;
  };
  each_key(n, key,
           {
               {"level", [&](auto& v, auto& k) { out.level = level(v, k); }},
               {"format",
                [&](auto& v, auto& k) {
                  out.format = as_string(v, k);
                  if (out.format != "text" && out.format != "json")
                    reject(k, "must be text or json");
                }},
               {"levels",
                [&](const YAML::Node& v, const std::string& k) {
                  field_readers fields;
                  for (auto module : log_modules)
                    fields[std::string(module)] = [&, module](const YAML::Node& x, const std::string& kk) {
                      out.levels[std::string(module)] = level(x, kk);
                    };
                  each_key(v, k, fields);
                }},
           });
}

}  // namespace engram::config::detail
