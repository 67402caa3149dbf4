#include "config/pipeline.hpp"

#include "config/internal/yaml_read.hpp"
#include "config/kafka.hpp"

#include <algorithm>
#include <charconv>

namespace engram::config {

namespace detail {

namespace {

/// Reads ingest.accept_gaps: one "topic:partition" or a list of them.
void read_accept_gaps(const YAML::Node& v, const std::string& k, std::vector<std::string>& out) {
  out.clear();
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
      reject(k, "'" + item + "' is not topic:partition (e.g. engram-log:3)");
    out.push_back(item);
  };
  auto item = [&](const YAML::Node& x) {
    if (!x.IsScalar())
      reject(k, "must be topic:partition or a list of them (e.g. [engram-log:3])");
    add(x.Scalar());
  };
  if (v.IsSequence()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      item(v[i]);
  } else {
    item(v);
  }
}

}  // namespace

void read_roles(const YAML::Node& n, const std::string& key, roles_config& out) {
  if (!n.IsSequence() || n.size() == 0)
    reject(key, "must be a non-empty list of extract, store");
  out = {false, false};
  for (std::size_t i = 0; i < n.size(); ++i) {
    const auto role = scalar(n[i], key);
    if (role == "extract")
      out.extract = true;
    else if (role == "store")
      out.store = true;
    else
      reject(key, "unknown role '" + role + "' (roles are extract, store)");
  }
}

void read_storage(const YAML::Node& n, const std::string& key, storage_config& out) {
  each_key(
      n, key,
      {{"path", [&](auto& v, auto& k) { out.path = as_string(v, k); }},
       {"memory_mb", [&](auto& v, auto& k) { out.memory_mb = static_cast<std::uint32_t>(as_uint(v, k, 8, 1u << 20)); }},
       {"snapshot_every", [&](auto& v, auto& k) { out.snapshot_every = as_uint(v, k, 0, 1ull << 40); }}});
}

void read_store(const YAML::Node& n, const std::string& key, store_config& out) {
  each_key(
      n, key,
      {
          {"cluster", [&](auto& v, auto& k) { out.cluster = as_bool(v, k); }},
          {"advertised_url", [&](auto& v, auto& k) { out.advertised_url = as_string(v, k); }},
          {"member_name", [&](auto& v, auto& k) { out.member_name = as_string(v, k); }},
          {"heartbeat_ms",
           [&](auto& v, auto& k) { out.heartbeat_ms = static_cast<std::uint32_t>(as_uint(v, k, 100, 600000)); }},
          {"forward_timeout_ms",
           [&](auto& v, auto& k) { out.forward_timeout_ms = static_cast<std::uint32_t>(as_uint(v, k, 100, 600000)); }},
          {"standby_replicas",
           [&](auto& v, auto& k) { out.standby_replicas = static_cast<std::uint32_t>(as_uint(v, k, 0, 16)); }},
          {"drop_after_ms",
           [&](auto& v, auto& k) { out.drop_after_ms = static_cast<std::uint32_t>(as_uint(v, k, 0, 86400000)); }},
          {"appliers", [&](auto& v, auto& k) { out.appliers = static_cast<std::uint32_t>(as_uint(v, k, 1, 64)); }},
      });
}

void read_ingest(const YAML::Node& n, const std::string& key, ingest_config& out) {
  each_key(
      n, key,
      {
          {"max_event_bytes", [&](auto& v, auto& k) { out.max_event_bytes = as_uint(v, k, 1024, 64u << 20); }},
          {"batch_size",
           [&](auto& v, auto& k) { out.batch_size = static_cast<std::uint32_t>(as_uint(v, k, 1, 100000)); }},
          {"extract_threads",
           [&](auto& v, auto& k) { out.extract_threads = static_cast<std::uint32_t>(as_uint(v, k, 0, 64)); }},
          {"batch_ms", [&](auto& v, auto& k) { out.batch_ms = static_cast<std::uint32_t>(as_uint(v, k, 10, 600000)); }},
          {"accept_gaps", [&](const YAML::Node& v, const std::string& k) { read_accept_gaps(v, k, out.accept_gaps); }},
      });
}

}  // namespace detail

std::optional<std::string> validate(const store_config& store, const kafka_config& kafka) {
  if (!store.cluster)
    return std::nullopt;
  if (kafka.embedded())
    return "config key 'store.cluster': needs a Kafka broker the members share (kafka.brokers is 'embedded': each "
           "process would start its own)";
  if (store.advertised_url.rfind("http://", 0) != 0 || store.advertised_url.size() <= 7)
    return "config key 'store.advertised_url': required with store.cluster, as http://host:port (the address "
           "other members forward requests to)";
  return std::nullopt;
}

bool ingest_config::accepts_gap(const std::string& topic, std::int32_t partition) const {
  const auto wanted = topic + ":" + std::to_string(partition);
  return std::find(accept_gaps.begin(), accept_gaps.end(), wanted) != accept_gaps.end();
}

}  // namespace engram::config
