#include "tests/integration/support.hpp"

#include "actors/ingest/producer.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"
#include "storage/graph_store.hpp"

#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace engram::test {

using json = nlohmann::json;

temp_dir::temp_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  path_ = (std::filesystem::temp_directory_path() /
           ("engram-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
              .string();
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

temp_dir::~temp_dir() {
  // ENGRAM_TEST_KEEP=1 keeps the stores and logs (engramctl digest --dump to compare them).
  if (const char* keep = std::getenv("ENGRAM_TEST_KEEP"); keep && std::string_view(keep) == "1") {
    std::fprintf(stderr, "kept %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort
}

namespace {
std::mutex truncation_mutex;
/// Partitions each live test broker is expected to drop records of.
std::map<const ingest::embedded_broker*, std::set<std::pair<std::string, std::int32_t>>> truncation_expected;
}  // namespace

std::unique_ptr<ingest::embedded_broker> start_broker(int partitions) {
  auto b = ingest::embedded_broker::start(
      {"inbound-messages", "engram-log", "engram-reminders", "engram-dlq", "engram-keys"}, partitions);
  EXPECT_TRUE(b) << b.error();
  if (!b)
    return nullptr;
  (*b)->before_stop([](const ingest::embedded_broker& broker) {
    std::set<std::pair<std::string, std::int32_t>> expected;
    {
      std::lock_guard lock(truncation_mutex);
      expected = std::move(truncation_expected[&broker]);
      truncation_expected.erase(&broker);
    }
    expect_untruncated(broker.bootstrap(), expected);
  });
  return std::move(*b);
}

void expect_truncated(const ingest::embedded_broker& broker, const std::string& topic, std::int32_t partition) {
  std::lock_guard lock(truncation_mutex);
  truncation_expected[&broker].emplace(topic, partition);
}

void expect_untruncated(const std::string& brokers, const std::set<std::pair<std::string, std::int32_t>>& expected) {
  auto ranges = ingest::partition_ranges(brokers);
  ASSERT_TRUE(ranges) << "cannot check the test broker's partitions: " << ranges.error();
  for (const auto& r : *ranges)
    if (r.start > 0 && !expected.count({r.topic, r.partition}))
      ADD_FAILURE() << r.topic << " partition " << r.partition << " dropped its first " << r.start
                    << " records past the test broker's ~5 MiB limit: the test ran on less data than it "
                       "thinks (spread it over more partitions, make it smaller, or expect_truncated())";
}

void produce_raw(const std::string& brokers, const std::string& topic,
                 const std::vector<std::pair<std::string, std::string>>& key_values,
                 const std::vector<std::pair<std::string, std::string>>& headers) {
  auto made = ingest::kafka_producer::create(brokers, {});
  ASSERT_TRUE(made) << made.error();
  auto& p = *made;
  for (const auto& [k, v] : key_values)
    ASSERT_TRUE(p->produce(topic, k, v, headers)) << p->last_error();
  ASSERT_TRUE(p->flush(std::chrono::seconds(30))) << p->last_error();
}

namespace {

std::unique_ptr<RdKafka::KafkaConsumer> reader(const std::string& brokers) {
  static std::atomic<int> counter{0};
  std::string err;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  conf->set("bootstrap.servers", brokers, err);
  conf->set("group.id", "test-reader-" + std::to_string(::getpid()) + "-" + std::to_string(counter++), err);
  conf->set("enable.auto.commit", "false", err);
  conf->set("enable.partition.eof", "false", err);
  std::unique_ptr<RdKafka::KafkaConsumer> c(RdKafka::KafkaConsumer::create(conf.get(), err));
  EXPECT_TRUE(c) << err;
  return c;
}

std::vector<std::int32_t> partitions_of(RdKafka::KafkaConsumer& c, const std::string& topic) {
  std::string err;
  std::unique_ptr<RdKafka::Topic> t(RdKafka::Topic::create(&c, topic, nullptr, err));
  RdKafka::Metadata* md = nullptr;
  std::vector<std::int32_t> out;
  if (c.metadata(false, t.get(), &md, 5000) != RdKafka::ERR_NO_ERROR)
    return out;
  for (const auto* tm : *md->topics())
    for (const auto* pm : *tm->partitions())
      out.push_back(pm->id());
  delete md;
  return out;
}

}  // namespace

std::vector<record> consume_all(const std::string& brokers, const std::string& topic, std::size_t expected,
                                std::chrono::milliseconds timeout) {
  auto c = reader(brokers);
  std::vector<RdKafka::TopicPartition*> tps;
  for (auto p : partitions_of(*c, topic))
    tps.push_back(RdKafka::TopicPartition::create(topic, p, RdKafka::Topic::OFFSET_BEGINNING));
  c->assign(tps);
  RdKafka::TopicPartition::destroy(tps);
  std::vector<record> out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < expected && std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> msg(c->consume(100));
    if (msg->err() != RdKafka::ERR_NO_ERROR)
      continue;
    record r;
    r.partition = msg->partition();
    r.offset = msg->offset();
    if (msg->key())
      r.key = *msg->key();
    if (msg->payload())  // else a tombstone: empty
      r.value.assign(static_cast<const char*>(msg->payload()), msg->len());
    if (auto* hs = msg->headers())
      for (const auto& h : hs->get_all())
        r.headers[h.key()] = std::string(static_cast<const char*>(h.value()), h.value_size());
    out.push_back(std::move(r));
  }
  c->close();
  return out;
}

struct topic_watch::impl {
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::string topic;
  std::vector<std::int32_t> partitions;
};

topic_watch::topic_watch(const std::string& brokers, std::string topic) : impl_(std::make_unique<impl>()) {
  impl_->consumer = reader(brokers);
  impl_->topic = std::move(topic);
  impl_->partitions = partitions_of(*impl_->consumer, impl_->topic);
}

topic_watch::~topic_watch() { impl_->consumer->close(); }

std::int64_t topic_watch::size() {
  std::int64_t total = 0;
  for (auto p : impl_->partitions) {
    std::int64_t lo = 0, hi = 0;
    if (impl_->consumer->query_watermark_offsets(impl_->topic, p, &lo, &hi, 5000) == RdKafka::ERR_NO_ERROR)
      total += hi;
  }
  return total;
}

std::int64_t topic_size(const std::string& brokers, const std::string& topic) {
  return topic_watch(brokers, topic).size();
}

double metric(std::uint16_t port, const std::string& name) {
  const auto body = get(port, "/metrics");
  for (std::size_t at = body.find(name + " "); at != std::string::npos; at = body.find(name + " ", at + 1))
    if (at == 0 || body[at - 1] == '\n')
      return std::stod(body.substr(at + name.size() + 1));
  return -1;
}

bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout, std::chrono::milliseconds poll) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return pred();
    std::this_thread::sleep_for(poll);
  }
}

