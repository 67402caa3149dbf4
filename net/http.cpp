// The one translation unit that includes Boost.Beast (it dominates build time).
#include "net/http.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace engram::net {

namespace {
/// The "http" module logger once engramd has set logging up (logging/log.hpp), else
/// spdlog's default (tools and tests that only fetch).
spdlog::logger& logger() {
  auto l = spdlog::get("http");
  return l ? *l : *spdlog::default_logger();
}

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct endpoint_parts {
  std::string host;
  std::string port;
};

std::optional<endpoint_parts> split_host_port(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return std::nullopt;
  auto host = s.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return endpoint_parts{host, s.substr(colon + 1)};
}

/// What the server counts across its sessions: connections and event streams open now; and
/// whether it is stopping (a request read then is dropped, not handled).
struct load {
  std::atomic<std::size_t> connections{0}, streams{0};
  std::atomic<bool> stopping{false};
  /// Work posted to a session from other threads (a response, an event) goes through post()
  /// so that none is queued once the server has stopped: nothing would run it, and it would
  /// keep its session, and the io_context, alive forever.
  std::mutex post_mutex;
  bool stopped = false;

  template <class Executor, class Work>
  void post(const Executor& ex, Work&& work) {
    std::lock_guard lock(post_mutex);
    if (!stopped)
      boost::asio::post(ex, std::forward<Work>(work));
  }
};

class session : public std::enable_shared_from_this<session>, public event_stream {
public:
  session(tcp::socket socket, std::shared_ptr<asio::io_context> ioc, const handler& h, const server_options& o,
          std::shared_ptr<load> counts)
      : ioc_(std::move(ioc)), stream_(std::move(socket)), handler_(h), opts_(o), load_(std::move(counts)) {
    ++load_->connections;
  }
  ~session() override {
    --load_->connections;
    if (streaming_)
      --load_->streams;
  }

