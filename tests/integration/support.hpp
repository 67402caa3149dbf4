#pragma once
// Helpers for integration tests: temporary directories, a real Kafka-protocol broker
// (librdkafka's mock cluster), raw produce/consume, child processes, HTTP polling.

#include "actors/ingest/embedded_broker.hpp"
#include "base/sanitizers.hpp"
#include "config/config.hpp"
#include "evaluation/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

namespace engram::test {

/// A fresh directory, removed on destruction.
class temp_dir {
public:
  explicit temp_dir(const std::string& tag);
  ~temp_dir();
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// The test broker with the four default topics, `partitions` each. When it stops, every
/// partition must still start at offset 0 (the broker drops records past ~5 MiB a partition):
/// a test that ran past that limit fails, unless it said so with expect_truncated().
std::unique_ptr<ingest::embedded_broker> start_broker(int partitions = 4);

/// Declares that `topic` partition `partition` of `broker` drops records on purpose.
void expect_truncated(const ingest::embedded_broker& broker, const std::string& topic, std::int32_t partition);

/// Fails the test for each partition of the broker at `brokers` that no longer starts at
/// offset 0, except the `expected` (topic, partition) pairs: the guard for a broker in
/// another process (engramctl devbroker).
void expect_untruncated(const std::string& brokers,
                        const std::set<std::pair<std::string, std::int32_t>>& expected = {});

struct record {
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::string key;
  std::string value;
  std::map<std::string, std::string> headers;
};

/// Produces raw values (key each, with `headers`) and waits for acknowledgement; fails the
/// test otherwise.
void produce_raw(const std::string& brokers, const std::string& topic,
                 const std::vector<std::pair<std::string, std::string>>& key_values,
                 const std::vector<std::pair<std::string, std::string>>& headers = {});

/// Reads every partition of `topic` from the beginning until `expected` records arrived
/// or `timeout` passed; returns what arrived.
std::vector<record> consume_all(const std::string& brokers, const std::string& topic, std::size_t expected,
                                std::chrono::milliseconds timeout);

/// Sum of the high-water marks of a topic's partitions.
std::int64_t topic_size(const std::string& brokers, const std::string& topic);

/// topic_size() with one client kept open: cheap enough to poll every few milliseconds.
class topic_watch {
public:
  topic_watch(const std::string& brokers, std::string topic);
  ~topic_watch();
  [[nodiscard]] std::int64_t size();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// `n` deterministic, valid inbound events of organisations "acme", "globex", "initech".
inline std::vector<std::string> make_events(std::size_t n) { return evaluation::synthetic::events(n); }
inline std::string org_of(const std::string& event_json) { return evaluation::synthetic::organization_of(event_json); }

/// Polls `pred` every `poll` until true or `timeout`; returns the last value.
bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(50));

/// The value of an unlabelled Prometheus counter or gauge in engramd's /metrics (-1 when
/// engramd does not answer or has no such series).
double metric(std::uint16_t port, const std::string& name);

/// A port of 127.0.0.1 that refuses every connection while this lives: bound, never
/// listening, so nothing else takes it.
class refusing_port {
public:
  refusing_port();
  ~refusing_port();
  refusing_port(const refusing_port&) = delete;
  refusing_port& operator=(const refusing_port&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }

private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// Config for an engine against `brokers`, store in `data_dir`, samples off, short
/// session timeout (fast rejoin after a kill), HTTP on `port` (0 = any).
/// The converted sentence encoder tools/dev.sh setup installs.
inline constexpr const char* model_path = ENGRAM_SOURCE_DIR "/.cache/models/use-lite-en.bin";

/// Runs a shell command; returns its exit status and combined output.
int run(const std::string& cmd, std::string* out);

config::engram_config test_config(const std::string& brokers, const std::string& data_dir, std::uint16_t port = 0);

/// The admin token every engramd of engramd_args() and test_config() accepts (organisation
/// "ops", scope admin): /v1/stats with every organisation's rows.
inline constexpr const char* admin_token = "engram-test-admin-token-0123456789abcdef";
/// It as one auth.tokens item (YAML flow style).
inline constexpr const char* admin_grant =
    "{token: engram-test-admin-token-0123456789abcdef, organization_id: ops, scopes: [admin], name: ops}";

/// GET http://127.0.0.1:port/path with `token` as bearer (none when empty); returns the
/// body, or "" when unreachable.
std::string get(std::uint16_t port, const std::string& path, int* status = nullptr,
                const std::string& token = admin_token);

/// engramd's command line for a child process against `brokers`: the embedded default
/// config, store in `data_dir`, samples off, HTTP on a port the kernel chooses
/// (127.0.0.1:0; test::engramd learns which), a short Kafka session (a killed member leaves
/// its group fast), the admin token, then `--set` each of `sets` ("key=value"; an
/// "auth.tokens=[...]" gets the admin token added to its list).
std::vector<std::string> engramd_args(const std::string& brokers, const std::string& data_dir,
                                      const std::vector<std::string>& sets = {});

/// True when GET /readyz answers 200.
bool ready(std::uint16_t port);

/// True once engramd's /v1/stats shows engram-log partitions assigned to it (live lag).
bool assigned(std::uint16_t port);

/// Events applied according to engramd's /v1/stats (every organisation), or -1 when
/// engramd does not answer.
long events_applied(std::uint16_t port);

/// The digest of the store in `data_dir` (opened read-only); empty when it cannot be opened.
std::string digest_of(const std::string& data_dir);

/// An MCP tools/call over HTTP with a bearer token: the tool's structuredContent, or
/// {"error": text} for a tool error (isError) and {"error": body} for anything else.
nlohmann::json mcp_call(std::uint16_t port, const std::string& token, const std::string& tool,
                        const nlohmann::json& args);

/// The tool names tools/list announces to `token` (empty when engramd does not answer).
std::set<std::string> listed_tools(std::uint16_t port, const std::string& token);

/// recall_knowledge's result ids, best first (at most 20); a tool error fails the test.
std::vector<std::string> recall_ids(std::uint16_t port, const std::string& token, const std::string& query,
                                    nlohmann::json extra = nlohmann::json::object());

/// True when `id` (a JSON string) is among `ids`.
bool has_id(const std::vector<std::string>& ids, const nlohmann::json& id);

/// A child process, with stdout and stderr appended to a log file.
class child {
public:
  child(const std::vector<std::string>& argv, const std::string& log_file);
  virtual ~child();
  void kill9();
  /// Sends SIGTERM and waits up to `timeout`; returns the exit status, or -1 on timeout.
  int terminate(std::chrono::milliseconds timeout);
  [[nodiscard]] bool alive();
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Once it has ended (alive() said false, or terminate() returned): its exit status, or 128
  /// + the signal that ended it; -1 before.
  [[nodiscard]] int exit_code() const { return exit_code_; }

private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

/// engramd as a child process: `argv` (engramd_args(), or any engramd command line) with
/// `--port-file` added, output appended to `log_file`. Each start gets a port of its own,
/// so a restarted engramd is asked for its port again.
class engramd : public child {
public:
  engramd(const std::vector<std::string>& argv, const std::string& log_file);
  /// The HTTP port it serves on, from its port file once it has started: waits up to
  /// `timeout`; 0 when it ended first or did not start in time.
  std::uint16_t port(std::chrono::milliseconds timeout = std::chrono::seconds(120));

private:
  std::string port_file_;
  std::uint16_t port_ = 0;
};

/// engramctl kg apply of the sample bundle (tools/samples/kg/ecommerce-catalog,
/// "ecommerce-catalog-example") to organisation acme of the engramd at `port`, with `token`;
/// its exit status, its output in `out`.
/// `options` go to engramctl kg apply as they are (" --timeout 20").
int apply_sample_bundle(const std::string& brokers, std::uint16_t port, const std::string& token, std::string* out,
                        const std::string& options = "");

/// Whether this build runs under a sanitizer (tools/dev.sh sanitize; the engramd the test
/// starts is from the same tree).
inline constexpr bool sanitized = sanitized_build;

/// A file's whole content ("" when it cannot be read).
std::string file_text(const std::string& path);

/// The last `lines` lines of a file, for failure messages.
std::string tail(const std::string& file, std::size_t lines = 40);

}  // namespace engram::test
