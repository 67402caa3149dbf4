#pragma once
// Inbound events onto the inbound topic: engramctl produce (a JSONL file of events, each
// validated) and engramctl import (e-mail files: .eml, mbox, maildir; one event per message,
// or JSONL with --output). Documents have their own command (docs.hpp: ingest-docs).

#include <cstdint>
#include <string>
#include <vector>

namespace engram::ctl {

struct produce_options {
  std::string brokers, topic = "inbound-messages";
  /// JSONL file, or "-" for stdin.
  std::string file;
  /// Larger events are refused.
  std::uint64_t max_bytes = 1048576;
};

/// Validates each line and produces it (key = organizationId). Exit 0; 1 when a line was
/// rejected (each on stderr) or the producer failed.
int produce(const produce_options& o);

struct import_options {
  /// Bootstrap servers to produce to, or `output`: a JSONL file to write (one of them).
  std::string brokers, output;
  /// organizationId of every event.
  std::string organization;
  std::string topic = "inbound-messages";
  /// Files and folders.
  std::vector<std::string> paths;
};

/// Reads e-mail files and produces one inbound event per message (or writes them as JSONL),
/// with a progress line on a terminal. Exit 0 (malformed messages are reported and counted);
/// 1 when the files, the producer or the output failed; 2 for bad options.
int import_mail(const import_options& o);

}  // namespace engram::ctl
