#include "actors/store/store_writer.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace engram::actors {

store_writer_state::~store_writer_state() {
  if (!resolve || !resolve->dedup || resolve->snapshot_dir.empty())
    return;
  std::string error;
  if (resolve->dedup->save(resolve->snapshot_dir, &error))
    spdlog::info("store: vector index snapshots written to {}", resolve->snapshot_dir);
  else
    spdlog::warn("store: vector index snapshots not written: {}", error);
}

storage::errc resolve_and_apply(storage::graph_store& store, resolver* r, const log_record& rec,
                                storage::apply_outcome* outcome, std::vector<schemas::resolution>* decided) {
  std::vector<schemas::resolution> resolutions;
  const bool resolve = r && r->dedup && rec.message && rec.knowledge && !rec.knowledge->entries.empty();
  if (resolve) {
    // A redelivered event is not applied again: it must not reach the index either.
    std::string ignored;
    auto seen = store.get_message(rec.message->organization_id, rec.message->event_id, &ignored);
    if (seen == storage::errc::ok) {
      return store.apply(rec.position, rec.message.get(), rec.knowledge.get(), nullptr, outcome);
    }
    if (seen != storage::errc::not_found)
      return seen;
    std::vector<std::vector<dedup::near_conflict>> near;
    dedup::event_overlay overlay;
    r->dedup->resolve(*rec.message, *rec.knowledge, resolutions, near, overlay);
    if (r->contradiction)
      r->contradiction->resolve(*rec.message, *rec.knowledge, resolutions, near, overlay);
  }
  auto e = store.apply(rec.position, rec.message.get(), rec.knowledge.get(), resolve ? &resolutions : nullptr,
                       outcome);
  if (e != storage::errc::ok && resolve)
    r->dedup->poisoned();
  if (decided)
    *decided = std::move(resolutions);
  return e;
}

stage_actor::behavior_type store_writer(stage_actor::stateful_pointer<store_writer_state> self,
                                        std::shared_ptr<storage::graph_store> store, std::shared_ptr<resolver> resolve,
                                        metrics* m, ingest_status* status, apply_notifier* notifier) {
  self->state.notifier = notifier;
  self->state.store = std::move(store);
  self->state.resolve = std::move(resolve);
  self->state.counters = m;
  self->state.status = status;
  return {
      [self](event_batch& batch) {
        auto& st = self->state;
        batch_result r;
        std::vector<schemas::resolution> decided;
        for (const auto& rec : batch.records) {
          storage::apply_outcome outcome{};
          r.error = resolve_and_apply(*st.store, st.resolve.get(), rec, &outcome, &decided);
          if (r.error != storage::errc::ok)
            break;  // the consumer stops; nothing after the failure is applied
          ++r.done;
          st.status->applied(rec.position.partition, rec.position.offset + 1);
          switch (outcome) {
            case storage::apply_outcome::applied: ++r.applied; break;
            case storage::apply_outcome::duplicate: ++r.duplicates; break;
            case storage::apply_outcome::skipped: ++r.skipped; break;
          }
          for (const auto& d : decided)
            st.counters->count_resolution(schemas::to_string(d.outcome), d.flagged.size());
          if (st.notifier && rec.message)
            st.notifier->applied(rec.message->organization_id, rec.message->event_id,
                                 {storage::errc::ok, outcome == storage::apply_outcome::duplicate, decided});
        }
        st.counters->count_applied(r.applied);
        st.counters->count_duplicates(r.duplicates);
        st.counters->count_skipped(r.skipped);
        if (st.resolve && st.resolve->dedup)
          st.counters->set_index_size(st.resolve->dedup->total_size());
        auto now = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < r.done; ++i)
          st.counters->observe_apply_latency(
              std::chrono::duration<double>(now - batch.records[i].received_at).count());
        batch.done->set_value(r);
      },
  };
}

}  // namespace engram::actors
