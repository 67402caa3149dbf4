#include "actors/ingest/producer.hpp"

#include "actors/ingest/internal/kafka.hpp"

#include <atomic>
#include <mutex>
#include <thread>

namespace engram::ingest {

struct kafka_producer::impl : RdKafka::DeliveryReportCb {
  std::unique_ptr<RdKafka::Producer> producer;
  std::mutex mutex;
  std::size_t failures = 0;
  std::string first_failure;

  /// One deliver()'s message: its report, filled in by dr_cb (any thread's poll serves it).
  struct pending {
    std::mutex mutex;
    bool done = false;
    delivery report;
  };

  void dr_cb(RdKafka::Message& msg) override {
    if (auto* p = static_cast<pending*>(msg.msg_opaque())) {
      std::lock_guard lock(p->mutex);
      p->report.delivered = msg.err() == RdKafka::ERR_NO_ERROR;
      if (!p->report.delivered) {
        p->report.possibly_written = msg.status() != RdKafka::Message::MSG_STATUS_NOT_PERSISTED;
        p->report.error = msg.errstr();
      }
      p->done = true;
      return;
    }
    if (msg.err() == RdKafka::ERR_NO_ERROR)
      return;
    std::lock_guard lock(mutex);
    if (failures++ == 0)
      first_failure = "delivery to " + msg.topic_name() + " failed: " + msg.errstr();
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
  if (impl_ && impl_->producer)
    (void)impl_->producer->flush(5000);  // best effort: callers flush() what they depend on
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
  while (true) {
    RdKafka::Headers* h = nullptr;
    if (!hs.empty()) {
      h = RdKafka::Headers::create();
      for (const auto& [k, v] : hs)
        h->add(k, v.data(), v.size());
    }
    auto err =
        impl_->producer->produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                 const_cast<char*>(value.data()), value.size(), key.data(), key.size(), 0, h, nullptr);
    if (err == RdKafka::ERR_NO_ERROR)
      return true;  // librdkafka owns the headers now
    delete h;
    if (err == RdKafka::ERR__QUEUE_FULL) {
      impl_->producer->poll(50);  // serve delivery reports to make room
      continue;
    }
    last_error_ = "produce to " + topic + " failed: " + RdKafka::err2str(err);
    std::lock_guard lock(impl_->mutex);
    if (impl_->failures++ == 0)
      impl_->first_failure = last_error_;
    return false;
  }
}

kafka_producer::delivery kafka_producer::deliver(const std::string& topic, std::string_view key, std::string_view value,
                                                 const headers& hs) {
  impl::pending p;
  RdKafka::Headers* h = nullptr;
  if (!hs.empty()) {
    h = RdKafka::Headers::create();
    for (const auto& [k, v] : hs)
      h->add(k, v.data(), v.size());
  }
  while (true) {
    auto err =
        impl_->producer->produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                 const_cast<char*>(value.data()), value.size(), key.data(), key.size(), 0, h, &p);
    if (err == RdKafka::ERR_NO_ERROR)
      break;  // librdkafka owns the headers now
    if (err == RdKafka::ERR__QUEUE_FULL) {
      impl_->producer->poll(50);
      continue;
    }
    delete h;
    return {false, false, "produce to " + topic + " failed: " + RdKafka::err2str(err)};
  }
  // The report comes within message.timeout.ms (librdkafka fails the message then); `p`
  // lives on this stack until it has.
  while (true) {
    impl_->producer->poll(50);
    std::lock_guard lock(p.mutex);
    if (p.done)
      return p.report;
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
