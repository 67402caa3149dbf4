// Backlogs through the whole pipeline: many organisations, real mail, a stop midway (backlog_bench.hpp).
#include "tools/bench/backlog_bench.hpp"

#include "schemas/inbound_message.hpp"
#include "actors/ingest/members.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/synthetic.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace engram::bench {

namespace {

void print_drain(const char* what, const drain_figures& f) {
  std::printf("  %s: %zu messages (%.1f MB) in %.1f s: %.0f messages/s, %.2f MB/s; first applied after %.2f s\n", what,
              f.messages, f.megabytes, f.seconds, f.rate(), f.megabytes_per_s(), f.first_applied_s);
}

}  // namespace

pipeline_figures bench_organisations(const std::string& model_path, std::size_t per_org, int replay_rounds) {
  // One organisation a partition: the first names "org-<i>" the partitioner puts on each of
  // the 16 (org-0 … org-15 would leave two partitions empty and put 10 organisations on the
  // even partitions, so 2 store appliers, which take partitions by parity, would share 10 : 6).
  std::vector<std::string> sixteen(16);
  for (int i = 0, found = 0; found < 16; ++i)
    if (auto& name = sixteen[static_cast<std::size_t>(ingest::partition_of("org-" + std::to_string(i), 16))];
        name.empty()) {
      name = "org-" + std::to_string(i);
      ++found;
    }
  pipeline_figures f;
  f.one_org = drain(evaluation::synthetic::dense_events(16 * per_org, {"solo"}), 4, model_path);
  f.many_orgs = drain(evaluation::synthetic::dense_events(16 * per_org, sixteen), 16, model_path, false, replay_rounds);
  std::printf("backlog of dense business mail (8 statements a message), default configuration, %u cores:\n",
              std::thread::hardware_concurrency());
  print_drain("1 organisation on 4 partitions   ", f.one_org);
  print_drain("16 organisations on 16 partitions", f.many_orgs);
  const auto& runs = f.many_orgs.replays;
  for (int a = 0; a < 2; ++a) {
    std::vector<double> rates, cpu_ms;
    for (const auto& r : runs[a]) {
      std::printf(
          "  replay of its engram-log into a new store, %u store applier(s): %lld records at %.0f records/s (%llu "
          "entries), %.2f CPU ms a record, first applied after %.1f s; digest %s the live store's\n",
          r.appliers, static_cast<long long>(r.records), r.records_per_s, static_cast<unsigned long long>(r.entries),
          r.cpu_ms_per_record(), r.start_s, r.digest == f.many_orgs.digest ? "equal to" : "DIFFERENT from");
      if (r.digest != f.many_orgs.digest)
        throw std::runtime_error("the replay rebuilt another store than the live one (digests differ)");
      std::string steps;
      for (const auto& [step, seconds] : r.steps)
        steps +=
            (steps.empty() ? "" : ", ") + step + " " + std::to_string(1000 * seconds / double(r.records)).substr(0, 4);
      std::printf("    ms a record in the appliers' steps (wall time of their threads): %s\n", steps.c_str());
      std::vector<std::pair<double, std::string>> by_cpu;
      for (const auto& [name, seconds] : r.cpu_by_thread)
        by_cpu.emplace_back(seconds, name);
      std::sort(by_cpu.rbegin(), by_cpu.rend());
      std::string threads;
      for (std::size_t i = 0; i < std::min<std::size_t>(6, by_cpu.size()); ++i)
        threads += (threads.empty() ? "" : ", ") + by_cpu[i].second + " " +
                   std::to_string(1000 * by_cpu[i].first / r.timed_records).substr(0, 4);
      std::printf("    CPU ms a record by thread: %s\n", threads.c_str());
      rates.push_back(r.records_per_s);
      cpu_ms.push_back(r.cpu_ms_per_record());
    }
    if (!rates.empty())
      std::printf("  replay, %d store applier(s), median of %zu: %.0f records/s, %.2f CPU ms a record\n", a + 1,
                  rates.size(), median(rates), median(cpu_ms));
  }
  if (!runs[0].empty() && runs[0].size() == runs[1].size()) {
    std::vector<double> ratios;
    std::string each;
    for (std::size_t i = 0; i < runs[0].size(); ++i) {
      ratios.push_back(runs[1][i].records_per_s / runs[0][i].records_per_s);
      each += (each.empty() ? "" : " ") + std::to_string(ratios.back()).substr(0, 4);
    }
    std::printf("  two appliers / one, round by round: %s; median %.2f\n", each.c_str(), median(ratios));
  }
  return f;
}

pipeline_figures bench_real_mail(const std::string& model_path, const std::string& data_dir, std::size_t limit) {
  auto msgs = ham_messages(data_dir, "mail", nullptr, nullptr, {"hard-ham-1", "spam-1"});
  if (msgs.size() > limit)
    msgs.resize(limit);
  std::vector<std::string> events;
  for (const auto& m : msgs)
    events.push_back(schemas::to_json(m));
  pipeline_figures f;
  f.real_mail = drain(events, 4, model_path);
  f.stopped = drain(events, 4, model_path, /*stop_midway=*/true);
  std::printf("backlog of real mail (SpamAssassin hard-ham-1 and spam-1), default configuration, %u cores:\n",
              std::thread::hardware_concurrency());
  print_drain("import", f.real_mail);
  std::printf("  stop while it is applied (%zu of %zu applied): %.2f s to stop\n", f.stopped.applied_at_stop,
              f.stopped.messages, f.stopped.stop_s);
  return f;
}

}  // namespace engram::bench
