#include "tools/bench/bench_support.hpp"

#include "net/http.hpp"

#include <algorithm>
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
