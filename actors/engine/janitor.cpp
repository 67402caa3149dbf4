#include "actors/engine/janitor.hpp"

#include "logging/log.hpp"

#include "base/faults.hpp"

#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

namespace engram::engine {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::engine); }
}  // namespace

janitor::janitor(janitor_options opts, std::shared_ptr<storage::graph_store> store, actors::stage_actor store_actor,
                 actors::ingest_status& status, ingest::log_follower* follower)
    : opts_(std::move(opts)),
      store_(std::move(store)),
      store_actor_(std::move(store_actor)),
      status_(status),
      follower_(follower) {}

janitor::~janitor() { stop(); }

engram::result<std::size_t> janitor::finish_interrupted() {
  const auto held = store_->offsets(opts_.topic);
  std::set<std::int32_t> orphaned;
  for (const auto& org : store_->held_organizations())
    if (auto p = opts_.partition_of(org); !held.count(p))
      orphaned.insert(p);
  std::size_t n = 0;
  for (auto p : orphaned) {
    auto dropped = drop(p, nullptr);
    if (!dropped)
      return engram::fail(dropped.error());
    logger().warn("{}/{}: {} organisations held without the partition's position (a drop was interrupted): dropped",
                  opts_.topic, p, *dropped);
    n += *dropped;
  }
  return n;
}

void janitor::stop() {
  stopping_ = true;
  cancel_ = true;
}

void janitor::assigning() {
  std::lock_guard lock(drop_mutex_);
  assigning_ = true;
}

void janitor::assigned() {
  std::lock_guard lock(drop_mutex_);
  assigning_ = false;
}

std::vector<std::int32_t> janitor::waiting() const {
  std::lock_guard lock(waiting_mutex_);
  return waiting_;
}

void janitor::sweep() {
  throw_if_fault_at("sweep");  // the failure tests: a look that fails
  if (!status_.joined())       // before its first assignment a member owns nothing yet
    return;
  const auto now = std::chrono::steady_clock::now();
  std::set<std::int32_t> followed;
  if (follower_)
    for (const auto& [p, _] : follower_->positions())
      followed.insert(p);
  const auto wanted = opts_.standby_wanted ? opts_.standby_wanted() : std::set<std::int32_t>{};
  std::map<std::int32_t, std::chrono::steady_clock::time_point> since;
  std::vector<std::int32_t> waiting, due;
  for (const auto& [p, _] : store_->offsets(opts_.topic)) {
    if (status_.state(p).first != actors::partition_state::not_owned || followed.count(p) || wanted.count(p))
      continue;
    const auto it = since_.find(p);
    since[p] = it == since_.end() ? now : it->second;
    waiting.push_back(p);
    if (now - since[p] >= opts_.after)
      due.push_back(p);
  }
  since_ = std::move(since);
  std::vector<std::string> gone;  // the organisations of the partitions dropped
  // Read once: what is held of a partition not owned here does not change until it is dropped.
  const auto held = due.empty() ? std::vector<std::string>{} : store_->held_organizations();
  for (auto p : due) {
    std::unique_lock lock(drop_mutex_);
    if (assigning_ || stop_requested())
      break;
    // Asked again under the lock: followed or wanted as a standby since the look above?
    if ((follower_ && follower_->positions().count(p)) || (opts_.standby_wanted && opts_.standby_wanted().count(p)))
      continue;
    if (follower_)  // not followed from here on, until the drop is done
      follower_->release({p});
    auto dropped = drop(p, [this, p] { return status_.state(p).first == actors::partition_state::not_owned; });
    if (follower_)
      follower_->unblock({p});
    if (!dropped) {
      logger().error("{}/{}: cannot let go: {}", opts_.topic, p, dropped.error());
      continue;
    }
    if (*dropped)
      for (const auto& org : held)
        if (opts_.partition_of(org) == p)
          gone.push_back(org);
    since_.erase(p);
    waiting.erase(std::remove(waiting.begin(), waiting.end(), p), waiting.end());
  }
  if (!gone.empty() && !stop_requested()) {
    const auto t = std::chrono::steady_clock::now();
    const auto e = store_->compact_dropped(gone, &cancel_);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t);
    if (e == storage::errc::ok) {
      ++compacted_;
      logger().info("compacted the key ranges of the {} organisations let go in {} ms", gone.size(), ms.count());
    } else if (!cancel_)  // a cancelled one leaves the tombstones for RocksDB's own compactions
      logger().warn("cannot compact the key ranges of the organisations let go: {}", storage::to_string(e));
  }
  std::lock_guard lock(waiting_mutex_);
  waiting_ = std::move(waiting);
}

engram::result<bool> janitor::drop(std::int32_t partition, std::function<bool()> still_gone) {
  actors::event_batch batch;
  batch.done = std::make_shared<std::promise<actors::batch_result>>();
  auto result = batch.done->get_future();
  actors::partition_drop d;
  d.topic = opts_.topic;
  d.partition = partition;
  d.belongs = [of = opts_.partition_of, partition](const std::string& org) { return of(org) == partition; };
  d.still_gone = std::move(still_gone);
  batch.drop = std::move(d);
  caf::anon_send(store_actor_, std::move(batch));
  const auto r = actors::result_of(result);
  if (r.stopped)
    return engram::fail("the store stage stopped");
  if (r.error != storage::errc::ok)
    return engram::fail("the store failed: " + storage::to_string(r.error));
  if (r.skipped != 0)  // it came back
    return false;
  ++dropped_;
  return true;
}

}  // namespace engram::engine
