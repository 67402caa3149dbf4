#include "actors/store/store_writer.hpp"
#include "actors/common/log.hpp"

#include "actors/extractor/rules.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace engram::actors {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::store); }
}  // namespace

store_writer_state::~store_writer_state() {
  if (!resolve || !resolve->dedup || resolve->snapshot_dir.empty())
    return;
  if (auto saved = resolve->dedup->save(resolve->snapshot_dir))
    logger().info("vector index snapshots written to {}", resolve->snapshot_dir);
  else
    logger().warn("vector index snapshots not written: {}", saved.error());
}

namespace {

/// Dedup and contradiction for one message-like record, then its apply.
storage::errc resolve_message(storage::graph_store& store, resolver* r, const log_record& rec,
                              storage::apply_outcome* outcome, applied_event* answer) {
  std::vector<schemas::resolution> resolutions;
  const bool resolve = r && r->dedup && rec.message && rec.knowledge && !rec.knowledge->entries.empty();
  if (resolve) {
    // A redelivered event is not applied again: it must not reach the index either.
    auto seen = store.get_message(rec.message->organization_id, rec.message->event_id);
    if (seen) {
      answer->duplicate = true;
      return store.apply(rec.position, rec.message.get(), rec.knowledge.get(), nullptr, outcome);
    }
    if (seen.error() != storage::errc::not_found)
      return seen.error();
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
  answer->duplicate = answer->duplicate || *outcome == storage::apply_outcome::duplicate;
  answer->resolutions = std::move(resolutions);
  return e;
}

/// merge_branch: each of the branch's saves, in save order, through dedup and
/// contradiction like any save (the offset does not advance with them), then the command
/// drops the saves and advances the offset. After a crash in between, the redelivered
/// command skips the saves already applied (by eventId) and goes on.
storage::errc merge_branch(storage::graph_store& store, resolver* r, const log_record& rec,
                           storage::apply_outcome* outcome, applied_event* answer) {
  const auto& c = *rec.command;
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  std::int64_t last = 0;
  auto saves = store.branch_saves(c.organization_id, c.branch_id, &last);
  if (saves.empty()) {
    answer->rejected = "branchId: no saves in branch '" + c.branch_id + "' (never used, merged, discarded or expired)";
  } else if (last + c.ttl_ms < c.issued_at_ms) {
    answer->rejected = "branchId: branch '" + c.branch_id + "' expired (no save for longer than its time to live)";
  } else {
    for (const auto& b : saves) {
      auto s = std::make_shared<schemas::knowledge_save>();
      if (auto bad = schemas::decode(b.save_json, *s)) {
        logger().error("branch '{}' holds an undecodable save ({}): skipped", c.branch_id, *bad);
        continue;
      }
      s->branch_id.clear();
      log_record sub;
      sub.position = rec.position;
      sub.position.advance = false;
      sub.message = std::make_shared<schemas::inbound_message>(schemas::as_message(*s));
      auto x = std::make_shared<schemas::extraction>(extractor::read_save(*s));
      for (auto& en : x->entries)
        en.embedding = b.embedding;
      sub.knowledge = std::move(x);
      sub.save = s;
      storage::apply_outcome sub_outcome{};
      applied_event sub_answer;
      if (auto e = resolve_message(store, r, sub, &sub_outcome, &sub_answer); e != storage::errc::ok)
        return e;
      auto one = nlohmann::ordered_json::object();
      one["saveId"] = s->event_id;
      if (sub_answer.duplicate || sub_answer.resolutions.empty()) {
        one["id"] = schemas::entry_id(s->organization_id, s->event_id, 0);
        one["outcome"] = "applied before";
      } else {
        auto a = nlohmann::ordered_json::parse(schemas::save_answer_json(s->organization_id, s->event_id,
                                                                         sub_answer.resolutions[0]));
        for (auto& [k, v] : a.items())
          one[k] = v;
      }
      results.push_back(std::move(one));
      for (auto& res : sub_answer.resolutions)
        answer->resolutions.push_back(std::move(res));
    }
  }
  storage::command_result cr;
  auto e = store.apply_command(rec.position, c, &cr, outcome);
  if (e == storage::errc::ok && answer->rejected.empty())
    answer->result = nlohmann::ordered_json{{"branchId", c.branch_id}, {"merged", results}}.dump();
  return e;
}

}  // namespace

storage::errc resolve_and_apply(storage::graph_store& store, resolver* r, const log_record& rec,
                                storage::apply_outcome* outcome, applied_event* answer) {
  applied_event ignored;
  if (!answer)
    answer = &ignored;
  if (rec.command) {
    if (rec.command->op == schemas::command_op::merge_branch)
      return merge_branch(store, r, rec, outcome, answer);
    storage::command_result cr;
    auto e = store.apply_command(rec.position, *rec.command, &cr, outcome);
    if (e != storage::errc::ok)
      return e;
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = cr.error;
    if (r && r->dedup)
      for (const auto& [id, seq] : cr.removed)
        if (seq)
          r->dedup->forget(rec.command->organization_id, seq);
    auto j = nlohmann::ordered_json::object();
    j["entries"] = nlohmann::ordered_json::array();
    for (const auto& doc : cr.entries)
      j["entries"].push_back(nlohmann::ordered_json::parse(doc));
    j["removed"] = cr.removed.size();
    j["droppedSaves"] = cr.dropped_saves;
    answer->result = j.dump();
    return e;
  }
  if (rec.entity) {
    storage::entity_result er;
    auto e = store.apply_entity_command(rec.position, *rec.entity, &er, outcome);
    if (e != storage::errc::ok)
      return e;
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = std::move(er.error);
    answer->result = std::move(er.json);
    return e;
  }
  if (rec.bundle) {
    storage::kg_result kr;
    auto e = store.apply_kg_command(rec.position, *rec.bundle, &kr, outcome);
    if (e != storage::errc::ok)
      return e;
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = std::move(kr.error);
    answer->result = std::move(kr.json);
    answer->bundles_changed = kr.changed;
    return e;
  }
  if (rec.save && !rec.save->branch_id.empty()) {
    static const schemas::vector8 none;
    const auto& v = rec.knowledge && !rec.knowledge->entries.empty() ? rec.knowledge->entries[0].embedding : none;
    auto e = store.apply_branch_save(rec.position, *rec.save, v, outcome);
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->result = schemas::save_answer_json(rec.save->organization_id, rec.save->event_id, {});
    return e;
  }
  return resolve_message(store, r, rec, outcome, answer);
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
        for (const auto& rec : batch.records) {
          storage::apply_outcome outcome{};
          applied_event answer;
          r.error = resolve_and_apply(*st.store, st.resolve.get(), rec, &outcome, &answer);
          if (r.error != storage::errc::ok)
            break;  // the consumer stops; nothing after the failure is applied
          ++r.done;
          st.status->applied(rec.position.partition, rec.position.offset + 1);
          switch (outcome) {
            case storage::apply_outcome::applied: ++r.applied; break;
            case storage::apply_outcome::duplicate: ++r.duplicates; break;
            case storage::apply_outcome::skipped: ++r.skipped; break;
          }
          for (const auto& d : answer.resolutions)
            st.counters->count_resolution(schemas::to_string(d.outcome), d.flagged.size());
          if (rec.command && outcome == storage::apply_outcome::applied && answer.rejected.empty())
            st.counters->count_command(schemas::to_string(rec.command->op));
          if (rec.entity && outcome == storage::apply_outcome::applied && answer.rejected.empty())
            st.counters->count_command(schemas::to_string(rec.entity->op));
          if (st.notifier && rec.message)
            st.notifier->applied(rec.message->organization_id, rec.message->event_id, std::move(answer));
          else if (st.notifier && rec.command)
            st.notifier->applied(rec.command->organization_id, rec.command->event_id, std::move(answer));
          else if (st.notifier && rec.entity)
            st.notifier->applied(rec.entity->organization_id, rec.entity->event_id, std::move(answer));
          else if (st.notifier && rec.bundle) {
            const bool changed = answer.bundles_changed;
            st.notifier->applied(rec.bundle->organization_id, rec.bundle->event_id, std::move(answer));
            if (changed)
              st.notifier->bundles_changed(rec.bundle->organization_id);
          }
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
