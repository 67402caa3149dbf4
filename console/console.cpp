#include "console/console.hpp"

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

}  // namespace engram::console
