// What forgetting costs (forget_bench.hpp).
#include "tools/bench/forget_bench.hpp"

#include "actors/store/store_writer.hpp"
#include "reading/extract.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace engram::bench {

namespace {

std::uintmax_t bytes_under(const std::filesystem::path& dir) {
  std::uintmax_t n = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir))
    if (f.is_regular_file())
      n += f.file_size();
  return n;
}

/// engram-log as the bench applied it, held in memory: what a forget of messages reads back.
class memory_log final : public actors::log_source {
public:
  std::vector<actors::log_record> records;
  std::string check(std::int32_t, std::int64_t) override { return {}; }
  storage::errc read(std::int32_t, std::int64_t end,
                     const std::function<storage::errc(actors::log_record&)>& each) override {
    for (auto rec : records) {  // a copy: the rebuild marks it not to advance the offset
      if (rec.position.offset >= end)
        break;
      if (auto e = each(rec); e != storage::errc::ok)
        return e;
    }
    return storage::errc::ok;
  }
};

}  // namespace

int forget_contact(std::size_t messages, std::size_t theirs) {
  using clock_type = std::chrono::steady_clock;
  if (theirs > messages)
    throw std::runtime_error("--contact-messages is more than --messages");
  const auto dir =
      std::filesystem::temp_directory_path() / ("engram-bench-forget-contact-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::shared_ptr<storage::graph_store> store = open_store(dir.string());
  auto log = std::make_shared<memory_log>();
  actors::resolver r;  // no dedup: the store is built without vectors, as in `forget`
  r.log = log;
  const auto evs = evaluation::synthetic::dense_events(messages, {"acme"});
  const schemas::participant them{"Zoe Quist", "zoe@partner.example", "c-zoe"};
  const auto t0 = clock_type::now();
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    schemas::inbound_message m;
    if (auto bad = schemas::decode(evs[i], {}, m))
      throw std::runtime_error(bad->to_string());
    if ((i + 1) * theirs / messages != i * theirs / messages)  // `theirs` of them, spread evenly
      m.from = them;
    actors::log_record rec;
    rec.position = {"engram-log", 0, offset++, "bench"};
    rec.payload = schemas::extracted_message{m, reading::extract_validated(m, {}), ""};
    storage::apply_outcome out{};
    if (actors::resolve_and_apply(*store, &r, rec, &out) != storage::errc::ok)
      throw std::runtime_error("apply failed");
    log->records.push_back(std::move(rec));
  }
  const double build_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::uint64_t entries = 0;
  for (const auto& s : store->stats())
    entries += s.entries;
  std::printf(
      "store: %zu messages of acme (%zu sent by zoe@partner.example), %llu entries, built in %.0f s, %.0f MiB\n",
      evs.size(), theirs, static_cast<unsigned long long>(entries), build_s, double(bytes_under(dir)) / (1 << 20));

  schemas::knowledge_command c;
  c.op = schemas::command_op::forget;
  c.organization_id = "acme";
  c.event_id = "forget-contact";
  c.issued_at = "2026-11-27T00:00:00.000Z";
  c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
  c.issued_by = "bench";
  c.what = "contact";
  c.id = them.address;
  const auto t1 = clock_type::now();
  auto targets = store->find_forget_targets("acme", c.what, c.id);  // what forget_knowledge reads
  if (!targets.error.empty())
    throw std::runtime_error(targets.error);
  const double find_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t1).count();
  c.events = std::move(targets.events);
  c.people = std::move(targets.people);
  actors::log_record rec;
  rec.position = {"engram-log", 0, offset++, "bench"};
  rec.payload = c;
  storage::apply_outcome out{};
  services::applied_event answer;
  const auto t2 = clock_type::now();
  if (actors::resolve_and_apply(*store, &r, rec, &out, &answer) != storage::errc::ok || !answer.rejected.empty())
    throw std::runtime_error("forget failed: " + answer.rejected);
  const double forget_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t2).count();
  std::printf(
      "\n| forget a contact (RocksDB, %u cores) | |\n|---|---|\n"
      "| their messages | %zu of %zu |\n| finding them (forget_knowledge) | %.0f ms |\n"
      "| the forget: the rebuild of acme from the log without them, the flush and the compaction | %.0f ms |\n\n"
      "answer: %s\nafter: %.0f MiB on disk\n",
      std::thread::hardware_concurrency(), c.events.size(), evs.size(), find_ms, forget_ms, answer.result.c_str(),
      double(bytes_under(dir)) / (1 << 20));
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

