// What a hop between two actors costs (hop_bench.hpp).
#include "tools/bench/hop_bench.hpp"

#include "actors/common/pipeline.hpp"
#include "tools/bench/bench_support.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace engram::bench {

namespace {

/// Completes each batch it is given: the last actor of a chain.
actors::stage_actor::behavior_type completes(actors::stage_actor::pointer) {
  return {[](actors::event_batch& b) { actors::complete(b, actors::batch_result{}); }};
}

/// Hands each batch on to `next`: a stage in front of it.
actors::stage_actor::behavior_type hands_on(actors::stage_actor::pointer self, actors::stage_actor next) {
  return {[self, next](actors::event_batch& b) { self->send(next, std::move(b)); }};
}

/// Median microseconds of `n` round trips: a one-record batch sent to `head`, its promise
/// awaited.
double round_trip_us(const actors::stage_actor& head, std::size_t n) {
  std::vector<double> us;
  us.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    actors::event_batch b;
    b.records.resize(1);
    b.done = std::make_shared<std::promise<actors::batch_result>>();
    auto answer = b.done->get_future();
    const auto t0 = std::chrono::steady_clock::now();
    caf::anon_send(head, std::move(b));
    (void)answer.get();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(us);
}

}  // namespace

hop_figures bench_hops(std::size_t n) {
  hop_figures f;
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", std::size_t{2});
  {
    caf::actor_system sys(cfg);
    auto last = sys.spawn<caf::detached>(completes);
    auto first = sys.spawn<caf::detached>(hands_on, last);
    (void)round_trip_us(first, n / 10 + 1);    // threads woken, caches warm
    for (int round = 0; round < 3; ++round) {  // interleaved: a drift weighs on both
      f.direct_us += round_trip_us(last, n) / 3;
      f.chained_us += round_trip_us(first, n) / 3;
    }
    caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(last, caf::exit_reason::user_shutdown);
  }
  std::printf(
      "actor hops (detached actors, as the store appliers are), %u cores: a batch to an actor and its answer back "
      "%.1f us (median of %zu, 3 rounds); through one more actor first %.1f us: %.1f us a hop\n",
      std::thread::hardware_concurrency(), f.direct_us, n, f.chained_us, f.per_hop_us());
  return f;
}

}  // namespace engram::bench
