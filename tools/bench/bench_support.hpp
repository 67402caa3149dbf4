#pragma once
// What the benchmarks share: the test broker, percentiles and medians, this thread's CPU
// time, a scratch store, the organisations of the synthetic events, the SpamAssassin ham
// corpus as messages and as extracted sentences; for those that drive engramd as a separate
// process, a free port and engramd as a child process.

#include "schemas/inbound_message.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

namespace engram::ingest {
class embedded_broker;
}
namespace engram::reading {
struct validator_options;
}
namespace engram::storage {
class graph_store;
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

/// The median of `v`, which must not be empty.
double median(std::vector<double> v);

/// Seconds from `t` to now (steady clock).
double seconds_since(std::chrono::steady_clock::time_point t);

/// CPU time of this thread, in seconds: unlike wall time it does not count what the
/// hypervisor steals from a virtual machine, so "per core" figures stay comparable.
double thread_cpu_seconds();

/// Organisation ids of the synthetic events (the store and ingest benchmarks), chosen so
/// that keys spread over all 4 partitions.
extern const std::vector<std::string> synthetic_organisations;

/// The entries a store holds, over all its organisations.
std::size_t entries_held(const storage::graph_store& store);

/// A new RocksDB store at `dir`; a bench cannot go on without one.
std::unique_ptr<storage::graph_store> open_store(const std::string& dir);

/// Validator options that read bulk and spam mail like any other (extraction.bulk: keep): the
/// benchmarks' inputs stay what they were before bulk mail was skipped.
const reading::validator_options& read_everything();

/// The ham messages of the SpamAssassin corpus as inbound events (organisation `org`); with
/// `folders`, the messages of those folders of the corpus instead. `files_read` and
/// `malformed_out`, when given, receive how many files were read and how many messages
/// could not be read or decoded.
std::vector<schemas::inbound_message> ham_messages(const std::string& data_dir, const std::string& org,
                                                   std::size_t* files_read = nullptr,
                                                   std::size_t* malformed_out = nullptr,
                                                   std::vector<const char*> folders = {"easy-ham-1", "easy-ham-2",
                                                                                       "hard-ham-1"});

/// Events [from, min(to, size)) of `events` (JSON) decoded; a bench cannot go on past one
/// that does not decode.
std::vector<schemas::inbound_message> decode_events(const std::vector<std::string>& events, std::size_t from,
                                                    std::size_t to);

/// Sentences as extraction reads them from the ham corpus, the first `n` at most (the
/// embedding and recall benchmarks' input).
std::vector<std::string> ham_sentences(const std::string& data_dir, std::size_t n);

/// The sum over a metric's series in /metrics text whose line starts with `prefix` (the
/// name, with the opening of its labels when it has some; a whole series names one).
double metric_sum(const std::string& text, const std::string& prefix);

/// A process's resident memory in MiB (/proc/PID/status VmRSS); -1 once it is gone.
double rss_mib(pid_t pid);

/// engramd (beside this binary) as a child process on `brokers`, HTTP on `port`, its store in
/// `dir`, the embedded default config with `sets` ("key=value") on top; built once /readyz
/// answers 200 (an error when it has not within `ready_within`, or the child exited first),
/// stopped with SIGTERM when destroyed.
class engramd_child {
public:
  /// Starts engramd with its store in `dir`, HTTP on a port the kernel chooses (reported in
  /// `dir`.port), and waits until /readyz answers 200; throws when it ends or is not ready
  /// within `ready_within`.
  engramd_child(const std::string& brokers, const std::string& dir, const std::string& model_path,
                const std::vector<std::string>& sets, std::chrono::seconds ready_within = std::chrono::seconds(60));
  ~engramd_child();
  engramd_child(const engramd_child&) = delete;
  engramd_child& operator=(const engramd_child&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// The HTTP port it serves on.
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// kill -9, and waits for it to end (the destructor then does nothing).
  void kill9();

private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace engram::bench
