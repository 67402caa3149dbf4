#include "services/notifier.hpp"

namespace engram::services {

namespace {
std::string waiter_key(const std::string& org, const std::string& id) { return org + '\0' + id; }
}  // namespace

std::future<applied_event> apply_notifier::expect(const std::string& org, const std::string& id) {
  std::lock_guard lock(mutex_);
  auto& p = waiting_[waiter_key(org, id)];
  p = std::promise<applied_event>();
  count_ = waiting_.size();
  return p.get_future();
}

void apply_notifier::forget(const std::string& org, const std::string& id) {
  std::lock_guard lock(mutex_);
  waiting_.erase(waiter_key(org, id));
  count_ = waiting_.size();
}

void apply_notifier::on_applied(std::function<void(const std::string&)> fn) {
  std::lock_guard lock(mutex_);
  auto more = std::make_shared<listeners>(*applied_listeners_);
  more->push_back(std::move(fn));
  applied_listeners_ = std::move(more);
}

void apply_notifier::applied(const std::string& org, const std::string& id, applied_event what) {
  std::shared_ptr<const listeners> tell;
  {
    std::lock_guard lock(mutex_);
    tell = applied_listeners_;
  }
  for (const auto& fn : *tell)
    fn(org);
  if (count_.load() == 0)
    return;
  std::lock_guard lock(mutex_);
  auto it = waiting_.find(waiter_key(org, id));
  if (it == waiting_.end())
    return;
  it->second.set_value(std::move(what));
  waiting_.erase(it);
  count_ = waiting_.size();
}

void apply_notifier::on_bundles_changed(std::function<void(const std::string&)> fn) {
  std::lock_guard lock(mutex_);
  bundle_listeners_.push_back(std::move(fn));
}

void apply_notifier::bundles_changed(const std::string& org) {
  std::vector<std::function<void(const std::string&)>> listeners;
  {
    std::lock_guard lock(mutex_);
    listeners = bundle_listeners_;
  }
  for (const auto& fn : listeners)
    fn(org);
}

}  // namespace engram::services
