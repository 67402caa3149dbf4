#pragma once
// engramctl extract: what extraction reads from inbound events (JSONL), without broker or
// store; --explain adds the cleaned text and its sentences.

#include <string>

namespace engram::ctl {

struct extract_options {
  /// JSONL file, or "-" for stdin.
  std::string file = "-";
  /// Entries below are dropped (extraction.confidence_threshold).
  double threshold = 0.6;
  /// Also print the cleaned text and its sentences.
  bool explain = false;
  /// Bulk and spam mail: skip, low_confidence or keep (extraction.bulk).
  std::string bulk = "skip";
  /// The USE Lite weights the entry-type model reads with (embedder.model_path).
  std::string model_path = ".cache/models/use-lite-en.bin";
  /// Types from the cues alone (extraction.type_model: false): no model loaded.
  bool no_type_model = false;
};

/// One JSON line per event on stdout: its ids and what extraction read. Invalid lines are
/// reported on stderr with their line number and skipped. Exit 0; 1 when a line was invalid,
/// the input cannot be read or the type model cannot be loaded.
int extract(const extract_options& o);

}  // namespace engram::ctl
