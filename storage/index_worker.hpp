#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace engram::storage {

/// One thread that runs index changes in the order they were posted, so that the writer that
/// posts them goes on with its next record meanwhile. A reader of what the changes build
/// calls settle() first: it returns once every change posted before the call has run, so
/// what it reads is what the writer would have built itself. The changes themselves are the
/// same calls in the same order, so the index they build is the same.
///
/// A change that throws stops the worker: the changes after it are dropped and every later
/// post() and settle() throws what it threw, so that an index missing a change is never read
/// (the writer fails as if it had thrown itself, one record later). At most `max_pending`
/// changes wait: post() waits for room beyond that.
class index_worker {
public:
  /// `name`: the thread's (at most 15 characters; in top -H and the benchmarks' CPU by thread).
  explicit index_worker(std::string name, std::size_t max_pending = 256);
  /// Runs what is pending, then stops the thread.
  ~index_worker();
  index_worker(const index_worker&) = delete;
  index_worker& operator=(const index_worker&) = delete;

  /// Queues `change` after every change posted before it (the thread starts at the first).
  void post(std::function<void()> change);
  /// Returns once every change posted before the call has run.
  void settle() const;

private:
  void run();

  std::string name_;
  std::size_t max_pending_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::deque<std::function<void()>> pending_;
  std::uint64_t posted_ = 0, done_ = 0;
  std::exception_ptr failed_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace engram::storage
