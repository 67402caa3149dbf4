#include "services/notifier.hpp"

namespace engram::services {

namespace {
std::string waiter_key(const std::string& org, const std::string& id) { return org + '\0' + id; }
}  // namespace

void apply_notifier::expect(const std::string& org, const std::string& id, std::function<void(applied_event)> then) {
  std::lock_guard lock(mutex_);
  waiting_[waiter_key(org, id)] = std::move(then);
  count_ = waiting_.size();
}

std::future<applied_event> apply_notifier::expect(const std::string& org, const std::string& id) {
  auto promise = std::make_shared<std::promise<applied_event>>();
  auto answer = promise->get_future();
  expect(org, id, [promise](applied_event what) { promise->set_value(std::move(what)); });
  return answer;
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
  std::function<void(applied_event)> then;
  {
    std::lock_guard lock(mutex_);
    auto it = waiting_.find(waiter_key(org, id));
    if (it == waiting_.end())
      return;
    then = std::move(it->second);
    waiting_.erase(it);
    count_ = waiting_.size();
  }
  then(std::move(what));
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
