#pragma once
// The message that flows through the actor pipeline (ingest -> extractor -> dedup ->
// contradiction -> branch -> store), and the handle every stage shares.
//
// Order: CAF delivers messages between two actors in the order they were sent, and each
// stage forwards batches in the order it received them, so per-partition order of
// engram-log holds end to end as long as every stage handles one batch at a time.

#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/knowledge_save.hpp"
#include "schemas/log_record.hpp"
#include "storage/graph_store.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/typed_actor.hpp>
#include <caf/replies_to.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace engram::actors {

/// One engram-log record on its way to the store.
struct log_record {
  storage::log_position position;
  /// Null when the record could not be decoded: the store only advances the offset.
  std::shared_ptr<const schemas::inbound_message> message;
  /// Why `message` is null.
  std::string rejection;
  /// Set when the record is an agent's save: `message` is then its as_message() form and
  /// the extractor reads the statement as given instead of extracting.
  std::shared_ptr<const schemas::knowledge_save> save;
  /// Set when the record is a knowledge command (`message` is then null).
  std::shared_ptr<const schemas::knowledge_command> command;
  /// Set when the record is an entity command (`message` is then null).
  std::shared_ptr<const schemas::entity_command> entity;
  /// Set when the record is a chunk (or the deletion) of a knowledge bundle (`message` null).
  std::shared_ptr<const schemas::kg_command> bundle;
  /// What was read from `message`, with an embedding per entry: from the record itself
  /// (extracted-message, format 2), or by the extractor stage for records of format 1 and
  /// saves that came without a vector (null before it, or when not extracted).
  std::shared_ptr<const schemas::extraction> knowledge;
  /// What dedup and contradiction decided, one per entry of `knowledge` (null before dedup).
  std::shared_ptr<std::vector<schemas::resolution>> resolutions;
  /// When the consumer received it (apply-latency metric; never stored).
  std::chrono::steady_clock::time_point received_at;
};

/// Fills `rec` from a decoded engram-log record: a message (with what was read from it,
/// format 2), a save (with its as_message() form), a knowledge command, an entity command or a bundle's chunk. `re_extract` drops what a
/// format-2 record says was read, so the extractor stage reads the message again
/// (engramctl replay --re-extract).
inline void set_payload(log_record& rec, schemas::log_payload&& payload, bool re_extract = false) {
  if (auto* m = std::get_if<schemas::inbound_message>(&payload)) {
    rec.message = std::make_shared<schemas::inbound_message>(std::move(*m));
  } else if (auto* x = std::get_if<schemas::extracted_message>(&payload)) {
    rec.message = std::make_shared<schemas::inbound_message>(std::move(x->message));
    if (!re_extract)
      rec.knowledge = std::make_shared<schemas::extraction>(std::move(x->knowledge));
  } else if (auto* s = std::get_if<schemas::knowledge_save>(&payload)) {
    rec.message = std::make_shared<schemas::inbound_message>(schemas::as_message(*s));
    rec.save = std::make_shared<schemas::knowledge_save>(std::move(*s));
  } else if (auto* c = std::get_if<schemas::knowledge_command>(&payload)) {
    rec.command = std::make_shared<schemas::knowledge_command>(std::move(*c));
  } else if (auto* e = std::get_if<schemas::entity_command>(&payload)) {
    rec.entity = std::make_shared<schemas::entity_command>(std::move(*e));
  } else {
    rec.bundle = std::make_shared<schemas::kg_command>(std::move(std::get<schemas::kg_command>(payload)));
  }
}

/// What the store reports for one batch.
struct batch_result {
  storage::errc error = storage::errc::ok;
  /// Records handled before `error` (all of them on success), in order.
  std::size_t done = 0;
  std::size_t applied = 0;
  std::size_t duplicates = 0;
  std::size_t skipped = 0;
};

/// A batch of consecutive engram-log records. The store fulfils `done` once every record
/// is durable (or at the first failure).
struct event_batch {
  std::vector<log_record> records;
  std::shared_ptr<std::promise<batch_result>> done;
};

}  // namespace engram::actors

// Local-only message: it carries pointers and a promise, and never crosses a process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(engram::actors::event_batch)

namespace engram::actors {

/// Every pipeline stage takes a batch and hands it to the next stage (or, for the store,
/// applies it).
using stage_actor = caf::typed_actor<caf::reacts_to<event_batch>>;

}  // namespace engram::actors
