#pragma once
// engram-reminders as the timers use it. A reminder is sent first and recorded second (a
// reminder_sent command on engram-log naming the partition and offset it landed at), so
// exactly-once rests on one recovery rule: a reminder found on the topic past the last
// recorded offset was sent but not recorded, and is recorded instead of sent again.
// (Kafka transactions would make send-and-record atomic, but librdkafka 2.0.2's mock
// cluster, where the tests run, does not hide aborted records: measured.)

#include "base/result.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace engram::ingest {

/// Header carrying a reminder's id (the key is its organizationId).
inline constexpr const char* reminder_id_header = "reminder-id";

class reminder_channel {
public:
  /// An error when librdkafka refuses the configuration or the producer.
  [[nodiscard]] static engram::result<std::unique_ptr<reminder_channel>> create(
      const std::string& brokers, const std::map<std::string, std::string>& rdkafka, const std::string& topic);
  ~reminder_channel();
  reminder_channel(const reminder_channel&) = delete;
  reminder_channel& operator=(const reminder_channel&) = delete;

  /// Where a reminder landed on the topic.
  struct position {
    std::int32_t partition = 0;
    std::int64_t offset = 0;
  };

  /// Produces one reminder (key = organizationId, acks=all) and waits for its
  /// acknowledgement: where it landed, or an error.
  [[nodiscard]] engram::result<position> send(const std::string& organization_id, const std::string& reminder_id,
                                              const std::string& value);

  struct sent_reminder {
    std::string reminder_id;
    std::string organization_id;
    std::string value;
    std::int32_t partition = 0;
    std::int64_t offset = 0;
  };

  /// Every reminder on the topic at or past `from` (next offset per partition; a partition
  /// not named, or whose mark is past its end, is read from its start), up to the end.
  [[nodiscard]] engram::result<std::vector<sent_reminder>> sent_since(const std::map<std::int32_t, std::int64_t>& from);

private:
  reminder_channel() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace engram::ingest
