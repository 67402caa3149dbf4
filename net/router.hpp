#pragma once
// The route table of engramd's HTTP server: path (the query ignored) and method to a
// handler. One table instead of string comparisons in the engine, so a new endpoint (the
// web view) is one line. No Beast here.

#include "net/http.hpp"

#include <string>
#include <vector>

namespace engram::net {

class router {
public:
  /// Serves `path` with `h` for the given methods (empty: any method, the handler decides).
  /// A later add() of the same path replaces the earlier one. A path ending in "/*" serves
  /// every path under it ("/ui/*": "/ui/", "/ui/app.js"); an exact path wins over it, and a
  /// longer prefix over a shorter one.
  router& add(std::string path, std::vector<std::string> methods, handler h);

  /// Answers 404 (unknown path) or 405 with Allow (known path, other method) itself;
  /// otherwise calls the route's handler.
  void operator()(const request& req, responder respond) const;

  /// The paths served, in the order they were added (for the start-up log line).
  [[nodiscard]] std::vector<std::string> paths() const;

private:
  struct route {
    std::string path;
    std::vector<std::string> methods;
    handler h;
  };
  std::vector<route> routes_;
};

}  // namespace engram::net
