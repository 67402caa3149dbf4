#include "tools/engramctl/inspect.hpp"

#include "net/http.hpp"
#include "storage/graph_store.hpp"

#include <nlohmann/json.hpp>

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
    std::set<std::string> orgs;
    for (const auto& s : (*store)->stats())
      orgs.insert(s.organization_id);
    for (const auto& org : orgs)
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
  auto res = engram::http::fetch("GET", url, {}, headers);
  if (res.status == 0) {
    std::cerr << "stats: " << res.error << "\n";
    return 1;
  }
  auto doc = nlohmann::json::parse(res.body, nullptr, false);
  std::cout << (doc.is_discarded() ? res.body : doc.dump(2)) << "\n";
  return res.status == 200 ? 0 : 1;
}

}  // namespace engram::ctl
