// Backlogs through the whole pipeline: many organisations, real mail, a stop midway (backlog_bench.hpp).
#include "tools/bench/backlog_bench.hpp"

#include "schemas/inbound_message.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/synthetic.hpp"

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

pipeline_figures bench_organisations(const std::string& model_path, std::size_t per_org) {
  std::vector<std::string> sixteen;
  for (int i = 0; i < 16; ++i)
    sixteen.push_back("org-" + std::to_string(i));
  pipeline_figures f;
  f.one_org = drain(evaluation::synthetic::dense_events(16 * per_org, {"solo"}), 4, model_path);
  f.many_orgs =
      drain(evaluation::synthetic::dense_events(16 * per_org, sixteen), 16, model_path, false, /*replay=*/true);
  std::printf("backlog of dense business mail (8 statements a message), default configuration, %u cores:\n",
              std::thread::hardware_concurrency());
  print_drain("1 organisation on 4 partitions   ", f.one_org);
  print_drain("16 organisations on 16 partitions", f.many_orgs);
  for (const auto* r : {&f.many_orgs.replay, &f.many_orgs.replay_two}) {
    std::printf(
        "  replay of its engram-log into a new store, %u store applier(s): %lld records at %.0f records/s (%llu "
        "entries: %.0f entries/s), %.2f CPU ms a record, first applied after %.1f s; digest %s the live store's\n",
        r->appliers, static_cast<long long>(r->records), r->records_per_s, static_cast<unsigned long long>(r->entries),
        r->entries_per_s(), r->cpu_ms_per_record(), r->start_s,
        r->digest == f.many_orgs.digest ? "equal to" : "DIFFERENT from");
    if (r->digest != f.many_orgs.digest)
      throw std::runtime_error("the replay rebuilt another store than the live one (digests differ)");
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
