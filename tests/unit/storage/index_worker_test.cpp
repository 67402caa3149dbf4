#include "storage/index_worker.hpp"

#include <atomic>
#include <future>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace engram::storage {
namespace {

TEST(IndexWorker, RunsChangesInPostOrderAndSettleSeesEveryOnePostedBefore) {
  std::vector<int> seen;  // written by the worker only, read after settle()
  index_worker w("test-worker", 4);
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 20; ++i)  // more than max_pending: post() waits for room
      w.post([&seen, v = round * 20 + i] { seen.push_back(v); });
    w.settle();
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(round * 20 + 20));
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    ASSERT_EQ(seen[i], static_cast<int>(i));
}

TEST(IndexWorker, SettleWaitsForAChangeStillRunning) {
  index_worker w("test-worker");
  std::promise<void> started, release;
  auto released = release.get_future().share();
  std::atomic<bool> finished{false};
  w.post([&] {
    started.set_value();
    released.wait();
    finished = true;
  });
  started.get_future().wait();  // the change runs now
  auto settled = std::async(std::launch::async, [&] {
    w.settle();
    return finished.load();
  });
  release.set_value();
  EXPECT_TRUE(settled.get());  // settle() returned only after the change had finished
}

TEST(IndexWorker, AChangeThatThrowsFailsEveryLaterPostAndSettleAndDropsTheRest) {
  index_worker w("test-worker");
  std::promise<void> release;
  auto released = release.get_future().share();
  int ran = 0;
  w.post([&] { released.wait(); });
  w.post([] { throw std::runtime_error("index full"); });
  w.post([&] { ++ran; });  // queued behind the failing change: dropped
  release.set_value();
  EXPECT_THROW(w.settle(), std::runtime_error);
  EXPECT_THROW(w.post([&] { ++ran; }), std::runtime_error);
  EXPECT_THROW(w.settle(), std::runtime_error);
  EXPECT_EQ(ran, 0);
}

TEST(IndexWorker, ItsEndRunsWhatIsPending) {
  std::atomic<int> ran{0};
  {
    index_worker w("test-worker");
    for (int i = 0; i < 100; ++i)
      w.post([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 100);
}

}  // namespace
}  // namespace engram::storage
