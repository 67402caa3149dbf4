#include "tools/engramctl/replay.hpp"

#include "actors/common/status.hpp"
#include "actors/engine/engine.hpp"
#include "config/config.hpp"
#include "storage/graph_store.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace engram::ctl {

namespace {

/// engramd's configuration, made a replay's: the new store in `o.into`, no samples, a
/// consumer group of its own; nullopt with the reason on stderr.
std::optional<engram::config::engram_config> replay_config(const replay_options& o) {
  auto loaded = engram::config::load(o.config_path, o.overrides, environ);
  if (!loaded) {
    std::cerr << "replay: " << loaded.error() << "\n";
    return std::nullopt;
  }
  auto cfg = *loaded;
  if (cfg.kafka.embedded()) {
    std::cerr << "replay: kafka.brokers is 'embedded' (an in-process broker that starts empty): give the brokers that "
                 "hold engram-log, e.g. --set kafka.brokers=host:9092\n";
    return std::nullopt;
  }
  std::error_code ec;
  if (std::filesystem::exists(o.into, ec) && !std::filesystem::is_empty(o.into, ec)) {
    std::cerr << "replay: --into " << o.into << " is not empty: replay builds a new store\n";
    return std::nullopt;
  }
  cfg.storage.path = o.into;
  cfg.samples.load = false;
  cfg.kafka.group_id += "-replay-" + std::to_string(::getpid()) + "-" +
                        std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  return cfg;
}

/// Waits until the replay has read up to the high-water marks, with its progress on stderr
/// (one line redrawn on a terminal, a line per 10,000 records otherwise); 0, or 1 (reported)
/// when the pipeline failed or a partition's first records were deleted.
int wait_caught_up(engram::engine::engine& running, const std::string& into, std::chrono::steady_clock::time_point t0,
                   bool tty) {
  std::int64_t last_report = -1;
  while (!running.status().ready()) {
    if (running.failed()) {
      std::cerr << "\nreplay: the pipeline failed (see the log); the new store is incomplete\n";
      return 1;
    }
    if (auto gaps = running.gaps().open(); !gaps.empty()) {
      std::cerr << (tty ? "\n" : "");
      for (const auto& g : gaps)
        std::cerr << "replay: " << g.describe() << "\n";
      std::cerr << "replay: refusing a partial rebuild: the new store in " << into
                << " is incomplete (--accept-partial rebuilds from what is left and says what is missing)\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::int64_t done = 0, target = 0;
    for (const auto& [p, st] : running.status().partitions()) {
      done += st.next_offset;
      target += st.catch_up_target;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = secs > 0 ? double(done) / secs : 0;
    const double eta = rate > 0 ? double(target - done) / rate : 0;
    if (tty) {
      std::fprintf(stderr, "\rreplay: %lld / %lld records, %.0f/s, lag %lld, ETA %.0f s   ",
                   static_cast<long long>(done), static_cast<long long>(target), rate,
                   static_cast<long long>(target - done), eta);
    } else if (done / 10000 != last_report) {
      last_report = done / 10000;
      std::fprintf(stderr, "replay: %lld / %lld records\n", static_cast<long long>(done),
                   static_cast<long long>(target));
    }
  }
  return 0;
}

/// Prints on stderr, per partition, the offsets read and the records by kind; what is
/// missing (accepted gaps); the totals; and what a partial or re-extracted digest means.
void print_report(const replay_options& o, const std::map<std::int32_t, engram::actors::partition_status>& partitions,
                  const std::vector<engram::actors::log_gap>& accepted, double secs) {
  std::int64_t records = 0;
  for (const auto& [p, st] : partitions) {
    std::int64_t read = 0;
    std::string kinds;
    for (const auto& [kind, n] : st.kinds) {
      read += static_cast<std::int64_t>(n);
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    }
    records += read;
    if (st.first_read < 0)
      std::fprintf(stderr, "replay: partition %d: nothing to read (end offset %lld)\n", p,
                   static_cast<long long>(st.catch_up_target));
    else
      std::fprintf(stderr, "replay: partition %d: offsets %lld..%lld read (end offset %lld): %lld records: %s\n", p,
                   static_cast<long long>(st.first_read), static_cast<long long>(st.last_read),
                   static_cast<long long>(st.catch_up_target), static_cast<long long>(read), kinds.c_str());
  }
  std::int64_t missing = 0;
  for (const auto& g : accepted) {
    missing += g.lost();
    std::fprintf(stderr, "replay: MISSING %s (--accept-partial)\n", g.describe().c_str());
  }
  std::fprintf(stderr, "replay: %lld records of engram-log into %s in %.1f s (%.0f records/s)\n",
               static_cast<long long>(records), o.into.c_str(), secs, secs > 0 ? double(records) / secs : 0.0);
  if (!accepted.empty())
    std::fprintf(stderr,
                 "replay: PARTIAL rebuild: %lld records of engram-log were deleted before this replay and "
                 "are not in %s; its digest differs from a complete store's\n",
                 static_cast<long long>(missing), o.into.c_str());
  if (o.re_extract)
    std::fprintf(stderr,
                 "replay: every message was read again with today's extractor and encoder (--re-extract): "
                 "this digest is new by design and differs from the live store's wherever the reading "
                 "changed\n");
}

}  // namespace

int replay(const replay_options& o) {
  auto cfg = replay_config(o);
  if (!cfg)
    return 2;
  engram::engine::engine_options opts;
  opts.replay = true;
  opts.re_extract = o.re_extract;
  opts.accept_partial = o.accept_partial;
  auto t0 = std::chrono::steady_clock::now();
  auto started = engram::engine::engine::start(*cfg, std::move(opts));
  if (!started) {
    std::cerr << "replay: " << started.error() << "\n";
    return 1;
  }
  auto running = std::move(*started);
  const bool tty = ::isatty(STDERR_FILENO);
  if (int failed = wait_caught_up(*running, o.into, t0, tty))
    return failed;
  const auto partitions = running->status().partitions();
  const auto accepted = running->gaps().accepted();
  running->stop();
  running.reset();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto store = engram::storage::open_graph_store({o.into, /*read_only=*/true});
  if (!store) {
    std::cerr << "replay: " << store.error() << "\n";
    return 1;
  }
  if (tty)
    std::fputc('\n', stderr);
  print_report(o, partitions, accepted, secs);
  std::printf("%s\n", (*store)->digest().c_str());
  return 0;
}

}  // namespace engram::ctl
