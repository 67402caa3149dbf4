#include "tools/engramctl/inspect.hpp"

#include "net/http.hpp"
#include "storage/graph_store.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace engram::ctl {

namespace {

/// Printable ASCII as is, every other byte (and the backslash) as \xNN.
std::string escaped(std::string_view bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

int digest(const std::string& dir, bool dump, const std::string& organization, bool by_organization) {
  auto store = engram::storage::open_graph_store({dir, /*read_only=*/true});
  if (!store) {
    std::cerr << "digest: " << store.error() << "\n";
    return 1;
  }
  if (by_organization) {
    for (const auto& org : (*store)->held_organizations())
      std::cout << org << '\t' << (*store)->digest(org) << "\n";
    return 0;
  }
  if (dump) {
    // One line a key: its column family, key and value, tab-separated, in the digest's order.
    std::string family;
    (*store)->visit_logical([&](std::string_view name) { family = name; },
                            [&](std::string_view k, std::string_view v) {
                              std::cout << family << '\t' << escaped(k) << '\t' << escaped(v) << '\n';
                            },
                            organization);
  }
  std::cout << (*store)->digest(organization) << "\n";
  return 0;
}

int stats(std::string url, const std::string& token) {
  if (url.find("/v1/stats") == std::string::npos) {
    while (!url.empty() && url.back() == '/')
      url.pop_back();
    url += "/v1/stats";
  }
  std::map<std::string, std::string> headers;
  if (!token.empty())
    headers["Authorization"] = "Bearer " + token;
  auto res = engram::net::fetch("GET", url, {}, headers);
  if (res.status == 0) {
    std::cerr << "stats: " << res.error << "\n";
    return 1;
  }
  auto doc = nlohmann::json::parse(res.body, nullptr, false);
  std::cout << (doc.is_discarded() ? res.body : doc.dump(2)) << "\n";
  return res.status == 200 ? 0 : 1;
}

int cluster(std::string url, const std::string& token, bool as_json, std::ostream& out) {
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  std::map<std::string, std::string> headers;
  if (!token.empty())
    headers["Authorization"] = "Bearer " + token;
  auto res = engram::net::fetch("GET", url + "/v1/cluster", {}, headers);
  if (res.status == 0) {
    std::cerr << "cluster: " << res.error << "\n";
    return 1;
  }
  auto doc = nlohmann::json::parse(res.body, nullptr, false);
  if (res.status != 200 || !doc.is_object()) {
    std::cerr << "cluster: HTTP " << res.status << ": " << res.body << "\n";
    return 1;
  }
  if (as_json) {
    out << doc.dump(2) << "\n";
    return 0;
  }
  if (!doc.value("clustered", false)) {
    std::cerr << "cluster: " << url << " is not a clustered store member (store.cluster is false)\n";
    return 1;
  }
  out << "as seen by " << doc.value("member", std::string()) << " (" << doc.value("url", std::string()) << ")\n";
  out << "partition  owner            state      applied/target\n";
  for (const auto& p : doc["partitions"]) {
    char line[160];
    const auto owner = p["owner"].is_string() ? p["owner"].get<std::string>() : std::string("-");
    std::snprintf(line, sizeof line, "%9d  %-15s  %-9s  ", p.value("partition", 0), owner.c_str(),
                  p.value("state", std::string()).c_str());
    out << line;
    if (p.contains("applied"))
      out << p["applied"].get<long long>() << "/" << p["target"].get<long long>();
    out << "\n";
  }
  out << "members:\n";
  for (const auto& m : doc["members"]) {
    out << "  " << m.value("member", std::string()) << "  " << m.value("url", std::string()) << "  "
        << (m.value("live", false) ? "live" : "gone") << ", heard " << m.value("heardMsAgo", 0) << " ms ago, owns "
        << m["owned"].dump() << ", ready " << m["ready"].dump() << "\n";
  }
  out << "forwarded " << doc.value("forwarded", 0) << ", answered retry " << doc.value("retried", 0) << "\n";
  return 0;
}

}  // namespace engram::ctl
