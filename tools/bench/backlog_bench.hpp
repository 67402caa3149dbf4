#pragma once
// Benchmarks of a backlog through the whole pipeline (bench::drain, pipeline_bench.hpp):
// dense business mail for 16 organisations on 16 partitions against as much for one
// organisation on 4, and real mail (SpamAssassin hard-ham and spam) with a stop while it is
// applied. They print figures; nothing here asserts a speed.

#include "tools/bench/pipeline_bench.hpp"

#include <cstddef>
#include <string>

namespace engram::bench {

/// What bench_organisations (one_org, many_orgs) and bench_real_mail (real_mail, stopped)
/// measured; the benchmark table reads both.
struct pipeline_figures {
  drain_figures one_org, many_orgs, real_mail, stopped;
};

/// Dense business mail as one backlog: `per_org` messages for each of 16 organisations on
/// 16 partitions, and as many for one organisation on 4 partitions.
pipeline_figures bench_organisations(const std::string& model_path, std::size_t per_org, int replay_rounds);

/// Real mail as one backlog: SpamAssassin hard-ham and spam (long bodies, HTML, lists),
/// `limit` mails at most; then the same backlog again, stopped as soon as a tenth of it is
/// applied.
pipeline_figures bench_real_mail(const std::string& model_path, const std::string& data_dir, std::size_t limit);

}  // namespace engram::bench
