#include "actors/store/store_router.hpp"
#include "actors/store/store_watch.hpp"
#include "actors/common/busy_clock.hpp"
#include "base/faults.hpp"

#include <caf/all.hpp>

#include <cstddef>
#include <utility>

namespace engram::actors {

stage_actor::behavior_type store_router(stage_actor::stateful_pointer<store_router_state> self,
                                        std::vector<stage_actor> appliers, services::metrics* metrics) {
  self->state.appliers = std::move(appliers);
  self->state.metrics = metrics;
  // As an applier's: stopped with the exception's text, which store_watch reports.
  self->set_exception_handler(
      [](caf::scheduled_actor*, std::exception_ptr& x) { return applier_exception("the store router", x); });
  return {
      [self](event_batch& batch) {
        throw_if_fault_at("router");  // the failure tests: the batches it held are never answered
        static const std::string name = "store-router";
        // Stopped before the sends: once the appliers answer, whoever waits may stop the metrics.
        busy_clock clock(self->state.metrics, name, self);
        const auto& appliers = self->state.appliers;
        const auto applier_of = [&](std::int32_t partition) {
          return static_cast<std::size_t>(partition) % appliers.size();
        };
        if (batch.drop) {
          clock.stop();
          self->send(appliers[applier_of(batch.drop->partition)], std::move(batch));
          return;
        }
        std::vector<std::vector<log_record>> parts(appliers.size());
        for (auto& rec : batch.records)
          parts[applier_of(rec.position.partition)].push_back(std::move(rec));
        std::size_t used = 0, last = 0;
        for (std::size_t i = 0; i < parts.size(); ++i)
          if (!parts[i].empty()) {
            ++used;
            last = i;
          }
        if (used <= 1) {  // one applier's records (or none): the batch as it is
          batch.records = std::move(parts[last]);
          clock.stop();
          self->send(appliers[last], std::move(batch));
          return;
        }
        auto join = std::make_shared<batch_join>(batch.done, used);
        clock.stop();
        for (std::size_t i = 0; i < parts.size(); ++i)
          if (!parts[i].empty())
            self->send(appliers[i], event_batch{std::move(parts[i]), nullptr, std::nullopt, join, batch.let_go});
      },
  };
}

}  // namespace engram::actors
