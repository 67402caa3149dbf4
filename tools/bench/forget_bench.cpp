// What forgetting costs (forget_bench.hpp).
#include "tools/bench/forget_bench.hpp"

#include "reading/extract.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/synthetic.hpp"

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

}  // namespace

int forget(std::size_t messages, int runs) {
  using clock_type = std::chrono::steady_clock;
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-forget-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto store = open_store(dir.string());
  const auto evs = synthetic::dense_events(messages * 3, {"acme", "globex", "initech"});
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
  std::printf(
      "\n| forget (RocksDB, the flush and the compaction of acme's ranges included, %u cores) | time |\n|---|---|\n"
      "| one entry, median of %zu | %.0f ms |\n| the organisation acme (%llu entries) | %.0f ms |\n\n"
      "after: %.0f MiB on disk\n",
      std::thread::hardware_concurrency(), entry_ms.size(), median(entry_ms),
      static_cast<unsigned long long>(acme_entries), org_ms, double(bytes_under(dir)) / (1 << 20));
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace engram::bench
