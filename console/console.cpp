#include "console/console.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>

namespace engram::console {

std::string_view asset::content_type() const {
  if (path.ends_with(".html"))
    return "text/html; charset=utf-8";
  if (path.ends_with(".js"))
    return "text/javascript; charset=utf-8";
  if (path.ends_with(".css"))
    return "text/css; charset=utf-8";
  return "application/octet-stream";
}

const asset* find(std::string_view path) {
  if (path.empty())
    path = "index.html";
  for (const auto& a : assets())
    if (a.path == path)
      return &a;
  return nullptr;
}

void add_routes(net::router& r) {
  const std::vector<std::string> get{"GET", "HEAD"};
  r.add("/ui", get, [](const net::request&, net::responder respond) {
    respond(net::response{302, "text/plain", "see /ui/", {{"Location", "/ui/"}}});
  });
  r.add("/ui/*", get, [](const net::request& req, net::responder respond) {
    const auto query = req.target.find('?');
    const auto path = req.target.substr(4, query == std::string::npos ? std::string::npos : query - 4);
    const auto* a = find(path);
    if (!a)
      return respond(
          net::response{404, "application/json", nlohmann::json{{"error", "no such file: /ui/" + path}}.dump(), {}});
    const std::string etag = "\"" + std::string(a->sha256.substr(0, 32)) + "\"";
    std::vector<std::pair<std::string, std::string>> headers{
        {"ETag", etag},
        {"Cache-Control", "no-cache"},
        {"X-Content-Type-Options", "nosniff"},
        {"Content-Security-Policy",
         "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"}};
    if (auto m = req.headers.find("if-none-match"); m != req.headers.end() && m->second == etag)
      return respond(net::response{304, std::string(a->content_type()), "", std::move(headers)});
    respond(net::response{200, std::string(a->content_type()), std::string(a->content()), std::move(headers)});
  });
}

}  // namespace engram::console
