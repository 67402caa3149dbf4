#pragma once
// The web console's files, compiled into engramd (console/CMakeLists.txt) and served at
// /ui/ (docs/console.md).

#include "net/router.hpp"

#include <string_view>
#include <vector>

namespace engram::console {

struct asset {
  /// The path under /ui/ ("index.html", "app.js", "vendor/cytoscape.min.js").
  std::string_view path;
  /// The file's SHA-256 (hex): its ETag.
  std::string_view sha256;
  const char* begin;
  const char* end;

  [[nodiscard]] std::string_view content() const { return {begin, static_cast<std::size_t>(end - begin)}; }
  /// By the path's extension.
  [[nodiscard]] std::string_view content_type() const;
};

/// Every file, in the order the build lists them.
[[nodiscard]] const std::vector<asset>& assets();

/// The file served at /ui/<path> ("" is the page), or null.
[[nodiscard]] const asset* find(std::string_view path);

/// GET /ui (a redirect to /ui/) and GET /ui/<path>: each file with its SHA-256 as ETag (304
/// to a matching If-None-Match), no-cache, nosniff and a Content-Security-Policy that allows
/// this host's files alone; 404 naming an unknown path.
void add_routes(net::router& r);

}  // namespace engram::console