refusing_port::refusing_port() {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    ADD_FAILURE() << "refusing_port: cannot bind a socket on 127.0.0.1";
  port_ = ntohs(addr.sin_port);
}

refusing_port::~refusing_port() {
  if (fd_ >= 0)
    ::close(fd_);
}

int run(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p))
    *out += buf;
  int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

config::engram_config test_config(const std::string& brokers, const std::string& data_dir, std::uint16_t port) {
  config::engram_config cfg;
  cfg.kafka.brokers = brokers;
  cfg.kafka.rdkafka["session.timeout.ms"] = "6000";
  cfg.kafka.rdkafka["heartbeat.interval.ms"] = "500";
  cfg.storage.path = data_dir;
  cfg.samples.load = false;
  cfg.embedder.model_path = model_path;
  cfg.http.listen = "127.0.0.1:" + std::to_string(port);
  cfg.auth.tokens.push_back({admin_token, "ops", {"admin"}, "ops", {}});
  return cfg;
}

std::string get(std::uint16_t port, const std::string& path, int* status, const std::string& token) {
  std::map<std::string, std::string> headers;
  if (!token.empty())
    headers["Authorization"] = "Bearer " + token;
  auto r = net::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + path, {}, headers, std::chrono::seconds(5));
  if (status)
    *status = r.status;
  return r.status ? r.body : std::string();
}

