// The HTTP server under slow, idle and hostile clients (net/http.hpp server_options): against
// engramd as its own process, 500 idle connections and a client sending its header a byte a
// second leave a normal client's recall answered; a header past the limit gets 431. Against
// the server in-process with small caps: one connection past max_connections and one event
// stream past max_event_streams get 503. Every check is of an answer, none of a duration.

#include "net/http.hpp"
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace engram;
using namespace std::chrono_literals;

namespace {

/// A connected socket to 127.0.0.1:port (-1 on failure); reads give up after 60 s.
int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_all(int fd, const std::string& s) {
  for (std::size_t at = 0; at < s.size();) {
    auto n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    at += static_cast<std::size_t>(n);
  }
}

/// The status line's code of the response on `fd` (0: none came).
int status_of(int fd) {
  std::string got;
  char buf[512];
  while (got.find("\r\n") == std::string::npos) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      return 0;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(got.c_str() + 9) : 0;
}

TEST(HttpLimits, IdleAndSlowClientsLeaveARecallAnsweredAndAHugeHeaderGets431) {
  test::temp_dir dir("http-limits");
  auto broker = test::start_broker();
  test::engramd engramd(test::engramd_args(broker->bootstrap(), dir.sub("store")), dir.sub("engramd.log"));
  const auto port = engramd.port();
  ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("engramd.log"));
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& e : test::make_events(12))
    keyed.emplace_back(test::org_of(e), e);
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port) == 12; }, 120s));

  std::vector<int> idle;
  for (int i = 0; i < 500; ++i) {
    const int fd = connect_to(port);
    ASSERT_GE(fd, 0) << "connection " << i;
    idle.push_back(fd);
  }
  // A client that sends its header a byte a second and never finishes it.
  std::atomic<bool> stop{false};
  std::thread slow([&] {
    const int fd = connect_to(port);
    const std::string header = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n";
    for (std::size_t i = 0; !stop && fd >= 0 && i < header.size(); ++i) {
      send_all(fd, header.substr(i, 1));
      for (int t = 0; t < 10 && !stop; ++t)
        std::this_thread::sleep_for(100ms);  // its own pace, which no check depends on
    }
    if (fd >= 0)
      ::close(fd);
  });
  // A normal client is answered, several times over.
  for (int i = 0; i < 3; ++i) {
    auto recalled = test::mcp_call(port, test::admin_token, "recall_knowledge", {{"query", "budget meeting"}});
    EXPECT_FALSE(recalled.contains("error")) << recalled;
  }
  EXPECT_TRUE(test::ready(port));
  // A header past 16 KiB: 431, and the connection closes.
  const int big = connect_to(port);
  ASSERT_GE(big, 0);
  send_all(big, "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Filler: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(status_of(big), 431);
  ::close(big);
  stop = true;
  slow.join();
  for (int fd : idle)
    ::close(fd);
  EXPECT_TRUE(test::ready(port));
}

TEST(HttpLimits, OneConnectionOrEventStreamPastTheCapGets503) {
  net::server_options o;
  o.listen = "127.0.0.1:0";
  o.max_connections = 8;
  o.max_event_streams = 2;
  std::vector<std::shared_ptr<net::event_stream>> streams;
  std::mutex m;
  auto started = net::server::start(o, [&](const net::request& req, net::responder respond) {
    if (req.target == "/stream") {
      net::response r;
      r.content_type = "text/event-stream";
      r.on_stream = [&](std::shared_ptr<net::event_stream> s) {
        std::lock_guard lock(m);
        streams.push_back(std::move(s));
      };
      return respond(std::move(r));
    }
    respond(net::response{200, "text/plain", "ok", {}});
  });
  ASSERT_TRUE(started) << started.error();
  auto& server = **started;
  // Two streams are served (their headers come back), the third is refused.
  std::vector<int> open;
  for (int i = 0; i < 3; ++i) {
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    send_all(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(status_of(fd), i < 2 ? 200 : 503) << "stream " << i;
    open.push_back(fd);
  }
  ::close(open.back());
  open.pop_back();
  // With 2 stream connections open, 6 more fill the cap of 8; the next is answered 503.
  for (int i = 0; i < 6; ++i) {
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    send_all(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(status_of(fd), 200) << "connection " << i;  // answered, and kept alive: still counted
    open.push_back(fd);
  }
  const int over = connect_to(server.port());
  ASSERT_GE(over, 0);
  EXPECT_EQ(status_of(over), 503);
  ::close(over);
  // One leaves: a new one is served again.
  ::close(open.back());
  open.pop_back();
  EXPECT_TRUE(test::wait_until(
      [&] {
        const int fd = connect_to(server.port());
        send_all(fd, "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        const int s = status_of(fd);
        ::close(fd);
        return s == 200;
      },
      30s));
  for (int fd : open)
    ::close(fd);
  server.stop();
}

}  // namespace

// net::client (the benchmarks' client) keeps one connection for many requests, and makes a
// new one when the server ends the kept one (its keep-alive limit), without losing a request.
TEST(HttpClient, KeepsOneConnectionAndReconnectsWhenTheServerEndsIt) {
  net::server_options o;
  o.listen = "127.0.0.1:0";
  o.max_requests_per_connection = 3;
  std::atomic<int> served{0};
  auto started = net::server::start(o, [&](const net::request& req, net::responder respond) {
    ++served;
    respond(net::response{200, "text/plain", "echo " + req.body, {}});
  });
  ASSERT_TRUE(started) << started.error();
  auto& server = **started;
  net::client c("127.0.0.1", std::to_string(server.port()));
  for (int i = 0; i < 7; ++i) {
    const auto r = c.request("POST", "/x", std::to_string(i));
    ASSERT_EQ(r.status, 200) << i << ": " << r.error;
    EXPECT_EQ(r.body, "echo " + std::to_string(i));
  }
  EXPECT_EQ(served.load(), 7);
  EXPECT_EQ(c.connections(), 3u) << "3 requests a connection: 7 take 3";
  net::client nowhere("127.0.0.1", "1");
  const auto refused = nowhere.request("GET", "/");
  EXPECT_EQ(refused.status, 0);
  EXPECT_NE(refused.error.find("connect"), std::string::npos) << refused.error;
  server.stop();
}
