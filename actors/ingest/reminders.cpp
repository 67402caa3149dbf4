#include "actors/ingest/reminders.hpp"

#include "actors/ingest/internal/kafka.hpp"

#include <chrono>
#include <thread>

namespace engram::ingest {

namespace {

/// What the delivery report said about the one message in flight.
struct delivery {
  bool done = false;
  std::string error;
  std::int32_t partition = 0;
  std::int64_t offset = -1;
};

}  // namespace

struct reminder_channel::impl : RdKafka::DeliveryReportCb {
  std::string brokers;
  std::map<std::string, std::string> rdkafka;
  std::string topic;
  std::unique_ptr<RdKafka::Producer> producer;

  void dr_cb(RdKafka::Message& msg) override {
    auto* d = static_cast<delivery*>(msg.msg_opaque());
    if (!d)
      return;
    d->done = true;
    if (msg.err() != RdKafka::ERR_NO_ERROR)
      d->error = msg.errstr();
    d->partition = msg.partition();
    d->offset = msg.offset();
  }
};

engram::result<std::unique_ptr<reminder_channel>> reminder_channel::create(
    const std::string& brokers, const std::map<std::string, std::string>& rdkafka, const std::string& topic) {
  std::unique_ptr<reminder_channel> c(new reminder_channel());
  c->impl_ = std::make_unique<impl>();
  auto& m = *c->impl_;
  m.brokers = brokers;
  m.rdkafka = rdkafka;
  m.topic = topic;
  auto made = detail::make_conf(detail::client_role::producer, brokers, rdkafka,
                                {{"enable.idempotence", "true"}, {"acks", "all"}});
  if (!made)
    return engram::fail(made.error());
  auto& conf = *made;
  std::string err;
  if (conf->set("dr_cb", static_cast<RdKafka::DeliveryReportCb*>(&m), err) != RdKafka::Conf::CONF_OK)
    return engram::fail("reminders: " + err);
  m.producer.reset(RdKafka::Producer::create(conf.get(), err));
  if (!m.producer)
    return engram::fail("reminders: " + err);
  return c;
}

reminder_channel::~reminder_channel() {
  if (impl_ && impl_->producer)
    (void)impl_->producer->flush(5000);
}

engram::result<reminder_channel::position> reminder_channel::send(const std::string& org,
                                                                  const std::string& reminder_id,
                                                                  const std::string& value) {
  auto& m = *impl_;
  delivery d;
  auto* h = RdKafka::Headers::create();
  h->add(reminder_id_header, reminder_id);
  auto err = m.producer->produce(m.topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                 const_cast<char*>(value.data()), value.size(), org.data(), org.size(), 0, h, &d);
  if (err != RdKafka::ERR_NO_ERROR) {
    delete h;
    return engram::fail("produce to " + m.topic + " failed: " + RdKafka::err2str(err));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!d.done && std::chrono::steady_clock::now() < deadline)
    m.producer->poll(20);
  if (!d.done) {
    // The opaque points at this frame: wait for the report whatever it takes.
    while (!d.done)
      m.producer->poll(100);
  }
  if (!d.error.empty())
    return engram::fail("delivery to " + m.topic + " failed: " + d.error);
  return position{d.partition, d.offset};
}

engram::result<std::vector<reminder_channel::sent_reminder>> reminder_channel::sent_since(
    const std::map<std::int32_t, std::int64_t>& from) {
  auto& m = *impl_;
  auto made = detail::make_conf(detail::client_role::consumer, m.brokers, m.rdkafka,
                                {{"group.id", "engram-reminders-recovery"},
                                 {"enable.auto.commit", "false"},
                                 {"enable.auto.offset.store", "false"},
                                 {"enable.partition.eof", "true"}});
  if (!made)
    return engram::fail(made.error());
  auto& conf = *made;
  std::string err;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer)
    return engram::fail("reminders: " + err);
  RdKafka::Metadata* raw = nullptr;
  std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(consumer.get(), m.topic, nullptr, err));
  if (auto e = consumer->metadata(false, topic.get(), &raw, 10000); e != RdKafka::ERR_NO_ERROR)
    return engram::fail("reminders: metadata of " + m.topic + ": " + RdKafka::err2str(e));
  std::unique_ptr<RdKafka::Metadata> md(raw);
  std::vector<RdKafka::TopicPartition*> parts;
  std::map<std::int32_t, std::int64_t> end;
  for (const auto* t : *md->topics())
    if (t->topic() == m.topic)
      for (const auto* p : *t->partitions()) {
        std::int64_t lo = 0, hi = 0;
        if (auto e = consumer->query_watermark_offsets(m.topic, p->id(), &lo, &hi, 10000); e != RdKafka::ERR_NO_ERROR) {
          for (auto* tp : parts)
            delete tp;
          return engram::fail("reminders: watermarks of " + m.topic + ": " + RdKafka::err2str(e));
        }
        auto it = from.find(p->id());
        std::int64_t start = it == from.end() || it->second > hi || it->second < lo ? lo : it->second;
        if (start < hi) {
          parts.push_back(RdKafka::TopicPartition::create(m.topic, p->id(), start));
          end[p->id()] = hi;
        }
      }
  std::vector<sent_reminder> out;
  if (parts.empty())
    return out;
  consumer->assign(parts);
  for (auto* tp : parts)
    delete tp;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!end.empty() && std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> msg(consumer->consume(200));
    if (msg->err() == RdKafka::ERR__PARTITION_EOF) {
      end.erase(msg->partition());
      continue;
    }
    if (msg->err() != RdKafka::ERR_NO_ERROR)
      continue;
    sent_reminder r;
    r.reminder_id = detail::header(*msg, reminder_id_header);
    r.organization_id = msg->key() ? *msg->key() : std::string();
    r.value.assign(static_cast<const char*>(msg->payload()), msg->len());
    r.partition = msg->partition();
    r.offset = msg->offset();
    if (msg->offset() + 1 >= end[msg->partition()])
      end.erase(msg->partition());
    out.push_back(std::move(r));
  }
  consumer->close();
  if (!end.empty())
    return engram::fail("reminders: " + m.topic + " not read to its end within 60 s");
  return out;
}

}  // namespace engram::ingest
