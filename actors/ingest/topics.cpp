#include "actors/ingest/topics.hpp"

#include "actors/ingest/internal/kafka.hpp"
#include "logging/log.hpp"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <tuple>

namespace engram::ingest {

namespace {

/// A producer handle for metadata and admin requests (it produces nothing).
engram::result<std::unique_ptr<RdKafka::Producer>> admin_handle(
    const std::string& brokers, const std::map<std::string, std::string>& user,
    const std::map<std::string, std::string>& required = {}) {
  auto conf = detail::make_conf(detail::client_role::producer, brokers, user, required);
  if (!conf)
    return engram::fail(conf.error());
  std::string err;
  std::unique_ptr<RdKafka::Producer> p(RdKafka::Producer::create(conf->get(), err));
  if (!p)
    return engram::fail("cannot create a Kafka client: " + err);
  return p;
}

std::string fix_hint(const std::string& topic) {
  return "fix: kafka-configs.sh --bootstrap-server HOST:9092 --alter --entity-type topics --entity-name " + topic +
         " --add-config retention.ms=-1,retention.bytes=-1,cleanup.policy=delete";
}

}  // namespace

engram::result<std::vector<partition_range>> partition_ranges(const std::string& brokers,
                                                              const std::vector<std::string>& topics,
                                                              std::chrono::milliseconds timeout) {
  auto handle = admin_handle(brokers, {});
  if (!handle)
    return engram::fail(handle.error());
  auto& h = **handle;
  const int ms = static_cast<int>(timeout.count());
  RdKafka::Metadata* raw = nullptr;
  if (auto e = h.metadata(true, nullptr, &raw, ms); e != RdKafka::ERR_NO_ERROR)
    return engram::fail("cannot read the broker's metadata: " + RdKafka::err2str(e));
  std::unique_ptr<RdKafka::Metadata> md(raw);
  std::vector<partition_range> out;
  std::map<std::string, bool> wanted;
  for (const auto& t : topics)
    wanted[t] = false;
  for (const auto* t : *md->topics()) {
    if (!topics.empty() && !wanted.count(t->topic()))
      continue;
    wanted[t->topic()] = true;
    for (const auto* p : *t->partitions()) {
      partition_range r{t->topic(), p->id(), 0, 0};
      if (auto e = h.query_watermark_offsets(r.topic, r.partition, &r.start, &r.end, ms); e != RdKafka::ERR_NO_ERROR)
        return engram::fail(r.topic + " partition " + std::to_string(r.partition) +
                            ": cannot read its offsets: " + RdKafka::err2str(e));
      out.push_back(std::move(r));
    }
  }
  for (const auto& [t, seen] : wanted)
    if (!seen)
      return engram::fail("the broker has no topic '" + t + "'");
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  return out;
}

retention_verdict judge_retention(const std::string& log_topic, const topic_settings& log,
                                  const std::string& inbound_topic, const topic_settings* inbound,
                                  std::uint64_t min_inbound_ms) {
  retention_verdict v;
  auto value = [](const topic_settings& s, const char* name) -> const std::string* {
    auto it = s.find(name);
    return it == s.end() ? nullptr : &it->second;
  };
  for (const char* name : {"retention.ms", "retention.bytes"}) {
    const auto* x = value(log, name);
    if (!x)
      v.errors.push_back(log_topic + ": the broker did not report " + name +
                         "; engram-log must keep every record (-1, unlimited); " + fix_hint(log_topic));
    else if (*x != "-1")
      v.errors.push_back(log_topic + ": " + name + "=" + *x +
                         " deletes records the store is rebuilt from; engram-log must keep every record (-1, "
                         "unlimited); " +
                         fix_hint(log_topic));
  }
  if (const auto* policy = value(log, "cleanup.policy"); !policy)
    v.errors.push_back(log_topic +
                       ": the broker did not report cleanup.policy; engram-log needs 'delete' with "
                       "unlimited retention; " +
                       fix_hint(log_topic));
  else if (*policy != "delete")
    v.errors.push_back(log_topic + ": cleanup.policy=" + *policy +
                       " (compaction keeps only the newest record of each key, and every record of an organisation "
                       "shares its key); engram-log needs 'delete' with unlimited retention; " +
                       fix_hint(log_topic));
  if (inbound && min_inbound_ms > 0) {
    if (const auto* ms = value(*inbound, "retention.ms"); ms && *ms != "-1") {
      char* end = nullptr;
      const long long kept = std::strtoll(ms->c_str(), &end, 10);
      if (end && *end == '\0' && kept >= 0 && static_cast<std::uint64_t>(kept) < min_inbound_ms)
        v.warnings.push_back(inbound_topic + ": retention.ms=" + *ms +
                             " is shorter than kafka.min_inbound_retention_ms=" + std::to_string(min_inbound_ms) +
                             ": mail the extract stage has not read by then is deleted (engramd would stop at the "
                             "gap and name it)");
    }
  }
  return v;
}

engram::result<std::map<std::string, topic_settings>> describe_topics(const std::string& brokers,
                                                                      const std::map<std::string, std::string>& rdkafka,
                                                                      const std::vector<std::string>& topics,
                                                                      std::chrono::milliseconds timeout) {
  auto handle = admin_handle(brokers, rdkafka);
  if (!handle)
    return engram::fail(handle.error());
  // librdkafka's mock cluster names itself so and has no controller to send DescribeConfigs
  // to: asking would only wait out the timeout.
  if (const auto id = (*handle)->clusterid(static_cast<int>(timeout.count())); id.rfind("mockCluster", 0) == 0)
    return engram::fail("the test broker (librdkafka's mock cluster '" + id + "') cannot describe configurations");
  rd_kafka_t* rk = (*handle)->c_ptr();
  std::vector<rd_kafka_ConfigResource_t*> resources;
  for (const auto& t : topics)
    resources.push_back(rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, t.c_str()));
  std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)> queue(rd_kafka_queue_new(rk),
                                                                             &rd_kafka_queue_destroy);
  std::unique_ptr<rd_kafka_AdminOptions_t, decltype(&rd_kafka_AdminOptions_destroy)> options(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS), &rd_kafka_AdminOptions_destroy);
  char errstr[512];
  (void)rd_kafka_AdminOptions_set_request_timeout(options.get(), static_cast<int>(timeout.count()), errstr,
                                                  sizeof errstr);  // in range: cannot fail
  rd_kafka_DescribeConfigs(rk, resources.data(), resources.size(), options.get(), queue.get());
  rd_kafka_ConfigResource_destroy_array(resources.data(), resources.size());  // the request holds copies
  std::unique_ptr<rd_kafka_event_t, decltype(&rd_kafka_event_destroy)> ev(
      rd_kafka_queue_poll(queue.get(), static_cast<int>(timeout.count()) + 1000), &rd_kafka_event_destroy);
  if (!ev)
    return engram::fail("the broker did not describe the topics' configuration in time");
  if (rd_kafka_event_error(ev.get()))
    return engram::fail(std::string("the broker cannot describe the topics' configuration: ") +
                        rd_kafka_event_error_string(ev.get()));
  const auto* result = rd_kafka_event_DescribeConfigs_result(ev.get());
  if (!result)
    return engram::fail("unexpected answer to DescribeConfigs");
  std::size_t n = 0;
  const rd_kafka_ConfigResource_t** described = rd_kafka_DescribeConfigs_result_resources(result, &n);
  std::map<std::string, topic_settings> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = rd_kafka_ConfigResource_name(described[i]);
    if (rd_kafka_ConfigResource_error(described[i]) != RD_KAFKA_RESP_ERR_NO_ERROR)
      continue;  // not there (yet): left out
    std::size_t m = 0;
    const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(described[i], &m);
    auto& settings = out[name];
    for (std::size_t j = 0; j < m; ++j) {
      const char* value = rd_kafka_ConfigEntry_value(entries[j]);
      settings[rd_kafka_ConfigEntry_name(entries[j])] = value ? value : "";
    }
  }
  return out;
}

