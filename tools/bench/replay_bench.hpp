#pragma once
// engram-log replayed at the size users reach. The test broker keeps about 5 MiB a partition,
// far less than a million entries' engram-log, so the records come from a file instead: dense
// mail for N entries (one organisation, or several on a partition each) is read once, each
// message written to the file as the engram-log record the sequencer produces (its kind and
// JSON value, schemas::encode) and applied live into one store. Then the file is replayed into
// new stores through the store stage's apply path: a reader thread decodes the records as the
// log consumer does (schemas::decode_record) and hands partition p to applier p mod appliers,
// each applier a thread calling resolve_and_apply (what a store applier actor calls for each
// record) in order. Figures: records/s and entries/s of each replay, and its digest against
// the live store's. It prints figures; nothing here asserts a speed.

#include "config/pipeline.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace engram::bench {

struct replay_options {
  std::string model_path;
  /// Entries to grow the live store to (across its organisations).
  std::size_t entries = 100000;
  /// Organisations, each on a partition of its own (1: one organisation on partition 0).
  std::size_t organisations = 1;
  /// A replay with each of these numbers of appliers, in turn.
  std::vector<unsigned> appliers{1, 2};
  /// storage.memory_mb of every store.
  std::size_t memory_mb = config::storage_config{}.memory_mb;
  /// Where the records file and the live store are kept ("": a temporary directory, removed
  /// at the end). Ones made there before for the same entries, organisations, model and
  /// memory are used again, and a build of them that stopped goes on from its last checkpoint
  /// (every tenth of the target); a replayed store is removed after its replay unless its
  /// digest differs.
  std::string dir;
};

int replay(const replay_options& o);

}  // namespace engram::bench