int forget(std::size_t messages, int runs) {
  using clock_type = std::chrono::steady_clock;
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-forget-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto store = open_store(dir.string());
  const auto evs = evaluation::synthetic::dense_events(messages * 3, {"acme", "globex", "initech"});
  const auto t0 = clock_type::now();
  std::int64_t offset = 0;
  for (const auto& e : evs) {
    schemas::inbound_message m;
    if (auto bad = schemas::decode(e, {}, m))
      throw std::runtime_error(bad->to_string());
    const auto x = reading::extract_validated(m, {});  // the rules (no embedder: no vectors)
    storage::apply_outcome out{};
    if (store->apply({"engram-log", 0, offset++, "bench"}, &m, &x, nullptr, &out) != storage::errc::ok)
      throw std::runtime_error("apply failed");
  }
  const double build_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::uint64_t acme_entries = 0, all_entries = 0;
  for (const auto& s : store->stats()) {
    all_entries += s.entries;
    if (s.organization_id == "acme")
      acme_entries = s.entries;
  }
  std::printf("store: %zu messages (%zu of acme), %llu entries (%llu of acme), built in %.0f s, %.0f MiB on disk\n",
              evs.size(), messages, static_cast<unsigned long long>(all_entries),
              static_cast<unsigned long long>(acme_entries), build_s, double(bytes_under(dir)) / (1 << 20));

  auto command = [&](const std::string& what, const std::string& id) {
    schemas::knowledge_command c;
    c.op = schemas::command_op::forget;
    c.organization_id = "acme";
    c.event_id = "forget-" + std::to_string(offset);
    c.issued_at = "2026-11-27T00:00:00.000Z";
    c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
    c.issued_by = "bench";
    c.what = what;
    c.id = id;
    storage::command_result r;
    storage::apply_outcome out{};
    const auto t = clock_type::now();
    if (store->apply_command({"engram-log", 0, offset++, "bench"}, c, &r, &out) != storage::errc::ok ||
        !r.error.empty())
      throw std::runtime_error("forget failed: " + r.error);
    return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
  };
  std::vector<std::string> ids;
  for (auto t : schemas::all_entry_types)
    for (auto& id : store->entries_of_type("acme", t))
      ids.push_back(std::move(id));
  if (ids.empty())
    throw std::runtime_error("acme has no entries to forget");
  std::vector<double> entry_ms;
  for (int i = 0; i < runs && i < static_cast<int>(ids.size()); ++i)
    entry_ms.push_back(command("entry", ids[static_cast<std::size_t>(i) * ids.size() / runs]));
  const double org_ms = command("organization", "acme");
  // A clustered member letting go of a partition (docs/scaling-out.md): its position, then
  // each of its organisations' rows and in-memory indexes; no flush, no compaction.
  std::uint64_t globex_entries = 0;
  for (const auto& s : store->stats())
    if (s.organization_id == "globex")
      globex_entries = s.entries;
  // What the range tombstones of drops cost the reads of an organisation that stays: every
  // entry of initech, listed and read, before and after (median of `runs`).
  std::size_t initech_entries = 0;
  auto read_initech = [&] {
    std::vector<double> ms;
    for (int i = 0; i < std::max(runs, 1); ++i) {
      const auto t = clock_type::now();
      std::size_t n = 0;
      for (auto type : schemas::all_entry_types) {
        const auto ids = store->entries_of_type("initech", type);
        for (const auto& e : store->get_entries("initech", ids))
          n += e.has_value();
      }
      ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
      initech_entries = n;
    }
    return median(ms);
  };
  const double read_before_ms = read_initech();
  const auto t_drop = clock_type::now();
  if (store->drop_position("engram-log", 0) != storage::errc::ok || store->drop_held("globex") != storage::errc::ok)
    throw std::runtime_error("drop failed");
  const double drop_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t_drop).count();
  const double read_after_one_ms = read_initech();
  // A member that let go of many organisations: 500 more drops (their tombstones, not yet
  // compacted away, lie over key ranges around initech's).
  constexpr int more_drops = 500;
  std::vector<std::string> dropped{"globex"};
  for (int i = 0; i < more_drops; ++i) {
    dropped.push_back("gone-" + std::to_string(1000 + i));
    if (store->drop_held(dropped.back()) != storage::errc::ok)
      throw std::runtime_error("drop failed");
  }
  const double read_after_many_ms = read_initech();
  const auto t_compact = clock_type::now();
  if (store->compact_dropped(dropped, nullptr) != storage::errc::ok)
    throw std::runtime_error("compaction failed");
  const double compact_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t_compact).count();
  const double read_compacted_ms = read_initech();
  std::printf(
      "\n| forget (RocksDB, the flush and the compaction of acme's ranges included, %u cores) | time |\n|---|---|\n"
      "| one entry, median of %zu | %.0f ms |\n| the organisation acme (%llu entries) | %.0f ms |\n"
      "| letting go of the organisation globex (%llu entries; a cluster member dropping a partition) | %.0f ms |\n\n"
      "| reading every entry of initech (%zu), median of %d | time |\n|---|---|\n"
      "| before the drops | %.1f ms |\n| after globex's drop (its range tombstones) | %.1f ms |\n"
      "| after %d more organisations' drops | %.1f ms |\n"
      "| after compact_dropped() of them all (it took %.0f ms) | %.1f ms |\n\n"
      "after: %.0f MiB on disk\n",
      std::thread::hardware_concurrency(), entry_ms.size(), median(entry_ms),
      static_cast<unsigned long long>(acme_entries), org_ms, static_cast<unsigned long long>(globex_entries), drop_ms,
      initech_entries, std::max(runs, 1), read_before_ms, read_after_one_ms, more_drops, read_after_many_ms, compact_ms,
      read_compacted_ms, double(bytes_under(dir)) / (1 << 20));
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace engram::bench
