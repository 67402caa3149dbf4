#pragma once
// A clustered store member's front door (store.cluster, docs/scaling-out.md): each request
// for an organisation is served here when this member owns the organisation's engram-log
// partition and has caught up; answered "retry after N s" while it restores it; forwarded
// to the owner the members topic names otherwise (once: a forwarded request is never
// forwarded again). Forwarding runs on threads of its own, never on the HTTP I/O thread.

#include "services/metrics.hpp"
#include "actors/common/status.hpp"
#include "actors/ingest/members.hpp"
#include "base/result.hpp"
#include "net/http.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace engram::engine {

struct cluster_options {
  /// This member's name and advertised URL.
  std::string name;
  std::string url;
  /// engram-log's partition count (fixed: an organisation's partition depends on it).
  std::int32_t partitions = 1;
  /// How long a forwarded request may take.
  std::chrono::milliseconds forward_timeout{30000};
  /// How long a request for a partition no live member claims (a rebalance under way) waits
  /// for an owner before it is answered "retry".
  std::chrono::milliseconds settle{5000};
  /// Requests waiting or forwarded at once; more are answered "retry" at once.
  std::size_t max_waiting = 64;
  /// Event streams relayed from owners at once (a thread each); more are answered "retry".
  std::size_t max_relayed = 256;
  /// store.standby_replicas.
  std::uint32_t standby_replicas = 0;
};

/// The header a forwarded request carries (the forwarding member's name).
inline constexpr const char* forwarded_header = "x-engram-forwarded-by";

/// Seconds to wait before retrying a partition `remaining` records from caught up: at the
/// restore rate measured on the dense mail benchmark (~400 records/s, docs/benchmarks.md),
/// 1 to 60.
[[nodiscard]] int retry_after_seconds(std::int64_t remaining);

/// store.cluster: an organisation's partition depends on engram-log's partition count, so a
/// store built with another count would hold organisations another member now owns. The
/// count is kept in `store_path`/cluster-partitions the first time; an error when `topic`
/// has another count since.
[[nodiscard]] engram::result<void> check_partition_count(const std::string& store_path, const std::string& topic,
                                                         std::size_t count);

class cluster {
public:
  cluster(cluster_options opts, actors::ingest_status& status);
  ~cluster();
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  /// The members topic this member publishes on (set once it is open).
  void attach(std::unique_ptr<ingest::members_topic> members);
  /// Stops publishing (a tombstone on the members topic).
  void stop();
  /// Publishes this member's record now (its assignment changed).
  void publish();
  /// Where this member's standby stands (log_follower::positions), for its record and /metrics.
  void standby_positions(std::function<std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>>()> f) {
    std::lock_guard lock(standby_mutex_);
    standby_ = std::move(f);
  }
  /// The partitions this member should follow as a standby: those whose owner (a live
  /// member other than this one) has this member among the next `standby_replicas` live
  /// members after it, by name; never one assigned here.
  [[nodiscard]] std::set<std::int32_t> standby_wanted() const;

  /// Serves `req` of organisation `org`: `serve` when this member owns and has caught up with
  /// its partition, else a retry answer or the owner's answer. `mcp`: answers as JSON-RPC.
  void route(const std::string& org, const net::request& req, const net::responder& respond,
             const std::function<void(const net::request&, net::responder)>& serve, bool mcp);

  /// This member's record for the members topic.
  [[nodiscard]] ingest::member_record self() const;
  /// The organisation's partition.
  [[nodiscard]] std::int32_t partition_of(const std::string& org) const;
  /// This member's figures for /metrics.
  [[nodiscard]] services::metrics::cluster_figures figures() const;
  /// The cluster as this member sees it (GET /v1/cluster).
  [[nodiscard]] nlohmann::json view() const;
  /// Requests forwarded to another member, and answered "retry", since start.
  [[nodiscard]] std::uint64_t forwarded() const { return forwarded_; }
  /// Event streams relayed from their owners now.
  [[nodiscard]] std::size_t relaying() const { return relaying_; }
  [[nodiscard]] std::uint64_t retried() const { return retried_; }

private:
  enum class verdict { serve, restoring, forward, unknown };
  struct decision {
    verdict what = verdict::unknown;
    actors::partition_status at;
    ingest::member_record owner;
  };
  [[nodiscard]] decision decide(std::int32_t partition) const;
  void answer_retry(const net::request& req, const net::responder& respond, bool mcp, const std::string& org,
                    std::int32_t partition, int seconds, const std::string& why);
  /// The retry answer of a partition being restored here, `at` where it stands.
  void answer_restoring(const net::request& req, const net::responder& respond, bool mcp, const std::string& org,
                        std::int32_t partition, const actors::partition_status& at);
  void forward(const net::request& req, const net::responder& respond, const ingest::member_record& owner, bool mcp,
               const std::string& org, std::int32_t partition);
  /// An event stream (GET /mcp, /v1/events) of an organisation owned elsewhere: opened on the
  /// owner and relayed event by event until either side ends it, or this member stops.
  void relay(const net::request& req, const net::responder& respond, const ingest::member_record& owner, bool mcp,
             const std::string& org, std::int32_t partition);

  cluster_options opts_;
  actors::ingest_status& status_;
  std::unique_ptr<ingest::members_topic> members_;
  /// Set once the follower runs, read by the members topic's thread (self()) and /metrics.
  mutable std::mutex standby_mutex_;
  std::function<std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>>()> standby_;
  [[nodiscard]] std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> standby_now() const;
  std::atomic<std::size_t> waiting_{0};
  std::atomic<std::size_t> relaying_{0};
  /// Set by stop(): relayed streams end.
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> forwarded_{0};
  std::atomic<std::uint64_t> retried_{0};
};

}  // namespace engram::engine
