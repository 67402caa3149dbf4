#include "actors/ingest/broker_watch.hpp"
#include "logging/log.hpp"

#include "base/faults.hpp"

#include "actors/ingest/internal/kafka.hpp"

#include <spdlog/spdlog.h>

#include <thread>

namespace engram::ingest {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::kafka); }

std::string seconds_since(std::chrono::steady_clock::time_point t) {
  return std::to_string(
             std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t).count()) +
         " s";
}
}  // namespace

struct broker_watch::impl {
  std::unique_ptr<RdKafka::Producer> client;  // never produces: it only asks for metadata
};

engram::result<std::unique_ptr<broker_watch>> broker_watch::create(const std::string& brokers,
                                                                   const std::map<std::string, std::string>& rdkafka) {
  std::unique_ptr<broker_watch> w(new broker_watch());
  w->impl_ = std::make_unique<impl>();
  w->brokers_ = brokers;
  auto conf = detail::make_conf(detail::client_role::producer, brokers, rdkafka, {});
  if (!conf)
    return engram::fail(conf.error());
  std::string err;
  w->impl_->client.reset(RdKafka::Producer::create(conf->get(), err));
  if (!w->impl_->client)
    return engram::fail("broker watch: " + err);
  return w;
}

broker_watch::~broker_watch() = default;

engram::result<void> broker_watch::ask(std::chrono::milliseconds timeout) {
  RdKafka::Metadata* raw = nullptr;
  // No topic named and not all: the brokers alone, from a broker (never from a cache).
  auto e = impl_->client->metadata(false, nullptr, &raw, static_cast<int>(timeout.count()));
  std::unique_ptr<RdKafka::Metadata> md(raw);
  if (e != RdKafka::ERR_NO_ERROR)
    return engram::fail(RdKafka::err2str(e));
  return {};
}

bool broker_watch::wait_until_answered(const std::function<bool()>& stopping) {
  const auto since = std::chrono::steady_clock::now();
  auto next_note = since;
  while (true) {
    auto answered = ask(std::chrono::seconds(2));
    if (answered) {
      if (next_note != since)
        logger().info("Kafka at {} answers (after {}): starting", brokers_, seconds_since(since));
      return true;
    }
    if (std::chrono::steady_clock::now() >= next_note) {
      logger().warn("waiting for Kafka at {}: it does not answer ({}) for {}; engramd starts when it does", brokers_,
                    answered.error(), seconds_since(since));
      next_note = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    }
    if (stopping && stopping())
      return false;
    // ask() waited up to 2 s already: a refused connection fails at once, and asking again
    // at once would spin. Start-up waits a second (its own thread: nothing else runs yet).
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

void broker_watch::look(std::chrono::milliseconds timeout) {
  throw_if_fault_at("watch");  // the failure tests: a look that fails
  auto answered = ask(timeout);
  std::lock_guard lock(mutex_);
  if (answered && down_since_) {
    logger().info("Kafka at {} answers again after {}", brokers_, seconds_since(*down_since_));
    down_since_.reset();
  } else if (!answered && !down_since_) {
    down_since_ = std::chrono::steady_clock::now();
    logger().warn("Kafka at {} does not answer ({}): ingest and saves wait for it; /readyz says so", brokers_,
                  answered.error());
  }
  if (!answered)
    reason_ = answered.error();
}

std::optional<std::string> broker_watch::unreachable() const {
  std::lock_guard lock(mutex_);
  if (!down_since_)
    return std::nullopt;
  return "Kafka at " + brokers_ + " does not answer (" + reason_ + ") for " + seconds_since(*down_since_) +
         ": ingest and saves wait for it";
}

}  // namespace engram::ingest
