// The save actor's orderings (actors/mcp/saves.hpp): the store's answer, engram-log's
// delivery report and the save's wait may come in any order, and each save is answered once.
// engram-log here is a function the test answers when it chooses; the real producer and
// engramd are in tests/integration/saves_test.cpp.

#include "actors/mcp/saves.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

using namespace engram;
using namespace std::chrono_literals;
using state = services::save_outcome::state;

namespace {

class SaveActor : public ::testing::Test {
protected:
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys = std::make_unique<caf::actor_system>(cfg);
  services::apply_notifier notifier;
  std::mutex mutex;
  /// The delivery callbacks of the appends so far, answered by the test.
  std::vector<std::function<void(engram::result<void>)>> deliveries;
  /// Each save's answers, in order.
  std::vector<std::vector<services::save_outcome>> answers;
  caf::actor actor;

  void SetUp() override {
    actors::save_links links;
    links.notifier = &notifier;
    links.append = [this](const schemas::encoded_record&, std::function<void(engram::result<void>)> done) {
      std::lock_guard lock(mutex);
      deliveries.push_back(std::move(done));
    };
    actor = sys->spawn(actors::saves, std::move(links));
  }

  void TearDown() override {
    stop();
    sys.reset();
  }

  void stop() {
    if (!actor)
      return;
    caf::scoped_actor self{*sys};
    self->send_exit(actor, caf::exit_reason::user_shutdown);
    self->wait_for(actor);
    actor = nullptr;
  }

  /// Submits save "e<i>" of organisation acme; returns its index.
  std::size_t submit(std::chrono::milliseconds wait) {
    std::size_t i;
    {
      std::lock_guard lock(mutex);
      i = answers.size();
      answers.emplace_back();
    }
    services::pending_save save("acme", "e" + std::to_string(i), {}, wait, [this, i](services::save_outcome o) {
      std::lock_guard lock(mutex);
      answers[i].push_back(std::move(o));
    });
    caf::anon_send(actor, std::move(save));
    return i;
  }

  /// The actor's (waiting, late), asked after everything sent before.
  std::pair<std::size_t, std::size_t> counts() {
    caf::scoped_actor self{*sys};
    std::pair<std::size_t, std::size_t> out{0, 0};
    self->request(actor, caf::infinite, caf::get_atom::value)
        .receive(
            [&](std::size_t waiting, std::size_t late) {
              out = {waiting, late};
            },
            [&](caf::error& e) { ADD_FAILURE() << caf::to_string(e); });
    return out;
  }

  std::vector<services::save_outcome> answers_of(std::size_t i) {
    std::lock_guard lock(mutex);
    return answers[i];
  }

  std::function<void(engram::result<void>)> delivery(std::size_t i) {
    std::lock_guard lock(mutex);
    return deliveries.at(i);
  }
};

TEST_F(SaveActor, TheStoresAnswerBeforeTheDeliveryReportIsTheAnswer) {
  const auto i = submit(60s);
  ASSERT_EQ(counts().first, 1u);  // registered and appended
  services::applied_event what;
  what.result = "stored";
  notifier.applied("acme", "e0", what);
  delivery(i)({});
  EXPECT_EQ(counts().first, 0u);
  const auto got = answers_of(i);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].what, state::applied);
  EXPECT_EQ(got[0].applied.result, "stored");
}

TEST_F(SaveActor, ARecordTheLogRefusedIsAnsweredNotSavedAndTheStoreIsNoLongerWaitedFor) {
  const auto i = submit(60s);
  ASSERT_EQ(counts().first, 1u);
  delivery(i)(engram::fail("engram-log did not take the record"));
  EXPECT_EQ(counts().first, 0u);
  notifier.applied("acme", "e0", {});  // nobody waits for it any more
  const auto got = answers_of(i);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].what, state::not_appended);
  EXPECT_EQ(got[0].error, "engram-log did not take the record");
}

TEST_F(SaveActor, AWaitThatEndsBeforeTheDeliveryReportLetsTheReportDecide) {
  const auto refused = submit(1ms), taken = submit(1ms);
  // Both waits end with no delivery report yet: both saves still wait, marked late.
  while (counts().second < 2)
    std::this_thread::yield();
  EXPECT_TRUE(answers_of(refused).empty());
  EXPECT_TRUE(answers_of(taken).empty());
  delivery(refused)(engram::fail("not taken"));
  delivery(taken)({});
  EXPECT_EQ(counts().first, 0u);
  ASSERT_EQ(answers_of(refused).size(), 1u);
  EXPECT_EQ(answers_of(refused)[0].what, state::not_appended);
  ASSERT_EQ(answers_of(taken).size(), 1u);
  EXPECT_EQ(answers_of(taken)[0].what, state::not_applied_in_time);
}

TEST_F(SaveActor, AWaitThatEndsAfterTheAppendIsAnsweredNotAppliedInTime) {
  const auto i = submit(60s);
  ASSERT_EQ(counts().first, 1u);
  delivery(i)({});
  ASSERT_EQ(counts().first, 1u);
  const auto j = submit(1ms);
  ASSERT_EQ(counts().first, 2u);
  delivery(j)({});
  while (counts().first > 1)  // j's wait ends after its append: answered then
    std::this_thread::yield();
  ASSERT_EQ(answers_of(j).size(), 1u);
  EXPECT_EQ(answers_of(j)[0].what, state::not_applied_in_time);
  EXPECT_TRUE(answers_of(i).empty());
}

TEST_F(SaveActor, StoppingAnswersEverySaveStillWaitingOnce) {
  const auto a = submit(60s), b = submit(60s);
  ASSERT_EQ(counts().first, 2u);
  delivery(a)({});
  stop();
  notifier.applied("acme", "e0", {});  // the actor is gone: nobody waits
  delivery(b)({});
  for (auto i : {a, b}) {
    ASSERT_EQ(answers_of(i).size(), 1u) << i;
    EXPECT_EQ(answers_of(i)[0].what, state::stopped);
  }
}

}  // namespace
