#include "query/kept_threads.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

namespace engram::query {

kept_threads::kept_threads(std::size_t count) : count_(std::max<std::size_t>(count, 1)) {}

kept_threads::~kept_threads() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_)
    t.join();
}

bool kept_threads::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_)
      return false;
    // Made at the first post (a process that never recalls keeps none), and again while
    // fewer than count_ could be made.
    while (threads_.size() < count_) {
      try {
        threads_.emplace_back([this] { work(); });
      } catch (const std::system_error&) {
        break;
      }
    }
    if (threads_.empty())
      return false;
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

void kept_threads::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty())
        return;  // stopping, and every task posted has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace engram::query
