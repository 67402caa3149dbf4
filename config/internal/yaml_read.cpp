#include "config/internal/yaml_read.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace engram::config::detail {

void reject(const std::string& key, const std::string& reason) {
  throw config_error("config key '" + key + "': " + reason);
}

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string scalar(const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar())
    reject(key, "must be a scalar");
  return n.Scalar();
}

std::string as_string(const YAML::Node& n, const std::string& key) {
  if (n.IsNull())
    reject(key, "must not be empty");
  return scalar(n, key);
}

bool as_bool(const YAML::Node& n, const std::string& key) {
  auto s = scalar(n, key);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "true" || s == "yes" || s == "on" || s == "1")
    return true;
  if (s == "false" || s == "no" || s == "off" || s == "0")
    return false;
  reject(key, "must be true or false, got '" + n.Scalar() + "'");
}

std::uint64_t as_uint(const YAML::Node& n, const std::string& key, std::uint64_t lo, std::uint64_t hi) {
  auto s = scalar(n, key);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    reject(key, "must be a non-negative integer, got '" + s + "'");
  if (v < lo || v > hi)
    reject(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
  return v;
}

double as_double(const YAML::Node& n, const std::string& key, double lo, double hi) {
  auto s = scalar(n, key);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    reject(key, "must be a number, got '" + s + "'");
  if (v < lo || v > hi)
    reject(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + s);
  return v;
}

void each_key(const YAML::Node& map, const std::string& prefix, const field_readers& fields) {
  if (map.IsNull())
    return;
  if (!map.IsMap())
    reject(prefix, "must be a mapping");
  for (const auto& kv : map) {
    auto name = kv.first.as<std::string>();
    auto key = join(prefix, name);
    auto it = fields.find(name);
    if (it == fields.end())
      throw config_error("unknown config key '" + key + "'");
    it->second(kv.second, key);
  }
}

}  // namespace engram::config::detail
