#include "actors/store/store_writer.hpp"
#include "actors/common/busy_clock.hpp"
#include "actors/store/store_watch.hpp"
#include "logging/log.hpp"

#include "reading/rules.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <pthread.h>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <variant>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <thread>

namespace engram::actors {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::store); }
}  // namespace

bool save_snapshots_at_stop(const resolver& r) {
  if (!r.dedup || r.snapshot_dir.empty())
    return true;
  if (auto saved = r.dedup->save(r.snapshot_dir)) {
    logger().info("vector index snapshots written to {} ({} organisations; the others' files hold them)",
                  r.snapshot_dir, *saved);
    return true;
  } else {
    logger().warn("vector index snapshots not written: {}", saved.error());
    return false;
  }
}

namespace {

/// Fault injection for the tests of a failing applier (docs/tests.md): with
/// ENGRAM_FAULT_APPLY_THROW_AT=N in its environment, the applier that resolves the N-th
/// message or save of this process throws once dedup and contradiction have decided it and
/// before the store writes it (its vectors are in the index, its entries are not in RocksDB).
/// 0: never.
void throw_if_faulted() {
  static const std::uint64_t at = [] {
    const char* v = std::getenv("ENGRAM_FAULT_APPLY_THROW_AT");
    return v ? std::strtoull(v, nullptr, 10) : 0;
  }();
  static std::atomic<std::uint64_t> resolved{0};
  if (at && ++resolved == at)
    throw std::runtime_error("ENGRAM_FAULT_APPLY_THROW_AT=" + std::to_string(at) + ": thrown before the write");
}

/// Times the named steps of one record's apply into `to` (nothing when null).
class step_clock {
public:
  explicit step_clock(services::metrics* to) : to_(to), t_(to ? std::chrono::steady_clock::now() : decltype(t_){}) {}
  void lap(std::string_view step) {
    if (!to_)
      return;
    const auto now = std::chrono::steady_clock::now();
    to_->add_apply_step(step, std::chrono::duration<double>(now - t_).count());
    t_ = now;
  }

private:
  services::metrics* to_;
  std::chrono::steady_clock::time_point t_;
};

/// Dedup and contradiction for one message (with what was read from it), then its apply.
/// Without `message` (an undecodable record) only the offset advances.
storage::errc resolve_message(storage::graph_store& store, resolver* r, const storage::log_position& position,
                              const schemas::inbound_message* message, const schemas::extraction* knowledge,
                              storage::apply_outcome* outcome, services::applied_event* answer) {
  std::vector<schemas::resolution> resolutions;
  const bool resolve = r && r->dedup && message && knowledge && !knowledge->entries.empty();
  if (resolve) {
    // A redelivered event is not applied again: it must not reach the index either (its
    // message row may be gone: a retention forget removes it and keeps the seen row).
    auto seen = store.seen(message->organization_id, message->event_id);
    if (!seen)
      return seen.error();
    if (*seen) {
      answer->duplicate = true;
      return store.apply(position, message, knowledge, nullptr, outcome);
    }
    std::vector<std::vector<dedup::near_conflict>> near;
    dedup::event_overlay overlay;
    step_clock clock(r->steps);
    r->dedup->resolve(*message, *knowledge, resolutions, near, overlay);
    clock.lap("dedup");
    if (r->contradiction) {
      r->contradiction->resolve(*message, *knowledge, resolutions, near, overlay);
      clock.lap("contradiction");
    }
    throw_if_faulted();
  }
  step_clock clock(resolve ? r->steps : nullptr);
  auto e = store.apply(position, message, knowledge, resolve ? &resolutions : nullptr, outcome);
  clock.lap("write");
  if (e != storage::errc::ok && resolve)
    r->dedup->poisoned();
  answer->duplicate = answer->duplicate || *outcome == storage::apply_outcome::duplicate;
  answer->resolutions = std::move(resolutions);
  return e;
}

/// An agent's save (outside a branch), taken as given: the statement it says (read_save),
/// with the vector it came with, as the message it stands for.
storage::errc apply_save(storage::graph_store& store, resolver* r, const storage::log_position& position,
                         const schemas::knowledge_save& s, storage::apply_outcome* outcome,
                         services::applied_event* answer) {
  const auto message = schemas::as_message(s);
  auto x = reading::read_save(s);
  for (auto& en : x.entries)
    en.embedding = s.embedding;
  return resolve_message(store, r, position, &message, &x, outcome, answer);
}

/// merge_branch: each of the branch's saves, in save order, through dedup and
/// contradiction like any save (the offset does not advance with them), then the command
/// drops the saves and advances the offset. After a crash in between, the redelivered
/// command skips the saves already applied (by eventId) and goes on.
storage::errc merge_branch(storage::graph_store& store, resolver* r, const storage::log_position& position,
                           const schemas::knowledge_command& c, storage::apply_outcome* outcome,
                           services::applied_event* answer) {
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
      s->embedding = b.embedding;
      auto sub_position = position;
      sub_position.advance = false;
      storage::apply_outcome sub_outcome{};
      services::applied_event sub_answer;
      if (auto e = apply_save(store, r, sub_position, *s, &sub_outcome, &sub_answer); e != storage::errc::ok)
        return e;
      auto one = nlohmann::ordered_json::object();
      one["saveId"] = s->event_id;
      if (sub_answer.duplicate || sub_answer.resolutions.empty()) {
        one["id"] = schemas::entry_id(s->organization_id, s->event_id, 0);
        one["outcome"] = "applied before";
      } else {
        auto a = nlohmann::ordered_json::parse(
            schemas::save_answer_json(s->organization_id, s->event_id, sub_answer.resolutions[0]));
        for (auto& [k, v] : a.items())
          one[k] = v;
      }
      results.push_back(std::move(one));
      for (auto& res : sub_answer.resolutions)
        answer->resolutions.push_back(std::move(res));
    }
  }
  storage::command_result cr;
  auto e = store.apply_command(position, c, &cr, outcome);
  if (e == storage::errc::ok && answer->rejected.empty())
    answer->result = nlohmann::ordered_json{{"branchId", c.branch_id}, {"merged", results}}.dump();
  return e;
}

