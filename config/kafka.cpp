#include "config/kafka.hpp"

#include "config/internal/yaml_read.hpp"

#include <set>

namespace engram::config {

namespace detail {

namespace {

void read_topics(const YAML::Node& n, const std::string& key, topics_config& t) {
  each_key(n, key,
           {
               {"inbound", [&](auto& x, auto& k) { t.inbound = as_string(x, k); }},
               {"log", [&](auto& x, auto& k) { t.log = as_string(x, k); }},
               {"reminders", [&](auto& x, auto& k) { t.reminders = as_string(x, k); }},
               {"dead_letter", [&](auto& x, auto& k) { t.dead_letter = as_string(x, k); }},
               {"keys", [&](auto& x, auto& k) { t.keys = as_string(x, k); }},
               {"members", [&](auto& x, auto& k) { t.members = as_string(x, k); }},
           });
}

}  // namespace

void read_kafka(const YAML::Node& n, const std::string& key, kafka_config& out) {
  each_key(n, key,
           {
               {"brokers", [&](auto& v, auto& k) { out.brokers = as_string(v, k); }},
               {"group_id", [&](auto& v, auto& k) { out.group_id = as_string(v, k); }},
               {"min_inbound_retention_ms",
                [&](auto& v, auto& k) { out.min_inbound_retention_ms = as_uint(v, k, 0, UINT64_MAX / 2); }},
               {"create_key_topic", [&](auto& v, auto& k) { out.create_key_topic = as_bool(v, k); }},
               {"rdkafka",
                [&](const YAML::Node& v, const std::string& k) {
                  if (v.IsNull())
                    return;
                  if (!v.IsMap())
                    reject(k, "must be a mapping of librdkafka properties");
                  for (const auto& prop : v)
                    out.rdkafka[prop.first.as<std::string>()] =
                        scalar(prop.second, join(k, prop.first.as<std::string>()));
                }},
               {"topics", [&](const YAML::Node& v, const std::string& k) { read_topics(v, k, out.topics); }},
           });
}

}  // namespace detail

std::optional<std::string> validate(const topics_config& t) {
  std::set<std::string> names{t.inbound, t.log, t.reminders, t.dead_letter, t.keys, t.members};
  if (names.size() != 6)
    return "config key 'kafka.topics': the six topics must have distinct names";
  return std::nullopt;
}

std::optional<std::string> validate(const kafka_config& kafka) {
  if (auto problem = validate(kafka.topics))
    return problem;
  if (kafka.group_id.empty())
    return "config key 'kafka.group_id': must not be empty";
  return std::nullopt;
}

}  // namespace engram::config
