#include "net/router.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace engram::net {

router& router::add(std::string path, std::vector<std::string> methods, handler h) {
  auto it = std::find_if(routes_.begin(), routes_.end(), [&](const route& r) { return r.path == path; });
  route r{std::move(path), std::move(methods), std::move(h)};
  if (it != routes_.end())
    *it = std::move(r);
  else
    routes_.push_back(std::move(r));
  return *this;
}

void router::operator()(const request& req, responder respond) const {
  const auto path = req.target.substr(0, req.target.find('?'));
  auto it = std::find_if(routes_.begin(), routes_.end(), [&](const route& r) { return r.path == path; });
  if (it == routes_.end()) {
    std::size_t longest = 0;
    for (auto r = routes_.begin(); r != routes_.end(); ++r) {
      const auto& p = r->path;
      if (p.size() >= 2 && p.ends_with("/*") && p.size() - 1 > longest &&
          path.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) {
        longest = p.size() - 1;
        it = r;
      }
    }
  }
  auto error = [](const std::string& message) { return nlohmann::json{{"error", message}}.dump(); };
  if (it == routes_.end())
    return respond({404, "application/json", error("no such endpoint: " + path), {}});
  if (!it->methods.empty() && std::find(it->methods.begin(), it->methods.end(), req.method) == it->methods.end()) {
    std::string allow;
    for (const auto& m : it->methods)
      allow += (allow.empty() ? "" : ", ") + m;
    return respond({405, "application/json", error("method not allowed"), {{"Allow", allow}}});
  }
  it->h(req, std::move(respond));
}

std::vector<std::string> router::paths() const {
  std::vector<std::string> out;
  for (const auto& r : routes_)
    out.push_back(r.path);
  return out;
}

}  // namespace engram::net