/// After a forget the vector index snapshots are written at once: a removed vector leaves the
/// files (a rebuilt organisation's index has never held it).
void save_snapshots(resolver* r) {
  if (!r || !r->dedup || r->snapshot_dir.empty())
    return;
  if (auto saved = r->dedup->save(r->snapshot_dir); !saved)
    logger().warn("vector index snapshots not written after a forget: {}", saved.error());
}

/// Fault injection for the test of a save answered while a checkpoint runs (docs/tests.md):
/// with ENGRAM_FAULT_CHECKPOINT_HOLD=PATH in its environment, each checkpoint waits as it
/// begins until the file PATH exists. Unset: never.
void hold_checkpoint() {
  static const std::string path = [] {
    const char* v = std::getenv("ENGRAM_FAULT_CHECKPOINT_HOLD");
    return std::string(v ? v : "");
  }();
  if (path.empty())
    return;
  logger().info("ENGRAM_FAULT_CHECKPOINT_HOLD: a checkpoint waits for {}", path);
  while (!std::filesystem::exists(path))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

/// Writes dedup's snapshots and then the store's indexes when r->snapshot_every batches
/// changed the store's indexes since they were written: an open after a crash then indexes
/// again at most that many batches' worth (docs/architecture.md, "What an open loads"). A
/// failure is logged and leaves the last snapshots as they were.
void checkpoint(storage::graph_store& store, resolver* r) {
  if (!r || !r->dedup || r->snapshot_dir.empty() || r->snapshot_every == 0)
    return;
  const auto t0 = std::chrono::steady_clock::now();
  auto saved = store.checkpoint_indexes(r->snapshot_every, [r]() -> engram::result<void> {
    hold_checkpoint();
    if (auto saved = r->dedup->save(r->snapshot_dir); !saved)
      return engram::fail(saved.error());
    return {};
  });
  if (!saved)
    logger().warn("snapshots not written after {} batches: {}", r->snapshot_every, saved.error());
  else if (*saved)
    logger().info("snapshots written after {} batches in {} ms", r->snapshot_every,
                  std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
}

/// Fault injection for the tests of a crash during a rebuild (docs/tests.md): with
/// ENGRAM_FAULT_REBUILD_KILL_AFTER=N in its environment, engramd kills itself (SIGKILL, as
/// kill -9 would) once a rebuild has applied N records again. 0: never.
std::uint64_t kill_in_rebuild_after() {
  static const std::uint64_t n = [] {
    const char* v = std::getenv("ENGRAM_FAULT_REBUILD_KILL_AFTER");
    return v ? std::strtoull(v, nullptr, 10) : 0;
  }();
  return n;
}

/// Fault injection for the tests of a member restoring partitions (docs/tests.md): with
/// ENGRAM_FAULT_APPLY_DELAY_MS=N in its environment, engramd waits N ms before applying each
/// engram-log record, so a restore lasts long enough to be seen from outside. 0: never.
std::chrono::milliseconds apply_delay() {
  static const std::chrono::milliseconds d = [] {
    const char* v = std::getenv("ENGRAM_FAULT_APPLY_DELAY_MS");
    return std::chrono::milliseconds(v ? std::strtoull(v, nullptr, 10) : 0);
  }();
  return d;
}

/// A forget of messages (message, thread, document, contact): the organisation is rebuilt from
/// engram-log without them (graph_store::begin_rebuild): its records before this one in its
/// partition (an organisation's records share one: the key is the organisation) applied
/// again through dedup and contradiction, the forgotten ones left out.
storage::errc forget_messages(storage::graph_store& store, resolver* r, const storage::log_position& position,
                              const schemas::knowledge_command& c, storage::apply_outcome* outcome,
                              services::applied_event* answer) {
  storage::command_result cr;
  if (auto why = r->log->check(position.partition, position.offset); !why.empty()) {
    auto e = store.apply_command(position, c, &cr, outcome);  // refused: no log to rebuild from
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = "id: cannot forget now: " + why;
    return e;
  }
  bool rebuild = false;
  if (auto e = store.begin_rebuild(position, c, &cr, outcome, &rebuild); e != storage::errc::ok)
    return e;
  answer->duplicate = *outcome == storage::apply_outcome::duplicate;
  answer->rejected = cr.error;
  if (!rebuild)
    return storage::errc::ok;
  const auto& org = c.organization_id;
  if (r->dedup)
    r->dedup->drop(org);
  std::uint64_t again = 0, left_out = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto e = r->log->read(position.partition, position.offset, [&](log_record& rec) {
    if (!rec.payload || schemas::organization_of(*rec.payload) != org)
      return storage::errc::ok;
    const auto& p = *rec.payload;
    if (const auto* g = std::get_if<schemas::knowledge_command>(&p);
        g && g->op == schemas::command_op::forget && schemas::forgets_messages(g->what))
      return store.rebuild_passed(*g);
    if (store.rebuild_skips(org, schemas::event_id_of(p))) {
      ++left_out;
      return storage::errc::ok;
    }
    ++again;
    rec.position.advance = false;
    storage::apply_outcome o{};
    auto applied = resolve_and_apply(store, r, rec, &o, nullptr);
    if (again == kill_in_rebuild_after()) {
      logger().critical("ENGRAM_FAULT_REBUILD_KILL_AFTER={}: killed in the rebuild", again);
      logger().flush();
      ::raise(SIGKILL);
    }
    return applied;
  });
  if (e != storage::errc::ok)
    return e;  // the forget stays pending: its redelivery rebuilds again
  if (e = store.finish_rebuild(position, c, &cr); e != storage::errc::ok)
    return e;
  save_snapshots(r);
  if (r->shred)
    r->shred(org, c.events);
  logger().info("forget {} '{}' in '{}': {} records applied again, {} left out, in {} ms", c.what, c.id, org, again,
                left_out,
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
  answer->command = std::move(cr);
  return storage::errc::ok;
}

/// Applies each kind of record; a kind without its handler here does not compile.
struct record_handler {
  storage::graph_store& store;
  resolver* r;
  const storage::log_position& position;
  storage::apply_outcome* outcome;
  services::applied_event* answer;

  storage::errc operator()(const schemas::extracted_message& x) const {
    return resolve_message(store, r, position, &x.message, &x.knowledge, outcome, answer);
  }
  // A format-1 message is read at the consumer (read_unread) and arrives as an extracted one;
  // were it not, it is kept as a message with nothing read from it.
  storage::errc operator()(const schemas::inbound_message& m) const {
    return resolve_message(store, r, position, &m, nullptr, outcome, answer);
  }
  storage::errc operator()(const schemas::knowledge_save& s) const {
    if (s.branch_id.empty())
      return apply_save(store, r, position, s, outcome, answer);
    auto e = store.apply_branch_save(position, s, s.embedding, outcome);
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->result = schemas::save_answer_json(s.organization_id, s.event_id, {});
    return e;
  }
  storage::errc operator()(const schemas::knowledge_command& c) const {
    if (c.op == schemas::command_op::merge_branch)
      return merge_branch(store, r, position, c, outcome, answer);
    if (c.op == schemas::command_op::forget && schemas::forgets_messages(c.what) && r && r->log)
      return forget_messages(store, r, position, c, outcome, answer);
    storage::command_result cr;
    auto e = store.apply_command(position, c, &cr, outcome);
    if (e != storage::errc::ok)
      return e;
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = cr.error;
    if (r && r->dedup) {
      for (const auto& [id, seq] : cr.removed)
        if (seq)
          r->dedup->forget(c.organization_id, seq);
      if (cr.organization_forgotten)
        r->dedup->drop(c.organization_id);
    }
    answer->bundles_changed = cr.organization_forgotten;  // its bundles' tools go too
    const bool forget = c.op == schemas::command_op::forget;
    // A retention forget leaves the entries and their vectors: no snapshot to write.
    if (forget && c.what != schemas::retention_kind && *outcome == storage::apply_outcome::applied &&
        cr.error.empty() && !store.rebuilding(c.organization_id)) {
      save_snapshots(r);
      if (cr.organization_forgotten && r && r->shred)
        r->shred(c.organization_id, {});
    }
    answer->command = std::move(cr);
    return e;
  }
  storage::errc operator()(const schemas::entity_command& c) const {
    storage::entity_result er;
    auto e = store.apply_entity_command(position, c, &er, outcome);
    if (e != storage::errc::ok)
      return e;
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = std::move(er.error);
    answer->result = std::move(er.json);
    return e;
  }
  storage::errc operator()(const schemas::kg_command& c) const {
    storage::kg_result kr;
    auto e = store.apply_kg_command(position, c, &kr, outcome);
    if (e != storage::errc::ok)
      return e;
    answer->duplicate = *outcome == storage::apply_outcome::duplicate;
    answer->rejected = std::move(kr.error);
    answer->result = std::move(kr.json);
    answer->bundles_changed = kr.changed;
    return e;
  }
};

}  // namespace

namespace {

/// resolve_and_apply without its checkpoint: the applier tells the waiting caller between the
/// two, so that a save is not answered a checkpoint later.
storage::errc resolve_and_apply_record(storage::graph_store& store, resolver* r, const log_record& rec,
                                       storage::apply_outcome* outcome, services::applied_event* answer) {
  services::applied_event ignored;
  if (!answer)
    answer = &ignored;
  return rec.payload ? std::visit(record_handler{store, r, rec.position, outcome, answer}, *rec.payload)
                     : resolve_message(store, r, rec.position, nullptr, nullptr, outcome, answer);
}

}  // namespace

storage::errc resolve_and_apply(storage::graph_store& store, resolver* r, const log_record& rec,
                                storage::apply_outcome* outcome, services::applied_event* answer) {
  const auto e = resolve_and_apply_record(store, r, rec, outcome, answer);
  if (e == storage::errc::ok)
    checkpoint(store, r);
  return e;
}

namespace {

/// The counters and the waiting caller, once a record is applied.
void tell(store_writer_state& st, const log_record& rec, storage::apply_outcome outcome,
          services::applied_event&& answer) {
  for (const auto& d : answer.resolutions)
    st.counters->count_resolution(schemas::to_string(d.outcome), d.flagged.size());
  if (!rec.payload)
    return;
  const auto& p = *rec.payload;
  const bool done = outcome == storage::apply_outcome::applied && answer.rejected.empty();
  if (auto* c = std::get_if<schemas::knowledge_command>(&p); c && done)
    st.counters->count_command(schemas::to_string(c->op));
  if (auto* c = std::get_if<schemas::entity_command>(&p); c && done)
    st.counters->count_command(schemas::to_string(c->op));
  if (!st.notifier)
    return;
  const bool bundles_changed = answer.bundles_changed;
  st.notifier->applied(schemas::organization_of(p), schemas::event_id_of(p), std::move(answer));
  if (bundles_changed)
    st.notifier->bundles_changed(schemas::organization_of(p));
}

/// Lets an engram-log partition go (partition_drop): its position first, so that an
/// interruption leaves organisations that read as never applied (engramd drops them at its
/// next start), then each organisation of it, its dedup index and snapshot with it.
batch_result drop_partition(store_writer_state& st, const partition_drop& d) {
  batch_result r;
  if (d.still_gone && !d.still_gone()) {
    r.skipped = 1;  // it came back: nothing goes
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (r.error = st.store->drop_position(d.topic, d.partition); r.error != storage::errc::ok)
    return r;
  for (const auto& org : st.store->held_organizations()) {
    if (!d.belongs(org))
      continue;
    if (r.error = st.store->drop_held(org); r.error != storage::errc::ok)
      return r;
    if (st.resolve && st.resolve->dedup)
      st.resolve->dedup->drop(org);
    if (st.notifier)
      st.notifier->bundles_changed(org);  // its bundles' tools go from this member
    ++r.done;
  }
  logger().info("{}/{}: let go, {} organisations dropped in {} ms", d.topic, d.partition, r.done,
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

}  // namespace

stage_actor::behavior_type store_writer(stage_actor::stateful_pointer<store_writer_state> self,
                                        std::shared_ptr<storage::graph_store> store, std::shared_ptr<resolver> resolve,
                                        services::metrics* m, ingest_status* status, services::apply_notifier* notifier,
                                        std::string label) {
  self->state.notifier = notifier;
  self->state.label = std::move(label);
  self->state.store = std::move(store);
  self->state.resolve = std::move(resolve);
  self->state.counters = m;
  self->state.status = status;
  // An exception out of a record's apply stops the applier with its text as the reason
  // (store_watch reports it; the engine stops). The record's vectors may be in the index and
  // not in RocksDB: no snapshot is written from it, marked before any batch goes unanswered.
  self->set_exception_handler([self](caf::scheduled_actor*, std::exception_ptr& x) {
    if (self->state.resolve && self->state.resolve->dedup)
      self->state.resolve->dedup->poisoned();
    return applier_exception("store applier (actor " + std::to_string(self->id()) + ")", x);
  });
  return {
      [self](event_batch& batch) {
        auto& st = self->state;
        if (!st.named)  // its own thread (detached): named for top -H and the benchmarks
          st.named = ::pthread_setname_np(::pthread_self(), "engram-applier") == 0;
        // Stopped before the batch is answered: whoever waits for it may then stop the metrics.
        busy_clock clock(st.counters, st.label, self);
        if (batch.drop) {
          auto dropped = drop_partition(st, *batch.drop);
          clock.stop();
          return complete(batch, dropped);
        }
        batch_result r;
        for (const auto& rec : batch.records) {
          if (batch.let_go && batch.let_go->load())
            break;  // the partitions are revoked: the rest is their next owner's
          if (apply_delay().count() > 0)
            std::this_thread::sleep_for(apply_delay());
          storage::apply_outcome outcome{};
          services::applied_event answer;
          r.error = resolve_and_apply_record(*st.store, st.resolve.get(), rec, &outcome, &answer);
          if (r.error != storage::errc::ok)
            break;  // the consumer stops; nothing after the failure is applied
          ++r.done;
          st.status->applied(rec.position.partition, rec.position.offset + 1);
          switch (outcome) {
            case storage::apply_outcome::applied: ++r.applied; break;
            case storage::apply_outcome::duplicate: ++r.duplicates; break;
            case storage::apply_outcome::skipped: ++r.skipped; break;
          }
          tell(st, rec, outcome, std::move(answer));
          checkpoint(*st.store, st.resolve.get());  // after the answer: a save does not wait for it
        }
        st.counters->count_applied(r.applied);
        st.counters->count_duplicates(r.duplicates);
        st.counters->count_skipped(r.skipped);
        if (st.resolve && st.resolve->dedup)
          st.counters->set_index_size(st.resolve->dedup->total_size());
        auto now = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < r.done; ++i)
          st.counters->observe_apply_latency(std::chrono::duration<double>(now - batch.records[i].received_at).count());
        clock.stop();
        complete(batch, r);
      },
  };
}

}  // namespace engram::actors
