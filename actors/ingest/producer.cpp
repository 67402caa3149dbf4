#include "actors/ingest/producer.hpp"

#include "actors/ingest/internal/kafka.hpp"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace engram::ingest {

struct kafka_producer::impl : RdKafka::DeliveryReportCb {
  std::unique_ptr<RdKafka::Producer> producer;
  std::mutex mutex;
  std::size_t failures = 0;
  std::string first_failure;

  /// Where a message's delivery report goes (its opaque); dr_cb fills it in, on whichever
  /// thread polls.
  struct report_sink {
    virtual ~report_sink() = default;
    virtual void report(const delivery& d) = 0;
    /// Whether dr_cb deletes it after its report (deliver_async's; deliver()'s lives on a stack).
    bool owned_by_report = false;
  };
  /// One deliver()'s message: its report, waited for by the caller.
  struct pending final : report_sink {
    std::mutex mutex;
    bool done = false;
    delivery result;
    void report(const delivery& d) override {
      std::lock_guard lock(mutex);
      result = d;
      done = true;
    }
  };
  /// One deliver_async()'s message: its callback.
  struct callback final : report_sink {
    explicit callback(std::function<void(delivery)> fn) : done(std::move(fn)) { owned_by_report = true; }
    std::function<void(delivery)> done;
    void report(const delivery& d) override { done(d); }
  };

  /// Serves deliver_async()'s reports (deliver() polls on its caller's thread).
  std::once_flag poller_started;
  std::atomic<bool> stop_polling{false};
  std::thread poller;

  void dr_cb(RdKafka::Message& msg) override {
    if (auto* sink = static_cast<report_sink*>(msg.msg_opaque())) {
      delivery d;
      d.delivered = msg.err() == RdKafka::ERR_NO_ERROR;
      if (!d.delivered) {
        d.possibly_written = msg.status() != RdKafka::Message::MSG_STATUS_NOT_PERSISTED;
        d.error = msg.errstr();
      }
      sink->report(d);
      if (sink->owned_by_report)
        delete sink;
      return;
    }
    if (msg.err() == RdKafka::ERR_NO_ERROR)
      return;
    std::lock_guard lock(mutex);
    if (failures++ == 0)
      first_failure = "delivery to " + msg.topic_name() + " failed: " + msg.errstr();
  }

  /// Produces one message with `sink` as its opaque; waits while the local queue is full.
  /// The error when librdkafka refused it (then no report will come).
  std::string produce(const std::string& topic, std::string_view key, std::string_view value, const headers& hs,
                      report_sink* sink) {
    RdKafka::Headers* h = nullptr;
    if (!hs.empty()) {
      h = RdKafka::Headers::create();
      for (const auto& [k, v] : hs)
        h->add(k, v.data(), v.size());
    }
    while (true) {
      auto err = producer->produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                   const_cast<char*>(value.data()), value.size(), key.data(), key.size(), 0, h, sink);
      if (err == RdKafka::ERR_NO_ERROR)
        return {};  // librdkafka owns the headers now
      if (err == RdKafka::ERR__QUEUE_FULL) {
        producer->poll(50);
        continue;
      }
      delete h;
      return "produce to " + topic + " failed: " + RdKafka::err2str(err);
    }
  }
};

engram::result<std::unique_ptr<kafka_producer>> kafka_producer::create(
    const std::string& brokers, const std::map<std::string, std::string>& rdkafka,
    std::chrono::milliseconds delivery_timeout) {
  std::unique_ptr<kafka_producer> p(new kafka_producer());
  p->impl_ = std::make_unique<impl>();
  detail::properties required{{"enable.idempotence", "true"},
                              {"acks", "all"},
                              // Dead letters carry the original bytes, which may exceed the
                              // event limit (that is why they are dead letters).
                              {"message.max.bytes", "16777216"}};
  if (delivery_timeout.count() > 0)
    required["message.timeout.ms"] = std::to_string(delivery_timeout.count());
  auto made = detail::make_conf(detail::client_role::producer, brokers, rdkafka, required);
  if (!made)
    return engram::fail(made.error());
  auto& conf = *made;
  std::string err;
  if (conf->set("dr_cb", static_cast<RdKafka::DeliveryReportCb*>(p->impl_.get()), err) != RdKafka::Conf::CONF_OK)
    return engram::fail("producer: " + err);
  p->impl_->producer.reset(RdKafka::Producer::create(conf.get(), err));
  if (!p->impl_->producer)
    return engram::fail("producer: " + err);
  return p;
}

