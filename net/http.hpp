#pragma once
// HTTP/1.1 over Boost.Beast, behind plain structs: nothing outside net/http.cpp sees Beast.
// The server runs one I/O thread; a handler may answer later, from any thread.

#include "base/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace engram::net {

struct request {
  std::string method;
  /// Path and query, as sent.
  std::string target;
  /// Header names lower-cased.
  std::map<std::string, std::string> headers;
  std::string body;
};

/// A server-sent event stream (text/event-stream) kept open after its response's header:
/// the handler's owner sends events on it from any thread until the client goes away.
class event_stream {
public:
  virtual ~event_stream() = default;
  /// Queues one event ("event: message", "data: <data>"); false once the client has gone.
  virtual bool send(const std::string& data) = 0;
  /// Ends the stream once what was queued is written (the last chunk): the client sees the
  /// server close it. send() is refused from then on.
  virtual void finish() = 0;
  [[nodiscard]] virtual bool open() const = 0;
};

struct response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// Set: the response is an event stream (the body is ignored; the header is sent with
  /// chunked transfer and the connection stays open). Called once the header is written;
  /// keep a weak_ptr: the stream lives while the client stays.
  std::function<void(std::shared_ptr<event_stream>)> on_stream = {};
};

/// Sends the response; call exactly once, from any thread.
using responder = std::function<void(response)>;
using handler = std::function<void(const request&, responder)>;

struct server_options {
  /// "host:port"; port 0 picks a free one (see port()).
  std::string listen = "127.0.0.1:8700";
  /// Larger request bodies get 413. Default: 4 MiB.
  std::size_t body_limit = 4u << 20;
  /// A request's header (request line included) larger than this gets 431. Default: 16 KiB.
  std::size_t header_limit = 16u << 10;
  /// A request's header must arrive within this time of the connection being ready for it
  /// (after it opened, or after the previous response): slow or idle clients are dropped.
  /// Default: 10 s.
  std::chrono::seconds header_timeout{10};
  /// The whole request (header and body) must arrive within this time. Default: 30 s.
  std::chrono::seconds read_timeout{30};
  /// Connections served at once; one more is answered 503 and closed. Default: 1024.
  std::size_t max_connections = 1024;
  /// Requests on one keep-alive connection; the last is answered with Connection: close.
  /// Default: 1000.
  std::size_t max_requests_per_connection = 1000;
  /// Event streams open at once (GET /mcp, /v1/events); one more is answered 503. Default: 256.
  std::size_t max_event_streams = 256;
};

class server {
public:
  /// Binds and listens without serving yet: port() is known (the one the kernel chose for
  /// port 0), and connections wait in the kernel's queue until serve(). An error when it
  /// cannot bind.
  [[nodiscard]] static engram::result<std::unique_ptr<server>> bind(const server_options& opts);
  /// bind(), then serve(h).
  [[nodiscard]] static engram::result<std::unique_ptr<server>> start(const server_options& opts, handler h);
  virtual ~server() = default;
  /// Starts accepting connections and answering them with `h`, on the server's I/O thread.
  /// Once; a second call is ignored.
  virtual void serve(handler h) = 0;
  /// Stops accepting, closes connections and joins the I/O thread. Idempotent; a bound
  /// server that never served just closes its socket.
  virtual void stop() = 0;
  [[nodiscard]] virtual std::uint16_t port() const = 0;
};

struct client_result {
  /// 0 when no response arrived; then `error` says why.
  int status = 0;
  std::string body;
  std::string content_type;
  /// The answer's Server-Timing header: engramd gives its own time, "app;dur=<ms>".
  std::string server_timing;
  /// The answer's Retry-After header ("" when absent).
  std::string retry_after;
  std::string error;
};

/// Blocking HTTP/1.1 requests over one kept-alive connection to `host`:`port` (benchmarks,
/// tools): it connects at the first request, and again when the server has closed the
/// connection (a request that found it closed before any answer is sent once more on a new
/// one). One per thread.
class client {
public:
  client(std::string host, std::string port);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;
  [[nodiscard]] client_result request(const std::string& method, const std::string& target,
                                      const std::string& body = {},
                                      const std::map<std::string, std::string>& headers = {},
                                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Connections made so far (1 when every request kept the first).
  [[nodiscard]] std::size_t connections() const;

private:
  struct state;
  std::unique_ptr<state> st_;
};

/// A blocking HTTP/1.1 request to "http://host:port/path" (tools, tests, and a clustered
/// member forwarding a request to the owner of its organisation): one connection, sent once
/// (never resent: a lost answer is an error, never a second save).
[[nodiscard]] client_result fetch(const std::string& method, const std::string& url, const std::string& body = {},
                                  const std::map<std::string, std::string>& headers = {},
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Follows an event stream: GET `url` with `headers` (a clustered member relaying GET /mcp or
/// /v1/events to the owner of its organisation). `on_head` is called once the answer's header
/// has arrived, with its status, content type and Retry-After; when the answer is no event
/// stream (not 200 text/event-stream) its body too, and nothing follows. Otherwise each
/// event's data (its "data:" lines, joined by newlines) goes to `on_event` until the server
/// ends the stream, the connection fails, or `keep_going()` is false (asked every 200 ms).
/// `timeout` bounds the connection and the header only. Blocking; returns why the stream
/// ended ("" when the server ended it), or why no answer came (then `on_head` was not called).
[[nodiscard]] std::string follow_events(const std::string& url, const std::map<std::string, std::string>& headers,
                                        std::chrono::milliseconds timeout,
                                        const std::function<void(const client_result&)>& on_head,
                                        const std::function<void(const std::string&)>& on_event,
                                        const std::function<bool()>& keep_going);

}  // namespace engram::net