  void run() {
    asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&session::do_read, shared_from_this()));
  }

  /// Over the connection cap: 503 and close, without reading a request.
  void refuse() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->keep_alive_ = false;
      self->do_write(response{503, "application/json", R"({"error":"too many connections"})", {{"Retry-After", "1"}}});
    });
  }

  bool send(const std::string& data) override {
    if (closed_)
      return false;
    std::string event = "event: message\ndata: " + data + "\n\n";
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", event.size());
    load_->post(stream_.get_executor(), [self = shared_from_this(), chunk = size + event + "\r\n"]() mutable {
      self->queue_.push_back(std::move(chunk));
      if (self->queue_.size() == 1)
        self->write_queued();
    });
    return true;
  }
  void finish() override {
    if (closed_.exchange(true))
      return;
    load_->post(stream_.get_executor(), [self = shared_from_this()] {
      self->finishing_ = true;
      self->queue_.push_back("0\r\n\r\n");
      if (self->queue_.size() == 1)
        self->write_queued();
    });
  }
  bool open() const override { return !closed_; }

  /// When the server stops, with its I/O thread joined: closes the connection (its timer
  /// too), so the operations waiting on it complete (aborted) and let go of the session.
  /// Without this the session, its pending operations and the io_context it keeps alive
  /// would hold each other forever.
  void close_now() {
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

private:
  void do_read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(opts_.header_limit));
    parser_->body_limit(opts_.body_limit);
    // The header first, within its own (shorter) time; then the rest within the request's.
    read_started_ = std::chrono::steady_clock::now();
    stream_.expires_after(opts_.header_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             beast::bind_front_handler(&session::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t) {
    if (load_->stopping)
      return;
    if (ec == bhttp::error::end_of_stream)
      return do_close();
    if (ec == bhttp::error::header_limit) {
      keep_alive_ = false;
      draining_ = true;
      return do_write(
          response{431,
                   "application/json",
                   R"({"error":"request header larger than )" + std::to_string(opts_.header_limit) + R"( bytes"})",
                   {}});
    }
    if (ec == bhttp::error::body_limit)  // a Content-Length past the limit is known from the header
      return refuse_body();
    if (ec)
      return;  // timeout, reset or garbage: drop the connection
    stream_.expires_at(read_started_ + opts_.read_timeout);
    bhttp::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (load_->stopping)
      return;  // the server is stopping: not handled, the connection goes
    if (ec == bhttp::error::end_of_stream)
      return do_close();
    if (ec == bhttp::error::body_limit)
      return refuse_body();
    if (ec)
      return;  // timeout, reset or garbage: drop the connection
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive() && ++requests_ < opts_.max_requests_per_connection;
    version_ = req.version();
    request r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    for (const auto& f : req) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      r.headers[name] = std::string(f.value());
    }
    r.body = std::move(req.body());
    stream_.expires_never();  // the handler may take its time; the response write re-arms
    auto self = shared_from_this();
    auto answered = std::make_shared<std::atomic<bool>>(false);
    auto respond = [self, answered, read = std::chrono::steady_clock::now()](response res) {
      answered->store(true);
      // The server's own time for this request (read to answer ready), for clients to tell
      // it from the network's and their own (W3C Server-Timing).
      if (!res.on_stream) {
        char timing[48];
        std::snprintf(timing, sizeof timing, "app;dur=%.3f",
                      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - read).count());
        res.headers.emplace_back("Server-Timing", timing);
      }
      self->load_->post(self->stream_.get_executor(),
                        [self, res = std::move(res)]() mutable { self->do_write(std::move(res)); });
    };
    // A handler that throws is a bug; it costs its request a 500, never the server.
    try {
      handler_(r, respond);
    } catch (const std::exception& e) {
      logger().error("{} {}: the handler failed: {}", r.method, r.target.substr(0, 200), e.what());
      if (!answered->load())
        respond(response{500, "application/json", "{\"error\":\"internal error, logged\"}", {}});
    }
  }

  /// 413, then the connection is drained and closed.
  void refuse_body() {
    keep_alive_ = false;
    draining_ = true;
    do_write(response{413,
                      "application/json",
                      R"({"error":"request body larger than )" + std::to_string(opts_.body_limit) + R"( bytes"})",
                      {}});
  }

  void do_write(response r) {
    if (r.on_stream) {
      if (++load_->streams > opts_.max_event_streams) {
        --load_->streams;
        keep_alive_ = false;
        return do_write(
            response{503, "application/json", R"({"error":"too many event streams open"})", {{"Retry-After", "1"}}});
      }
      streaming_ = true;
      return start_stream(std::move(r));
    }
    res_ = {};
    res_.version(version_);
    res_.result(static_cast<unsigned>(r.status));
    res_.set(bhttp::field::server, "engramd");
    res_.set(bhttp::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers)
      res_.set(k, v);
    res_.keep_alive(keep_alive_);
    res_.body() = std::move(r.body);
    res_.prepare_payload();
    stream_.expires_after(opts_.read_timeout);
    bhttp::async_write(stream_, res_, beast::bind_front_handler(&session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec)
      return;
    if (draining_)
      return do_drain();
    if (!keep_alive_)
      return do_close();
    do_read();
  }

  /// After refusing a body: stop sending, then read and drop what the client still sends
  /// (bounded in time and bytes), so closing does not reset the connection before the client
  /// has read the answer.
  void do_drain() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(5));
    drain_step();
  }

  void drain_step() {
    stream_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ > (64u << 20)) {
        beast::error_code ignored;
        self->stream_.socket().close(ignored);
        return;
      }
      self->drain_step();
    });
  }

  /// An event stream: the header by hand (chunked), then only events; reading on to learn when
  /// the client goes (a stream request has no further requests on its connection).
  void start_stream(response r) {
    std::string head = "HTTP/1.1 " + std::to_string(r.status) +
                       " OK\r\nServer: engramd\r\nContent-Type: " + r.content_type +
                       "\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
    for (const auto& [k, v] : r.headers)
      head += k + ": " + v + "\r\n";
    queue_.push_back(head + "\r\n");
    stream_.expires_never();
    write_queued();
    watch_close();
    r.on_stream(std::shared_ptr<event_stream>(shared_from_this(), static_cast<event_stream*>(this)));
  }

  void write_queued() {
    asio::async_write(stream_.socket(), asio::buffer(queue_.front()),
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) {
                          self->closed_ = true;
                          return;
                        }
                        self->queue_.pop_front();
                        if (!self->queue_.empty())
                          self->write_queued();
                        else if (self->finishing_) {  // the last chunk is out: the client closes
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                        }
                      });
  }

  void watch_close() {
    stream_.socket().async_read_some(
        asio::buffer(scratch_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) {
            self->closed_ = true;
            beast::error_code ignored;
            self->stream_.socket().close(ignored);
            return;
          }
          self->watch_close();  // a client does not send on a stream; anything it does is dropped
        });
  }

  void do_close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);  // the peer may be gone already
  }

  std::shared_ptr<asio::io_context> ioc_;  // outlives every session that may still be posted to
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> res_;
  const handler& handler_;
  const server_options& opts_;
  std::shared_ptr<load> load_;
  std::chrono::steady_clock::time_point read_started_;
  std::size_t requests_ = 0;
  bool streaming_ = false;
  bool draining_ = false;
  std::size_t drained_ = 0;
  std::array<char, 16384> scratch_{};
  bool keep_alive_ = true;
  unsigned version_ = 11;
  /// Event stream: chunks waiting to be written (the strand's only), and whether the client left.
  std::deque<std::string> queue_;
  std::atomic<bool> closed_{false};
  bool finishing_ = false;
};

