#include "actors/store/store_writer.hpp"

#include <caf/all.hpp>

namespace engram::actors {

stage_actor::behavior_type store_writer(stage_actor::stateful_pointer<store_writer_state> self,
                                        std::shared_ptr<storage::graph_store> store, metrics* m,
                                        ingest_status* status) {
  self->state.store = std::move(store);
  self->state.counters = m;
  self->state.status = status;
  return {
      [self](event_batch& batch) {
        auto& st = self->state;
        batch_result r;
        for (const auto& rec : batch.records) {
          storage::apply_outcome outcome{};
          r.error = st.store->apply(rec.position, rec.message.get(), rec.knowledge.get(), rec.resolutions.get(), &outcome);
          if (r.error != storage::errc::ok)
            break;  // the consumer stops; nothing after the failure is applied
          ++r.done;
          st.status->applied(rec.position.partition, rec.position.offset + 1);
          switch (outcome) {
            case storage::apply_outcome::applied: ++r.applied; break;
            case storage::apply_outcome::duplicate: ++r.duplicates; break;
            case storage::apply_outcome::skipped: ++r.skipped; break;
          }
        }
        st.counters->count_applied(r.applied);
        st.counters->count_duplicates(r.duplicates);
        st.counters->count_skipped(r.skipped);
        auto now = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < r.done; ++i)
          st.counters->observe_apply_latency(
              std::chrono::duration<double>(now - batch.records[i].received_at).count());
        batch.done->set_value(r);
      },
  };
}

}  // namespace engram::actors
