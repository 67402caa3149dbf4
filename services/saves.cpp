#include "services/saves.hpp"

#include <mutex>
#include <utility>

namespace engram::services {

struct pending_save::shared {
  std::string organization_id;
  std::string event_id;
  schemas::encoded_record record;
  std::chrono::milliseconds wait{0};
  std::mutex mutex;
  std::function<void(save_outcome)> done;
  bool sent = false;

  ~shared() {
    if (!done)
      return;
    // Never answered: its waiter stopped, with the record on its way or before sending it.
    if (sent)
      done(save_outcome{});
    else
      done(save_outcome{save_outcome::state::not_appended, {}, "the save service stopped before sending it"});
  }
};

pending_save::pending_save(std::string organization_id, std::string event_id, schemas::encoded_record record,
                           std::chrono::milliseconds wait, std::function<void(save_outcome)> done)
    : shared_(std::make_shared<shared>()) {
  shared_->organization_id = std::move(organization_id);
  shared_->event_id = std::move(event_id);
  shared_->record = std::move(record);
  shared_->wait = wait;
  shared_->done = std::move(done);
}

const std::string& pending_save::organization_id() const { return shared_->organization_id; }
const std::string& pending_save::event_id() const { return shared_->event_id; }
const schemas::encoded_record& pending_save::record() const { return shared_->record; }
std::chrono::milliseconds pending_save::wait() const { return shared_->wait; }

void pending_save::appending() const {
  std::lock_guard lock(shared_->mutex);
  shared_->sent = true;
}

void pending_save::answer(save_outcome outcome) const {
  std::function<void(save_outcome)> done;
  {
    std::lock_guard lock(shared_->mutex);
    done = std::exchange(shared_->done, nullptr);
  }
  if (done)
    done(std::move(outcome));
}

}  // namespace engram::services
