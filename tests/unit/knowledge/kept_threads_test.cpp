// The threads a query service keeps for the work recalls run beside themselves.
#include "query/kept_threads.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace engram {
namespace {

TEST(KeptThreads, EveryTaskPostedRunsOnOneOfAtMostTheThreadsAsked) {
  constexpr int posters = 4, each = 50;
  std::mutex mutex;
  std::set<std::thread::id> ran_on;
  std::atomic<int> ran{0};
  std::promise<void> all_ran;
  std::set<std::thread::id> poster_ids;
  {
    query::kept_threads threads(2);
    std::vector<std::thread> callers;
    for (int p = 0; p < posters; ++p)
      callers.emplace_back([&] {
        {
          std::lock_guard lock(mutex);
          poster_ids.insert(std::this_thread::get_id());
        }
        for (int i = 0; i < each; ++i)
          ASSERT_TRUE(threads.post([&] {
            {
              std::lock_guard lock(mutex);
              ran_on.insert(std::this_thread::get_id());
            }
            if (++ran == posters * each)
              all_ran.set_value();
          }));
      });
    for (auto& t : callers)
      t.join();
    all_ran.get_future().wait();
  }
  EXPECT_EQ(ran.load(), posters * each);
  EXPECT_GE(ran_on.size(), 1u);
  EXPECT_LE(ran_on.size(), 2u);
  for (const auto& id : ran_on)
    EXPECT_EQ(poster_ids.count(id), 0u) << "a task ran on the thread that posted it";
}

// What a recall does: the task waits for its poster, which waits for the task's result. With
// one thread only, tasks posted by several such posters all finish.
TEST(KeptThreads, ATaskMayWaitForItsPosterWhichWaitsForIt) {
  query::kept_threads threads(1);
  std::vector<std::thread> callers;
  std::atomic<int> answered{0};
  for (int p = 0; p < 4; ++p)
    callers.emplace_back([&, p] {
      for (int i = 0; i < 20; ++i) {
        struct exchange {
          std::promise<int> handed, answer;
        };
        auto io = std::make_shared<exchange>();  // the task may outlive this iteration's wait
        auto got = io->answer.get_future();
        ASSERT_TRUE(threads.post([io] { io->answer.set_value(io->handed.get_future().get() + 1); }));
        io->handed.set_value(p * 100 + i);
        ASSERT_EQ(got.get(), p * 100 + i + 1);
        ++answered;
      }
    });
  for (auto& t : callers)
    t.join();
  EXPECT_EQ(answered.load(), 80);
}

}  // namespace
}  // namespace engram
