#pragma once
// Threads kept for the work a recall runs beside itself (its passages' lane): the query
// service keeps one per core. A thread made for each recall started cold here (its
// allocator's cache, its first stack pages): the vector it made arrived 1.4 ms into a recall,
// for an encoder that needs about 0.4 (docs/benchmarks.md). Tasks run in the order posted,
// each on whichever kept thread is free; the threads are made at the first post.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace engram::query {

class kept_threads {
public:
  /// At most `count` threads (at least one).
  explicit kept_threads(std::size_t count);
  kept_threads(const kept_threads&) = delete;
  kept_threads& operator=(const kept_threads&) = delete;
  /// Runs every task posted, then joins the threads.
  ~kept_threads();

  /// Queues `task` for a kept thread. False, and `task` not queued, when no thread runs or
  /// can be made: the caller runs it itself. A task must not throw (a std::packaged_task
  /// keeps its exception for its future), nor wait for a task posted after it (one thread
  /// may be all there is).
  [[nodiscard]] bool post(std::function<void()> task);

private:
  void work();

  const std::size_t count_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace engram::query
