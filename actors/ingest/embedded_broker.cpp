#include "actors/ingest/embedded_broker.hpp"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

namespace engram::ingest {

struct embedded_broker::handles {
  rd_kafka_t* rk = nullptr;
  rd_kafka_mock_cluster_t* cluster = nullptr;
  ~handles() {
    if (cluster)
      rd_kafka_mock_cluster_destroy(cluster);
    if (rk)
      rd_kafka_destroy(rk);
  }
};

engram::result<std::unique_ptr<embedded_broker>> embedded_broker::start(const std::vector<std::string>& topics,
                                                                        int partitions) {
  std::unique_ptr<embedded_broker> b(new embedded_broker());
  b->h_ = std::make_unique<handles>();
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The handle only hosts the cluster; it never connects anywhere.
  rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof errstr);
  b->h_->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!b->h_->rk) {
    rd_kafka_conf_destroy(conf);
    return engram::fail(std::string("embedded broker: ") + errstr);
  }
  b->h_->cluster = rd_kafka_mock_cluster_new(b->h_->rk, 1);
  if (!b->h_->cluster)
    return engram::fail("embedded broker: rd_kafka_mock_cluster_new failed");
  for (const auto& t : topics)
    if (auto err = rd_kafka_mock_topic_create(b->h_->cluster, t.c_str(), partitions, 1); err)
      return engram::fail("embedded broker: cannot create topic '" + t + "': " + rd_kafka_err2str(err));
  b->bootstrap_ = rd_kafka_mock_cluster_bootstraps(b->h_->cluster);
  return b;
}

engram::result<void> embedded_broker::set_up(bool up) {
  auto err = up ? rd_kafka_mock_broker_set_up(h_->cluster, -1) : rd_kafka_mock_broker_set_down(h_->cluster, -1);
  if (err)
    return engram::fail(std::string("embedded broker: cannot set the brokers ") + (up ? "up" : "down") + ": " +
                        rd_kafka_err2str(err));
  return {};
}

embedded_broker::~embedded_broker() {
  if (before_stop_)
    before_stop_(*this);
}

}  // namespace engram::ingest