class beast_server final : public server {
public:
  explicit beast_server(server_options opts)
      : opts_(std::move(opts)), ioc_(std::make_shared<asio::io_context>(1)), acceptor_(asio::make_strand(*ioc_)) {}

  ~beast_server() override { stop(); }

  engram::result<void> listen() {
    auto parts = split_host_port(opts_.listen);
    if (!parts)
      return engram::fail("http.listen: expected host:port, got '" + opts_.listen + "'");
    beast::error_code ec;
    auto addr = asio::ip::make_address(parts->host, ec);
    if (ec)
      return engram::fail("http.listen: '" + parts->host + "' is not an IP address");
    tcp::endpoint ep(addr, static_cast<unsigned short>(std::stoul(parts->port)));
    acceptor_.open(ep.protocol(), ec);
    if (!ec)
      acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec)
      acceptor_.bind(ep, ec);
    if (!ec)
      acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return engram::fail("http: cannot listen on " + opts_.listen + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    return {};
  }

  void serve(handler h) override {
    if (serving_ || stopped_)
      return;
    serving_ = true;
    handler_ = std::move(h);
    do_accept();
    thread_ = std::thread([this] { ioc_->run(); });
  }

  void stop() override {
    if (stopped_.exchange(true))
      return;
    asio::post(acceptor_.get_executor(), [this] {
      beast::error_code ec;
      acceptor_.close(ec);
    });
    load_->stopping = true;
    ioc_->stop();
    if (thread_.joinable())
      thread_.join();
    // The I/O thread is gone: close what is still open and run what that completes (aborted
    // reads, writes and timers), so every session is freed with its io_context.
    for (auto& weak : sessions_)
      if (auto s = weak.lock())
        s->close_now();
    sessions_.clear();
    ioc_->restart();
    ioc_->poll();
    {
      std::lock_guard lock(load_->post_mutex);
      load_->stopped = true;
    }
    ioc_->poll();  // what was posted before that
  }

  std::uint16_t port() const override { return port_; }

private:
  void do_accept() {
    acceptor_.async_accept(asio::make_strand(*ioc_), [this](beast::error_code ec, tcp::socket socket) {
      if (load_->stopping)
        return;  // accepted as the server stops: the socket closes as it goes
      if (ec) {
        if (ec != asio::error::operation_aborted)
          logger().warn("accept failed: {}", ec.message());
        if (!acceptor_.is_open())
          return;
      } else {
        auto s = std::make_shared<session>(std::move(socket), ioc_, handler_, opts_, load_);
        if (load_->connections > opts_.max_connections)  // this one counted
          s->refuse();
        else
          s->run();
        track(s);
      }
      do_accept();
    });
  }

  /// Keeps a weak reference to every session for stop(); forgets the ended ones now and then.
  void track(const std::shared_ptr<session>& s) {
    sessions_.push_back(s);
    if (sessions_.size() >= next_prune_) {
      std::erase_if(sessions_, [](const std::weak_ptr<session>& w) { return w.expired(); });
      next_prune_ = 2 * sessions_.size() + 64;
    }
  }

  server_options opts_;
  handler handler_;
  std::shared_ptr<asio::io_context> ioc_;
  /// The I/O thread's only (and stop()'s once it is joined).
  std::vector<std::weak_ptr<session>> sessions_;
  std::size_t next_prune_ = 64;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  bool serving_ = false;
  std::uint16_t port_ = 0;
  std::shared_ptr<load> load_ = std::make_shared<load>();
};

}  // namespace

engram::result<std::unique_ptr<server>> server::bind(const server_options& opts) {
  auto s = std::make_unique<beast_server>(opts);
  if (auto listening = s->listen(); !listening)
    return engram::fail(listening.error());
  return std::unique_ptr<server>(std::move(s));
}

engram::result<std::unique_ptr<server>> server::start(const server_options& opts, handler h) {
  auto s = bind(opts);
  if (s)
    (*s)->serve(std::move(h));
  return s;
}

struct client::state {
  std::string host, port;
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  std::size_t connections = 0;
};

client::client(std::string host, std::string port) : st_(std::make_unique<state>()) {
  st_->host = std::move(host);
  st_->port = std::move(port);
}

