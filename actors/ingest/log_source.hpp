#pragma once
// engram-log read back from the broker (actors/common/pipeline.hpp log_source): a consumer of
// its own, assigned one partition from offset 0, never in a consumer group's assignment and
// never committing. Made for each read: a forget of messages is rare.

#include "actors/common/pipeline.hpp"
#include "actors/ingest/key_ring.hpp"
#include "config/config.hpp"
#include "reading/read.hpp"

#include <memory>
#include <string>

namespace engram::ingest {

/// The log source of engram-log (cfg.kafka.topics.log) on `brokers`; records that carry no
/// reading are read with `reader` (and every message with `re_extract`), as the log consumer
/// does; sealed records are opened with `keys`.
[[nodiscard]] std::shared_ptr<actors::log_source> make_log_source(const config::engram_config& cfg,
                                                                  const std::string& brokers,
                                                                  reading::reader_context reader,
                                                                  bool re_extract = false,
                                                                  std::shared_ptr<key_ring> keys = nullptr);

}  // namespace engram::ingest
