#include "tools/bench/bench_support.hpp"

#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/topics.hpp"
#include "net/http.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace engram::bench {

namespace {
std::atomic<bool> truncated{false};
}

std::unique_ptr<ingest::embedded_broker> test_broker(int partitions) {
  auto b = ingest::embedded_broker::start({"inbound-messages", "engram-log", "engram-reminders", "engram-dlq"},
                                          partitions);
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

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free port");
  ::close(fd);
  return ntohs(a.sin_port);
}

engramd_child::engramd_child(const std::string& brokers, const std::string& dir, std::uint16_t port,
                             const std::string& model_path, const std::vector<std::string>& sets) {
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "engramd";
  std::vector<std::string> args{exe.string(), "--config", "config/engram.yaml",
                                "--set", "kafka.brokers=" + brokers,
                                "--set", "storage.path=" + dir,
                                "--set", "samples.load=false",
                                "--set", "embedder.model_path=" + model_path,
                                "--set", "http.listen=127.0.0.1:" + std::to_string(port),
                                "--set", "log.level=warn"};
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
  for (int i = 0; i < 600; ++i) {
    auto r = http::fetch("GET", "http://127.0.0.1:" + std::to_string(port) + "/readyz", "", {}, std::chrono::seconds(2));
    if (r.status == 200)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling readiness, not timing anything
  }
  throw std::runtime_error("engramd did not become ready");
}

engramd_child::~engramd_child() {
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

}  // namespace engram::bench