client::~client() {
  if (st_->stream) {
    beast::error_code ignored;
    st_->stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
}

std::size_t client::connections() const { return st_->connections; }

client_result client::request(const std::string& method, const std::string& target, const std::string& body,
                              const std::map<std::string, std::string>& headers, std::chrono::milliseconds timeout) {
  auto& s = *st_;
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, s.host + ":" + s.port);
  req.set(bhttp::field::user_agent, "engram");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  client_result out;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool fresh = !s.stream;
    out = {};
    beast::error_code ec;
    if (fresh) {
      tcp::resolver resolver(s.ioc);
      auto endpoints = resolver.resolve(s.host, s.port, ec);
      if (ec) {
        out.error = "resolve " + s.host + ": " + ec.message();
        return out;
      }
      s.stream.emplace(s.ioc);
      s.stream->expires_after(timeout);
      s.stream->async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
      s.ioc.run();
      s.ioc.restart();
      if (ec) {
        s.stream.reset();
        out.error = "connect " + s.host + ":" + s.port + ": " + ec.message();
        return out;
      }
      ++s.connections;
      s.buffer.clear();
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64u << 20);
    s.stream->expires_after(timeout);
    bhttp::async_write(*s.stream, req, [&](beast::error_code e, std::size_t) {
      if ((ec = e))
        return;
      s.stream->expires_after(timeout);
      bhttp::async_read(*s.stream, s.buffer, parser, [&](beast::error_code e2, std::size_t) { ec = e2; });
    });
    s.ioc.run();
    s.ioc.restart();
    if (!ec) {
      auto& res = parser.get();
      out.status = static_cast<int>(res.result_int());
      out.body = std::move(res.body());
      out.content_type = std::string(res[bhttp::field::content_type]);
      out.server_timing = std::string(res["Server-Timing"]);
      if (!res.keep_alive())
        s.stream.reset();
      return out;
    }
    s.stream.reset();
    out.error = method + " " + target + ": " + ec.message();
    // A kept connection the server had closed: once more on a new one.
    if (fresh || parser.got_some())
      return out;
  }
  return out;
}

namespace {

struct url_parts {
  std::string hostport;
  endpoint_parts endpoint;
  std::string target;
};

/// "http://host:port/path": its parts, or an error.
engram::result<url_parts> split_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    return engram::fail("only http:// URLs are supported: " + url);
  url_parts out;
  auto rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  out.hostport = rest.substr(0, slash);
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  auto parts = split_host_port(out.hostport);
  out.endpoint = parts ? *parts : endpoint_parts{out.hostport, "80"};
  return out;
}

/// Where an event stream's text stands: complete events go out, the rest waits.
class event_reader {
public:
  explicit event_reader(const std::function<void(const std::string&)>& on_event) : on_event_(on_event) {}
  void feed(const char* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      if (data[i] != '\r')
        pending_ += data[i];
    for (auto end = pending_.find("\n\n"); end != std::string::npos; end = pending_.find("\n\n")) {
      event(std::string_view(pending_).substr(0, end + 1));
      pending_.erase(0, end + 2);
    }
  }

private:
  void event(std::string_view block) {
    std::string data;
    bool any = false;
    for (auto nl = block.find('\n'); nl != std::string_view::npos; nl = block.find('\n')) {
      auto line = block.substr(0, nl);
      block.remove_prefix(nl + 1);
      if (line.rfind("data:", 0) != 0)
        continue;  // event:, id:, retry: and comments
      line.remove_prefix(5);
      if (!line.empty() && line.front() == ' ')
        line.remove_prefix(1);
      if (any)
        data += '\n';
      data.append(line);
      any = true;
    }
    if (any)
      on_event_(data);
  }
  const std::function<void(const std::string&)>& on_event_;
  std::string pending_;
};

}  // namespace

