// libFuzzer: engramd's HTTP server reading requests as a client sends them (net/http.cpp:
// Boost.Beast's parser under the server's limits, keep-alive, pipelining, the 413 and 431
// refusals, a handler that throws, an event stream). Each input goes over a real socket to
// one server on 127.0.0.1; the client then closes its sending side and reads until the
// server closes. Every response must be HTTP/1.x with a status the server can give.
#include "net/http.hpp"
#include "net/router.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

namespace {

using namespace engram;

std::unique_ptr<net::server> start_server() {
  net::router routes;
  routes.add("/mcp", {"POST"}, [](const net::request& r, net::responder respond) {
    respond({200,
             "application/json",
             "{\"headers\":" + std::to_string(r.headers.size()) + ",\"body\":" + std::to_string(r.body.size()) + "}",
             {{"Mcp-Session-Id", r.headers.count("mcp-session-id") ? r.headers.at("mcp-session-id") : "new"}}});
  });
  routes.add("/v1/*", {"GET"}, [](const net::request& r, net::responder respond) {
    if (r.target.find("boom") != std::string::npos)
      throw std::runtime_error("a handler bug");  // the server answers 500 and goes on
    respond({200, "application/json", "{\"target\":" + std::to_string(r.target.size()) + "}", {}});
  });
  routes.add("/v1/events", {"GET"}, [](const net::request&, net::responder respond) {
    net::response res;
    res.content_type = "text/event-stream";
    res.on_stream = [](std::shared_ptr<net::event_stream> s) { s->send("{\"hello\":1}"); };
    respond(std::move(res));
  });
  routes.add("/ui/*", {}, [](const net::request& r, net::responder respond) {
    respond({200, "text/plain", r.method + " " + r.target, {}});
  });
  net::server_options o;
  o.listen = "127.0.0.1:0";
  o.header_limit = 2048;
  o.body_limit = 8192;
  o.header_timeout = std::chrono::seconds(3);
  o.read_timeout = std::chrono::seconds(3);
  o.max_requests_per_connection = 16;
  auto s = net::server::start(o, routes);
  if (!s)
    std::abort();
  return std::move(*s);
}

/// The statuses this server can answer: its routes', 404/405 (router), 413/431 (limits), 500
/// (a handler that throws), 503 (too many streams or connections).
bool possible(int status) {
  static const std::set<int> ok{200, 404, 405, 413, 431, 500, 503};
  return ok.count(status) > 0;
}

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto server = start_server();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};  // past the server's own timeouts: a hang here is the server's
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  // libFuzzer's timer signal (SIGALRM, every few seconds for -timeout) can interrupt connect():
  // the connection then completes on its own, and poll() says when (found at 807,285 and
  // 471,813 inputs: "Interrupted system call").
  int connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (connected != 0 && errno == EINTR) {
    pollfd p{fd, POLLOUT, 0};
    int ready = 0;
    while ((ready = ::poll(&p, 1, 5000)) < 0 && errno == EINTR) {
    }
    int err = ready == 1 ? 0 : ETIMEDOUT;
    socklen_t len = sizeof err;
    if (ready == 1)
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    connected = err == 0 ? 0 : -1;
    errno = err;
  }
  if (connected != 0) {
    // The server no longer accepts: say why, and how many descriptors this process holds (a
    // connection the server never closes would show here).
    std::fprintf(stderr, "connect failed: %s; %zu descriptors open\n", std::strerror(errno), open_descriptors());
    std::abort();
  }
  // The server may stop reading (431, 413) and close: what it did not take is dropped.
  for (std::size_t sent = 0; sent < size;) {
    const auto n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[4096];
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      answer.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      std::abort();  // the server neither answered nor closed within 5 s
    break;           // closed (or reset after a refusal)
  }
  // Reset, not closed: a closed connection would wait in TIME_WAIT on its port, and a few
  // thousand inputs a second would run out of ports.
  linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
  // Every connection ends: the server holds none once the client has gone (checked now and
  // then, since the server may take a moment to drop what it was answering).
  static std::size_t runs = 0;
  if (++runs % 4096 == 0 && open_descriptors() > 512) {
    std::fprintf(stderr, "%zu descriptors open after %zu inputs: connections are not closed\n", open_descriptors(),
                 runs);
    std::abort();
  }
  // The first response (the rest may follow bodies that echo the request) is HTTP/1.x with a
  // status this server gives.
  if (!answer.empty() &&
      (answer.size() < 12 || answer.rfind("HTTP/1.", 0) != 0 || !possible(std::atoi(answer.substr(9, 3).c_str()))))
    std::abort();
  return 0;
}
