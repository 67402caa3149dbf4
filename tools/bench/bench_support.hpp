#pragma once
// What the benchmarks that drive engramd as a separate process share: percentiles, a free
// port, and engramd as a child process.

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace engram::bench {

/// The value at fraction `p` (0..1) of `v` once sorted; 0 for none.
double percentile(std::vector<double> v, double p);

/// A TCP port that was free a moment ago on 127.0.0.1.
std::uint16_t free_port();

/// engramd (beside this binary) as a child process on `brokers`, HTTP on `port`, its store in
/// `dir`, the embedded default config with `sets` ("key=value") on top; ready when built,
/// stopped with SIGTERM when destroyed.
class engramd_child {
public:
  engramd_child(const std::string& brokers, const std::string& dir, std::uint16_t port, const std::string& model_path,
                const std::vector<std::string>& sets);
  ~engramd_child();
  engramd_child(const engramd_child&) = delete;
  engramd_child& operator=(const engramd_child&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }

private:
  pid_t pid_ = -1;
};

}  // namespace engram::bench