std::string follow_events(const std::string& url, const std::map<std::string, std::string>& headers,
                          std::chrono::milliseconds timeout, const std::function<void(const client_result&)>& on_head,
                          const std::function<void(const std::string&)>& on_event,
                          const std::function<bool()>& keep_going) {
  auto parts = split_url(url);
  if (!parts)
    return parts.error();
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  bhttp::request<bhttp::empty_body> req{bhttp::verb::get, parts->target, 11};
  req.set(bhttp::field::host, parts->hostport);
  req.set(bhttp::field::user_agent, "engram");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);  // a stream has no end in view
  beast::error_code ec;
  auto endpoints = resolver.resolve(parts->endpoint.host, parts->endpoint.port, ec);
  if (ec)
    return "GET " + url + ": resolve: " + ec.message();
  // One step at a time, each asked to keep going every 200 ms; false: the connection closes.
  bool done = false;
  auto step = [&]() -> bool {
    while (!done) {
      ioc.run_for(std::chrono::milliseconds(200));
      if (!done && !keep_going()) {
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream.close();
        ioc.restart();
        ioc.run();  // the aborted operation
        return false;
      }
    }
    ioc.restart();
    done = false;
    return true;
  };
  const char* what = "connect";
  stream.expires_after(timeout);
  stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) {
    if ((ec = e))
      return void(done = true);
    what = "write";
    bhttp::async_write(stream, req, [&](beast::error_code e2, std::size_t) {
      if ((ec = e2))
        return void(done = true);
      what = "read";
      bhttp::async_read_header(stream, buffer, parser, [&](beast::error_code e3, std::size_t) {
        ec = e3;
        done = true;
      });
    });
  });
  if (!step())
    return "GET " + url + ": given up before an answer";
  if (ec)
    return "GET " + url + ": " + what + ": " + ec.message();
  stream.expires_never();
  // A stream may be silent for long: TCP keepalive probes notice a peer that vanished
  // without closing (a machine lost) within about a minute (30 s idle, 3 probes 10 s apart).
  {
    const int fd = stream.socket().native_handle();
    const int on = 1, idle = 30, interval = 10, count = 3;
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  }
  client_result head;
  head.status = static_cast<int>(parser.get().result_int());
  head.content_type = std::string(parser.get()[bhttp::field::content_type]);
  head.retry_after = std::string(parser.get()[bhttp::field::retry_after]);
  const bool events = head.status == 200 && head.content_type.rfind("text/event-stream", 0) == 0;
  if (events)
    on_head(head);
  event_reader reader(on_event);
  std::array<char, 8192> chunk{};
  // The body: a whole answer's (capped), or the events as they come.
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    if (!events)
      stream.expires_after(timeout);
    bhttp::async_read_some(stream, buffer, parser, [&](beast::error_code e, std::size_t) {
      ec = e == bhttp::error::need_buffer ? beast::error_code{} : e;
      done = true;
    });
    if (!step())
      return "GET " + url + ": given up";
    const auto n = chunk.size() - parser.get().body().size;
    if (events)
      reader.feed(chunk.data(), n);
    else if (head.body.size() < (1u << 20))
      head.body.append(chunk.data(), n);
    if (ec)
      break;
  }
  if (!events) {
    if (ec)
      return "GET " + url + ": read: " + ec.message();
    on_head(head);
    return "";
  }
  return ec && ec != bhttp::error::end_of_stream ? "GET " + url + ": read: " + ec.message() : "";
}

client_result fetch(const std::string& method, const std::string& url, const std::string& body,
                    const std::map<std::string, std::string>& headers, std::chrono::milliseconds timeout) {
  client_result out;
  auto split = split_url(url);
  if (!split) {
    out.error = split.error();
    return out;
  }
  const auto& hostport = split->hostport;
  const auto& target = split->target;
  auto parts = std::optional<endpoint_parts>(split->endpoint);
  // Asynchronous operations, because beast::tcp_stream's timeouts apply to those only.
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, hostport);
  req.set(bhttp::field::user_agent, "engram");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64u << 20);
  auto fail = [&](const char* what, beast::error_code ec) {
    out.error = method + " " + url + ": " + what + ": " + ec.message();
  };
  beast::error_code rec;
  auto endpoints = resolver.resolve(parts->host, parts->port, rec);
  if (rec) {
    fail("resolve", rec);
    return out;
  }
  stream.expires_after(timeout);
  stream.async_connect(endpoints, [&](beast::error_code ec, const tcp::endpoint&) {
    if (ec)
      return fail("connect", ec);
    stream.expires_after(timeout);
    bhttp::async_write(stream, req, [&](beast::error_code ec, std::size_t) {
      if (ec)
        return fail("write", ec);
      stream.expires_after(timeout);
      bhttp::async_read(stream, buffer, parser, [&](beast::error_code ec, std::size_t) {
        if (ec)
          return fail("read", ec);
        auto& res = parser.get();
        out.status = static_cast<int>(res.result_int());
        out.body = std::move(res.body());
        out.content_type = std::string(res[bhttp::field::content_type]);
        out.server_timing = std::string(res["Server-Timing"]);
        out.retry_after = std::string(res[bhttp::field::retry_after]);
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);  // best effort
      });
    });
  });
  ioc.run();
  return out;
}

}  // namespace engram::net
