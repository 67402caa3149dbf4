#include "tools/bench/bench_support.hpp"

#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"
#include "reading/extract.hpp"
#include "reading/validator.hpp"
#include "storage/graph_store.hpp"
#include "tools/mail/mail_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

namespace engram::bench {

namespace {
std::atomic<bool> truncated{false};
}

std::unique_ptr<ingest::embedded_broker> test_broker(int partitions) {
  auto b = ingest::embedded_broker::start(
      {"inbound-messages", "engram-log", "engram-reminders", "engram-dlq", "engram-keys"}, partitions);
  if (!b)
    throw std::runtime_error(b.error());
  (*b)->before_stop([](const ingest::embedded_broker& broker) {
    auto ranges = ingest::partition_ranges(broker.bootstrap());
    if (!ranges) {
      std::fprintf(stderr, "engram_bench: ERROR: cannot check the test broker's partitions: %s\n",
                   ranges.error().c_str());
      truncated = true;
      return;
    }
    for (const auto& r : *ranges)
      if (r.start > 0) {
        std::fprintf(stderr,
                     "engram_bench: ERROR: %s partition %d dropped its first %lld records past the test broker's "
                     "~5 MiB limit: the figures above are not of the data they say (spread the stream over more "
                     "partitions or make it smaller)\n",
                     r.topic.c_str(), r.partition, static_cast<long long>(r.start));
        truncated = true;
      }
  });
  return std::move(*b);
}

bool broker_truncated() { return truncated; }

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * double(v.size())))];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

const std::vector<std::string> synthetic_organisations{"acme",  "globex",   "initech", "umbrella",
                                                       "hooli", "vandelay", "stark",   "wayne"};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::unique_ptr<storage::graph_store> open_store(const std::string& dir) {
  auto store = storage::open_graph_store({dir});
  if (!store)
    throw std::runtime_error(store.error());
  return std::move(*store);
}

const reading::validator_options& read_everything() {
  static const reading::validator_options o = [] {
    reading::validator_options x;
    x.bulk = reading::bulk_policy::keep;
    return x;
  }();
  return o;
}

std::vector<schemas::inbound_message> ham_messages(const std::string& data_dir, const std::string& org,
                                                   std::size_t* files_read, std::size_t* malformed_out,
                                                   std::vector<const char*> folders) {
  std::vector<std::string> dirs;
  for (const char* d : folders)
    dirs.push_back(data_dir + "/" + d);
  auto all = mail::list_files(dirs);
  if (!all)
    throw std::runtime_error(all.error() + " (run tools/fetch-data.sh spamassassin)");
  std::vector<std::string> files;
  for (auto& f : *all)
    if (f.size() > 4 && f.substr(f.size() - 4) == ".txt")
      files.push_back(f);
  mail::read_options ro;
  ro.organization_id = org;
  std::vector<schemas::inbound_message> msgs;
  std::size_t malformed = 0;
  for (const auto& f : files)
    mail::read_file(f, ro, [&](mail::mail_result r) {
      schemas::inbound_message m;
      if (!r.error.empty() || schemas::decode(r.event_json, {1u << 20}, m)) {
        ++malformed;
        return;
      }
      msgs.push_back(std::move(m));
    });
  if (files_read)
    *files_read = files.size();
  if (malformed_out)
    *malformed_out = malformed;
  return msgs;
}

std::size_t entries_held(const storage::graph_store& store) {
  std::size_t n = 0;
  for (const auto& s : store.stats())
    n += s.entries;
  return n;
}

std::vector<schemas::inbound_message> decode_events(const std::vector<std::string>& events, std::size_t from,
                                                    std::size_t to) {
  std::vector<schemas::inbound_message> out;
  for (std::size_t i = from; i < std::min(events.size(), to); ++i) {
    schemas::inbound_message m;
    if (auto bad = schemas::decode(events[i], {}, m))
      throw std::runtime_error(bad->to_string());
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> ham_sentences(const std::string& data_dir, std::size_t n) {
  std::vector<std::string> out;
  for (const auto& m : ham_messages(data_dir, "ham"))
    for (auto& e : reading::extract_validated(m, read_everything()).entries) {
      if (out.size() == n)
        return out;
      out.push_back(e.content);
    }
  return out;
}

/// The sum over a metric's series in /metrics text whose line starts with `prefix` (the
/// name, with the opening of its labels when it has some).
double metric_sum(const std::string& text, const std::string& prefix) {
  double sum = 0;
  for (std::size_t at = text.find("\n" + prefix); at != std::string::npos; at = text.find("\n" + prefix, at + 1)) {
    const auto end = text.find('\n', at + 1);
    const auto line = text.substr(at + 1, end - at - 1);
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

double rss_mib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

engramd_child::engramd_child(const std::string& brokers, const std::string& dir,
                             // clang-format off
                             const std::string& model_path, const std::vector<std::string>& sets,
                             std::chrono::seconds ready_within) {
  const auto port_file = dir + ".port";
  std::filesystem::remove(port_file);
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "engramd";
  std::vector<std::string> args{exe.string(), "--config", "config/engram.yaml",
                                "--set", "kafka.brokers=" + brokers,
                                "--set", "storage.path=" + dir,
                                "--set", "samples.load=false",
                                "--set", "embedder.model_path=" + model_path,
                                "--set", "http.listen=127.0.0.1:0",
                                "--set", "log.level=warn",
                                "--port-file", port_file};
  // clang-format on
  for (const auto& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  if (::posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error("cannot start " + args[0]);
  const auto until = std::chrono::steady_clock::now() + ready_within;
  while (std::chrono::steady_clock::now() < until) {
    if (port_ == 0) {
      std::ifstream in(port_file);
      unsigned p = 0;
      if (in >> p)
        port_ = static_cast<std::uint16_t>(p);
    }
    if (port_ != 0 &&
        net::fetch("GET", "http://127.0.0.1:" + std::to_string(port_) + "/readyz", "", {}, std::chrono::seconds(2))
                .status == 200)
      return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error(
          WIFSIGNALED(status)
              ? "engramd was killed by signal " + std::to_string(WTERMSIG(status)) + " before it was ready"
              : "engramd exited with " + std::to_string(WEXITSTATUS(status)) + " before it was ready");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling readiness, not timing anything
  }
  ::kill(pid_, SIGTERM);  // no destructor runs for a constructor that throws
  ::waitpid(pid_, nullptr, 0);
  throw std::runtime_error("engramd did not become ready within " + std::to_string(ready_within.count()) + " s");
}

void engramd_child::kill9() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

engramd_child::~engramd_child() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

}  // namespace engram::bench