std::vector<std::string> engramd_args(const std::string& brokers, const std::string& data_dir,
                                      const std::vector<std::string>& sets) {
  std::vector<std::string> a{
      ENGRAMD_PATH, "--config", std::string(ENGRAM_SOURCE_DIR) + "/config/engram.yaml", "--set",
      "kafka.brokers=" + brokers, "--set", "storage.path=" + data_dir, "--set", "samples.load=false", "--set",
      std::string("embedder.model_path=") + model_path, "--set", "http.listen=127.0.0.1:0",
      // A short session (a killed member's partitions move soon), but longer than the test
      // broker's 3 s window for a group's first join: librdkafka 2.0.2's mock broker drops a
      // member whose session ran out while it waits in that window, and with it the JoinGroup
      // answer (rdkafka_mock_cgrp.c); at 3000 the two timers race. The client asks again
      // only after max.poll.interval.ms + 3 s: 30 s here, not 300 s, in case an answer is
      // lost some other way.
      "--set", "kafka.rdkafka.session.timeout.ms=4000", "--set", "kafka.rdkafka.heartbeat.interval.ms=300", "--set",
      "kafka.rdkafka.max.poll.interval.ms=30000",
      // No timer round after the first (which finds an empty or
      // unready store): a round sends reminders at wall-clock
      // moments, each recorded on engram-log (a replay repeats it),
      // so two live runs of one input that last past a round differ
      // in them. Tests of the timers set their own interval.
      "--set", "timers.interval_ms=86400000"};
  bool tokens = false;
  for (auto kv : sets) {
    if (kv.rfind("auth.tokens=[", 0) == 0) {
      kv.insert(std::string("auth.tokens=[").size(), std::string(admin_grant) + (kv.ends_with("[]") ? "" : ", "));
      tokens = true;
    }
    a.push_back("--set");
    a.push_back(kv);
  }
  if (!tokens) {
    a.push_back("--set");
    a.push_back(std::string("auth.tokens=[") + admin_grant + "]");
  }
  return a;
}

bool ready(std::uint16_t port) {
  int status = 0;
  get(port, "/readyz", &status);
  return status == 200;
}

bool assigned(std::uint16_t port) {
  auto doc = json::parse(get(port, "/v1/stats"), nullptr, false);
  if (!doc.is_object() || !doc.contains("partitions") || !doc["partitions"].is_array())
    return false;
  for (const auto& p : doc["partitions"])
    if (p.contains("lag"))
      return true;
  return false;
}

long events_applied(std::uint16_t port) {
  auto doc = json::parse(get(port, "/v1/stats"), nullptr, false);
  if (doc.is_discarded() || !doc.contains("organizations"))
    return -1;
  long n = 0;
  for (const auto& o : doc["organizations"])
    n += o["events"].get<long>();
  return n;
}

std::string digest_of(const std::string& data_dir) {
  auto store = storage::open_graph_store({data_dir, /*read_only=*/true});
  EXPECT_TRUE(store) << store.error();
  return store ? (*store)->digest() : std::string();
}

json mcp_call(std::uint16_t port, const std::string& token, const std::string& tool, const json& args) {
  auto r = net::fetch(
      "POST", "http://127.0.0.1:" + std::to_string(port) + "/mcp",
      json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
          .dump(),
      {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}}, std::chrono::seconds(30));
  auto j = json::parse(r.body, nullptr, false);
  if (r.status != 200 || j.is_discarded() || !j.contains("result"))
    return {{"error", r.body}};
  if (j["result"].value("isError", false))
    return {{"error", j["result"]["content"][0]["text"]}};
  return j["result"]["structuredContent"];
}

