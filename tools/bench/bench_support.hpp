#pragma once
// What the benchmarks that drive engramd as a separate process share: percentiles, a free
// port, and engramd as a child process.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

namespace engram::ingest {
class embedded_broker;
}

namespace engram::bench {

/// The test broker (librdkafka's mock cluster) with the four topics of `partitions` each.
/// When it stops, a partition that dropped records past the broker's ~5 MiB limit is printed
/// as an error and makes engram_bench exit 3 (its figures would be of less data than said).
std::unique_ptr<ingest::embedded_broker> test_broker(int partitions = 4);
/// True once a test broker dropped records under a benchmark.
[[nodiscard]] bool broker_truncated();

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