engram::result<topic_created> create_topic(const std::string& brokers,
                                           const std::map<std::string, std::string>& rdkafka, const std::string& topic,
                                           int partitions, const topic_settings& settings,
                                           std::chrono::milliseconds timeout) {
  if (auto there = partition_ranges(brokers, {topic}, timeout); there && !there->empty())
    return topic_created::existed;
  auto handle = admin_handle(brokers, rdkafka);
  if (!handle)
    return engram::fail(handle.error());
  rd_kafka_t* rk = (*handle)->c_ptr();
  const int ms = static_cast<int>(timeout.count());
  if (const auto id = (*handle)->clusterid(ms); id.rfind("mockCluster", 0) == 0) {
    // The mock cluster creates a topic its metadata is asked about by a client that allows it.
    auto creator = admin_handle(brokers, rdkafka, {{"allow.auto.create.topics", "true"}});
    if (!creator)
      return engram::fail(creator.error());
    std::string err;
    std::unique_ptr<RdKafka::Topic> t(RdKafka::Topic::create(creator->get(), topic, nullptr, err));
    if (!t)
      return engram::fail(topic + ": " + err);
    RdKafka::Metadata* raw = nullptr;
    if (auto e = (*creator)->metadata(false, t.get(), &raw, ms); e != RdKafka::ERR_NO_ERROR)
      return engram::fail(topic + ": the test broker did not create it: " + RdKafka::err2str(e));
    delete raw;
    if (auto there = partition_ranges(brokers, {topic}, timeout); !there || there->empty())
      return engram::fail(topic + ": the test broker did not create it" +
                          (there ? std::string() : ": " + there.error()));
    return topic_created::created_plain;
  }
  char errstr[512];
  std::unique_ptr<rd_kafka_NewTopic_t, decltype(&rd_kafka_NewTopic_destroy)> nt(
      rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, errstr, sizeof errstr), &rd_kafka_NewTopic_destroy);
  if (!nt)
    return engram::fail(topic + ": " + errstr);
  for (const auto& [name, value] : settings)
    if (rd_kafka_NewTopic_set_config(nt.get(), name.c_str(), value.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR)
      return engram::fail(topic + ": cannot set " + name);
  std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)> queue(rd_kafka_queue_new(rk),
                                                                             &rd_kafka_queue_destroy);
  std::unique_ptr<rd_kafka_AdminOptions_t, decltype(&rd_kafka_AdminOptions_destroy)> options(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS), &rd_kafka_AdminOptions_destroy);
  (void)rd_kafka_AdminOptions_set_request_timeout(options.get(), ms, errstr, sizeof errstr);  // in range
  auto* raw_topic = nt.get();
  rd_kafka_CreateTopics(rk, &raw_topic, 1, options.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, decltype(&rd_kafka_event_destroy)> ev(rd_kafka_queue_poll(queue.get(), ms + 1000),
                                                                          &rd_kafka_event_destroy);
  if (!ev)
    return engram::fail(topic + ": the broker did not answer the request to create it in time");
  if (rd_kafka_event_error(ev.get()))
    return engram::fail(topic + ": the broker did not create it: " + rd_kafka_event_error_string(ev.get()));
  std::size_t n = 0;
  const auto* result = rd_kafka_event_CreateTopics_result(ev.get());
  const rd_kafka_topic_result_t** topics = result ? rd_kafka_CreateTopics_result_topics(result, &n) : nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const auto e = rd_kafka_topic_result_error(topics[i]);
    if (e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      return topic_created::existed;  // another engramd made it first
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* why = rd_kafka_topic_result_error_string(topics[i]);
      return engram::fail(topic + ": the broker did not create it: " + (why ? why : rd_kafka_err2str(e)));
    }
  }
  return topic_created::created;
}

