#include "storage/index_worker.hpp"

#include <pthread.h>

namespace engram::storage {

index_worker::index_worker(std::string name, std::size_t max_pending)
    : name_(std::move(name)), max_pending_(max_pending ? max_pending : 1) {}

index_worker::~index_worker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void index_worker::post(std::function<void()> change) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return failed_ || pending_.size() < max_pending_; });
  if (failed_)
    std::rethrow_exception(failed_);
  pending_.push_back(std::move(change));
  ++posted_;
  if (!thread_.joinable())
    thread_ = std::thread([this] { run(); });
  changed_.notify_all();
}

void index_worker::settle() const {
  std::unique_lock lock(mutex_);
  const auto until = posted_;
  changed_.wait(lock, [&] { return failed_ || done_ >= until; });
  if (failed_)
    std::rethrow_exception(failed_);
}

void index_worker::run() {
  ::pthread_setname_np(::pthread_self(), name_.substr(0, 15).c_str());
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (pending_.empty())
      return;  // stopping, and nothing left
    auto change = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    std::exception_ptr thrown;
    try {
      change();
    } catch (...) {
      thrown = std::current_exception();
    }
    lock.lock();
    if (thrown) {
      failed_ = thrown;
      pending_.clear();
    }
    ++done_;
    changed_.notify_all();
    if (failed_)
      return;
  }
}

}  // namespace engram::storage
