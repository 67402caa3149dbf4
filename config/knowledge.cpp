#include "config/knowledge.hpp"

#include "config/internal/yaml_read.hpp"

namespace engram::config::detail {

void read_decay(const YAML::Node& n, const std::string& key, decay_config& out) {
  each_key(n, key,
           {
               {"hide_below", [&](auto& v, auto& k) { out.hide_below = as_double(v, k, 0.0, 1.0); }},
               {"half_life_days",
                [&](const YAML::Node& v, const std::string& k) {
                  static const char* types[] = {"fact", "decision",     "event",      "preference",
                                                "goal", "relationship", "action_item"};
                  field_readers fields;
                  for (std::size_t i = 0; i < 7; ++i)
                    fields[types[i]] = [&, i](const YAML::Node& x, const std::string& kk) {
                      out.half_life_days[i] = as_double(x, kk, 0.0, 100000.0);
                    };
                  each_key(v, k, fields);
                }},
           });
}

void read_branches(const YAML::Node& n, const std::string& key, branches_config& out) {
  each_key(n, key, {{"ttl_ms", [&](auto& v, auto& k) { out.ttl_ms = as_uint(v, k, 1000, 365ull * 86400000); }}});
}

void read_reminders(const YAML::Node& n, const std::string& key, reminders_config& out) {
  each_key(n, key,
           {
               {"lead_ms", [&](auto& v, auto& k) { out.lead_ms = as_uint(v, k, 0, 365ull * 86400000); }},
               {"batch", [&](auto& v, auto& k) { out.batch = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000)); }},
           });
}

void read_timers(const YAML::Node& n, const std::string& key, timers_config& out) {
  each_key(n, key,
           {
               {"interval_ms", [&](auto& v, auto& k) { out.interval_ms = as_uint(v, k, 10, 86400000); }},
               {"expiry_batch",
                [&](auto& v, auto& k) { out.expiry_batch = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000)); }},
           });
}

void read_retention(const YAML::Node& n, const std::string& key, retention_config& out) {
  auto days = [](const YAML::Node& v, const std::string& k) {
    return static_cast<std::uint32_t>(as_uint(v, k, 0, 100000));
  };
  each_key(n, key,
           {
               {"messages_days", [&](auto& v, auto& k) { out.messages_days = days(v, k); }},
               {"organizations",
                [&](const YAML::Node& v, const std::string& k) {
                  if (v.IsNull())
                    return;
                  if (!v.IsMap())
                    reject(k, "must be a mapping of organisation id to days");
                  for (const auto& org : v) {
                    const auto id = org.first.as<std::string>();
                    out.organizations[id] = days(org.second, join(k, id));
                  }
                }},
           });
}

}  // namespace engram::config::detail
