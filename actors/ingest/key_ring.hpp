#pragma once
// The data keys of sealed records (sealing.hpp), kept on the key topic (kafka.topics.keys,
// "engram-keys": key = "organisation/eventId/keyId", value = the 32 key bytes; a tombstone
// deletes a key). The topic is compacted: the last value of each key stays, and a deleted key
// is gone for good once compaction has run (docs/forgetting.md). Engram writes a message's key
// and waits for the broker's acknowledgement before the message's record goes to engram-log,
// so a reader that does not know a key yet finds it on the topic.

#include "actors/ingest/sealing.hpp"
#include "base/result.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace engram::ingest {

/// What the key topic should be created with: compacted, keeping the last key of each message
/// for ever and a deleted key's tombstone for a day (so every reader sees it).
[[nodiscard]] std::map<std::string, std::string> key_topic_settings();

class key_ring {
public:
  /// Reads the key topic whole, after creating it when it is missing and `create` (compacted,
  /// key_topic_settings(); plain on the test broker, which cannot make it compacted); an error
  /// that names the topic when it is missing (and not created) or the broker does not answer.
  [[nodiscard]] static engram::result<std::shared_ptr<key_ring>> open(const std::string& brokers,
                                                                      const std::map<std::string, std::string>& rdkafka,
                                                                      const std::string& topic, bool create);
  ~key_ring();
  key_ring(const key_ring&) = delete;
  key_ring& operator=(const key_ring&) = delete;

  /// A data key by its name; a name not known is looked for on the topic, up to its end now.
  /// nullopt: deleted (forgotten), or never written.
  [[nodiscard]] std::optional<std::string> get(const std::string& name);
  /// Writes the keys (name, key) and waits until the broker acknowledged them; an error when
  /// it did not (then no record sealed with them may be written).
  [[nodiscard]] engram::result<void> put(const std::vector<std::pair<std::string, data_key>>& keys);
  /// Deletes the keys of these messages of `org` (of every message of it when `events` is
  /// empty): tombstones on the topic, acknowledged; how many keys.
  [[nodiscard]] engram::result<std::size_t> shred(const std::string& org, const std::vector<std::string>& events);
  /// Keys known (for tests and the log).
  [[nodiscard]] std::size_t size() const;

private:
  key_ring() = default;
  /// Reads the topic up to its end now (mutex held); false when the broker did not answer.
  bool catch_up();
  struct impl;
  std::unique_ptr<impl> impl_;
  mutable std::mutex mutex_;
};

}  // namespace engram::ingest