kafka_producer::~kafka_producer() {
  if (!impl_ || !impl_->producer)
    return;
  (void)impl_->producer->flush(5000);  // best effort: callers flush() what they depend on
  impl_->stop_polling = true;
  if (impl_->poller.joinable())
    impl_->poller.join();
  // What is still held is reported now, not delivered: every deliver_async() is answered.
  impl_->producer->purge(RdKafka::Producer::PURGE_QUEUE | RdKafka::Producer::PURGE_INFLIGHT);
  (void)impl_->producer->flush(1000);
}

bool kafka_producer::prepare(const std::string& topic, std::chrono::milliseconds timeout) {
  std::string err;
  std::unique_ptr<RdKafka::Topic> t(RdKafka::Topic::create(impl_->producer.get(), topic, nullptr, err));
  if (!t) {
    last_error_ = "topic " + topic + ": " + err;
    return false;
  }
  RdKafka::Metadata* raw = nullptr;
  auto e = impl_->producer->metadata(false, t.get(), &raw, static_cast<int>(timeout.count()));
  std::unique_ptr<RdKafka::Metadata> md(raw);
  if (e != RdKafka::ERR_NO_ERROR) {
    last_error_ = "metadata of " + topic + ": " + RdKafka::err2str(e);
    return false;
  }
  return true;
}

bool kafka_producer::produce(const std::string& topic, std::string_view key, std::string_view value,
                             const headers& hs) {
  auto refused = impl_->produce(topic, key, value, hs, nullptr);
  if (refused.empty())
    return true;
  last_error_ = std::move(refused);
  std::lock_guard lock(impl_->mutex);
  if (impl_->failures++ == 0)
    impl_->first_failure = last_error_;
  return false;
}

kafka_producer::delivery kafka_producer::deliver(const std::string& topic, std::string_view key, std::string_view value,
                                                 const headers& hs) {
  impl::pending p;
  if (auto refused = impl_->produce(topic, key, value, hs, &p); !refused.empty())
    return {false, false, refused};
  // The report comes within message.timeout.ms (librdkafka fails the message then); `p`
  // lives on this stack until it has.
  while (true) {
    impl_->producer->poll(50);
    std::lock_guard lock(p.mutex);
    if (p.done)
      return p.result;
  }
}

void kafka_producer::deliver_async(const std::string& topic, std::string_view key, std::string_view value,
                                   const headers& hs, std::function<void(delivery)> done) {
  std::call_once(impl_->poller_started, [this] {
    impl_->poller = std::thread([i = impl_.get()] {
      ::pthread_setname_np(::pthread_self(), "engram-produce");
      while (!i->stop_polling.load())
        i->producer->poll(100);  // returns as soon as it has served a report
    });
  });
  auto* sink = new impl::callback(std::move(done));
  if (auto refused = impl_->produce(topic, key, value, hs, sink); !refused.empty()) {
    sink->report({false, false, refused});
    delete sink;
  }
}

bool kafka_producer::flush(std::chrono::milliseconds timeout) {
  auto err = impl_->producer->flush(static_cast<int>(timeout.count()));
  std::lock_guard lock(impl_->mutex);
  bool ok = err == RdKafka::ERR_NO_ERROR && impl_->failures == 0;
  if (err != RdKafka::ERR_NO_ERROR)
    last_error_ = "flush timed out with " + std::to_string(impl_->producer->outq_len()) + " messages undelivered";
  else if (impl_->failures)
    last_error_ = impl_->first_failure + " (" + std::to_string(impl_->failures) + " failed)";
  impl_->failures = 0;
  impl_->first_failure.clear();
  return ok;
}

}  // namespace engram::ingest

#include "schemas/inbound_message.hpp"

#include <istream>

namespace engram::ingest {

produce_report produce_events(kafka_producer& producer, const std::string& topic, std::istream& in,
                              std::uint64_t max_event_bytes) {
  produce_report report;
  schemas::decode_limits limits{max_event_bytes};
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    schemas::inbound_message ev;
    if (auto bad = schemas::decode(line, limits, ev)) {
      ++report.rejected;
      if (report.problems.size() < 100)
        report.problems.push_back("line " + std::to_string(lineno) + ": " + bad->to_string());
      continue;
    }
    if (!producer.produce(topic, ev.organization_id, line)) {
      report.error = producer.last_error();
      return report;
    }
    ++report.produced;
  }
  if (!producer.flush(std::chrono::seconds(60)))
    report.error = producer.last_error();
  return report;
}

}  // namespace engram::ingest