std::set<std::string> listed_tools(std::uint16_t port, const std::string& token) {
  auto r = net::fetch("POST", "http://127.0.0.1:" + std::to_string(port) + "/mcp",
                      R"({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})",
                      {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}},
                      std::chrono::seconds(30));
  auto j = json::parse(r.body, nullptr, false);
  std::set<std::string> names;
  if (!j.is_discarded() && j.contains("result"))
    for (const auto& t : j["result"]["tools"])
      names.insert(t["name"].get<std::string>());
  return names;
}

std::vector<std::string> recall_ids(std::uint16_t port, const std::string& token, const std::string& query,
                                    json extra) {
  extra["query"] = query;
  extra["limit"] = 20;
  auto r = mcp_call(port, token, "recall_knowledge", extra);
  EXPECT_FALSE(r.contains("error")) << r;
  std::vector<std::string> ids;
  for (const auto& e : r.value("results", json::array()))
    ids.push_back(e["id"]);
  return ids;
}

bool has_id(const std::vector<std::string>& ids, const json& id) {
  return std::find(ids.begin(), ids.end(), id.get<std::string>()) != ids.end();
}

child::child(const std::vector<std::string>& argv, const std::string& log_file) {
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    // Ended with the test, even when the test dies without its destructors (a ctest timeout,
    // a crash): no engramd left holding a port and a core. The signal follows the thread that
    // forked, so children are started from the test's main thread (every test does).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
    int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

child::~child() {
  if (alive())
    kill9();
}

void child::kill9() {
  ::kill(pid_, SIGKILL);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  reaped_ = true;
}

int child::terminate(std::chrono::milliseconds timeout) {
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      reaped_ = true;
      return exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

bool child::alive() {
  if (reaped_ || pid_ <= 0)
    return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    reaped_ = true;
    exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return false;
  }
  return true;
}

namespace {

/// `argv` with --port-file `port_file` added; the file of an earlier start removed first.
std::vector<std::string> with_port_file(std::vector<std::string> argv, const std::string& port_file) {
  std::filesystem::remove(port_file);
  argv.push_back("--port-file");
  argv.push_back(port_file);
  return argv;
}

}  // namespace

engramd::engramd(const std::vector<std::string>& argv, const std::string& log_file)
    : child(with_port_file(argv, log_file + ".port"), log_file), port_file_(log_file + ".port") {}

std::uint16_t engramd::port(std::chrono::milliseconds timeout) {
  if (port_ != 0)
    return port_;
  wait_until(
      [&] {
        const auto text = file_text(port_file_);
        if (!text.empty() && text.back() == '\n')
          port_ = static_cast<std::uint16_t>(std::stoul(text));
        return port_ != 0 || !alive();
      },
      timeout, std::chrono::milliseconds(20));
  return port_;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string tail(const std::string& file, std::size_t lines) {
  std::ifstream in(file);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (last.size() > lines)
      last.pop_front();
  }
  std::string out;
  for (const auto& l : last)
    out += l + "\n";
  return out;
}

int apply_sample_bundle(const std::string& brokers, std::uint16_t port, const std::string& token, std::string* out,
                        const std::string& options) {
  const std::string ctl = ENGRAMD_PATH;
  return run(ctl.substr(0, ctl.rfind('/')) +
                 "/engramctl kg apply " ENGRAM_SOURCE_DIR
                 "/tools/samples/kg/ecommerce-catalog --organization acme --config " +
                 ENGRAM_SOURCE_DIR "/config/engram.yaml --set kafka.brokers=" + brokers +
                 " --url http://127.0.0.1:" + std::to_string(port) + " --token " + token + options + " 2>&1",
             out);
}

}  // namespace engram::test
