// The benchmark table of docs/benchmarks.md: the headline figures as one Markdown table (table_bench.hpp).
#include "tools/bench/table_bench.hpp"

#include "tools/bench/backlog_bench.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/ingest_bench.hpp"
#include "tools/bench/memory_bench.hpp"
#include "tools/bench/recall_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace engram::bench {

namespace {

using clock_type = std::chrono::steady_clock;

/// Thousands separators: 100000 -> "100,000".
std::string grouped(std::size_t n) {
  const auto digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

int bench_table(const std::string& model_path, const std::string& ham_dir, bool quick) {
  const std::size_t small = quick ? 500 : 10000, large = quick ? 2000 : 100000;
  const std::size_t queries = quick ? 40 : 1000, saves = quick ? 20 : 100;
  const auto t0 = clock_type::now();
  std::printf("## embedding\n");
  auto em = embed(model_path, ham_sentences(ham_dir, quick ? 100 : 2000), quick ? 1 : 3);
  std::printf("## recall at %s entries\n", grouped(small).c_str());
  auto r1 = bench_recall(model_path, ham_dir, small, queries, saves);
  std::printf("## recall at %s entries\n", grouped(large).c_str());
  auto r2 = bench_recall(model_path, ham_dir, large, queries, saves);
  std::printf("## ingest and replay of the ham corpus\n");
  auto in = bench_ingest_ham(model_path, ham_dir, quick ? 1 : 3, quick ? 20 : 600);
  std::printf("## many organisations on many partitions\n");
  auto orgs = bench_organisations(model_path, quick ? 5 : 150, quick ? 1 : 3);
  std::printf("## real mail\n");
  auto mail = bench_real_mail(model_path, ham_dir, quick ? 40 : 750);

  // The median replay rate of the dense backlog with one store applier (0) or two (1).
  const auto replay_median = [](const pipeline_figures& f, int which) {
    std::vector<double> rates;
    for (const auto& r : f.many_orgs.replays[which])
      rates.push_back(r.records_per_s);
    return rates.empty() ? 0.0 : median(rates);
  };
  const char* commit_env = std::getenv("ENGRAM_COMMIT");
  const std::string commit = commit_env && *commit_env ? commit_env : "unknown";
  const unsigned cores = std::thread::hardware_concurrency();
  struct row {
    std::string figure, value, unit, compared;
  };
  auto num = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  const std::string at1 = grouped(small) + " entries", at2 = grouped(large) + " entries";
  std::vector<row> rows{
      {"ingest, ham corpus end to end (" + grouped(in.messages) + " messages)", num(in.end_to_end, 0), "messages/s",
       "engram-log -> store alone: " + num(in.log_to_store, 0) + " messages/s"},
      {"ingest, 16 organisations on 16 partitions, dense mail (" + grouped(orgs.many_orgs.messages) + " messages)",
       num(orgs.many_orgs.rate(), 0), "messages/s",
       "1 organisation on 4 partitions: " + num(orgs.one_org.rate(), 0) + " messages/s (ratio " +
           num(orgs.many_orgs.rate() / std::max(orgs.one_org.rate(), 1e-9), 2) + ")"},
      {"ingest, real mail, hard-ham and spam (" + grouped(mail.real_mail.messages) + " messages)",
       num(mail.real_mail.rate(), 0), "messages/s",
       num(mail.real_mail.megabytes_per_s(), 2) + " MB/s; first applied after " +
           num(mail.real_mail.first_applied_s, 2) + " s"},
      {"stop while a backlog is applied", num(mail.stopped.stop_s, 2), "s",
       grouped(mail.stopped.applied_at_stop) + " of " + grouped(mail.stopped.messages) +
           " real mails applied at the stop"},
      {"recall p50, " + at1, num(r1.recall_p50, 1), "ms", "target at 100k: 2 ms"},
      {"recall p99, " + at1, num(r1.recall_p99, 1), "ms", "target at 100k: 10 ms"},
      {"recall p50, " + at2, num(r2.recall_p50, 1), "ms",
       "target 2 ms; query embedding " + num(r2.embed_p50, 1) + " ms, BM25 " + num(r2.text_p50, 1) + " ms of it"},
      {"recall p99, " + at2, num(r2.recall_p99, 1), "ms", "target 10 ms"},
      {"save round trip p50, " + at2, num(r2.save_p50, 1), "ms", "at " + at1 + ": " + num(r1.save_p50, 1) + " ms"},
      {"save round trip p99, " + at2, num(r2.save_p99, 1), "ms", "at " + at1 + ": " + num(r1.save_p99, 1) + " ms"},
      {"replay of engram-log into a new store (" + grouped(static_cast<std::size_t>(in.replayed)) + " records)",
       num(in.replay, 0), "records/s", "live engram-log -> store: " + num(in.log_to_store, 0) + " messages/s"},
      {"replay, 16 organisations on 16 partitions, 2 store appliers", num(replay_median(orgs, 1), 0), "records/s",
       "1 applier: " + num(replay_median(orgs, 0), 0) + " records/s (ratio " +
           num(replay_median(orgs, 1) / std::max(replay_median(orgs, 0), 1e-9), 2) + ")"},
      {"RSS per stored entry, " + at2, num(double(r2.engine_rss) / double(large), 0), "bytes",
       "engine total " + num(double(r2.engine_rss) / 1048576.0, 0) + " MiB; vector alone 516 bytes"},
      {"embedding, one sentence at a time (" + num(em.avg_tokens, 1) + " tokens)", num(em.single_ms, 2), "ms/sentence",
       "int8, 1 core; float32 reference " + num(em.float_single_ms, 2) + " ms"},
      {"embedding, in runs of 64", num(em.batched_ms, 2), "ms/sentence",
       "int8, 1 core; float32 reference " + num(em.float_batched_ms, 2) + " ms"},
      {"embedding, a query (" + num(em.query_tokens, 1) + " tokens)", num(em.query_ms, 2), "ms",
       "int8, 1 core, one at a time"},
      {"cosine int8 vs float32, mean over " + grouped(quick ? 100 : 2000) + " ham sentences", num(em.cosine_mean, 5),
       "cosine", "least " + num(em.cosine_min, 5)},
  };
  std::printf("\n| figure | value | unit | compared with | cores | commit |\n|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %s | %s | %s | %u | %s |\n", r.figure.c_str(), r.value.c_str(), r.unit.c_str(),
                r.compared.c_str(), cores, commit.c_str());
  std::printf(
      "\n%s run, %.0f s in all. Latencies are medians (p50) and 99th percentiles over %zu recalls and %zu "
      "saves on loopback HTTP; rates are medians of %d runs.\n",
      quick ? "Quick (not comparable)" : "Full", std::chrono::duration<double>(clock_type::now() - t0).count(), queries,
      saves, quick ? 1 : 3);
  return 0;
}

}  // namespace engram::bench