engram::result<void> check_log_retention(const config::engram_config& cfg) {
  auto& log = logging::get(logging::module::engine);
  const auto& t = cfg.kafka.topics;
  auto described = describe_topics(cfg.kafka.brokers, cfg.kafka.rdkafka, {t.log, t.inbound});
  if (!described || !described->count(t.log)) {
    log.warn("retention of {} not checked: {}", t.log,
             described ? "the topic is not there yet (create it with retention.ms=-1, retention.bytes=-1, "
                         "cleanup.policy=delete: a broker's default deletes records after 7 days)"
                       : described.error());
    return {};
  }
  auto inbound = described->find(t.inbound);
  auto verdict =
      judge_retention(t.log, described->at(t.log), t.inbound, inbound == described->end() ? nullptr : &inbound->second,
                      cfg.kafka.min_inbound_retention_ms);
  for (const auto& w : verdict.warnings)
    log.warn("{}", w);
  if (!verdict.errors.empty()) {
    std::string all;
    for (const auto& e : verdict.errors)
      all += (all.empty() ? "" : "; ") + e;
    return engram::fail("refusing to start: " + all);
  }
  log.info("{} keeps every record (retention.ms=-1, retention.bytes=-1, cleanup.policy=delete)", t.log);
  return {};
}

}  // namespace engram::ingest
