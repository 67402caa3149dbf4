#pragma once
// Benchmarks of rules extraction: its quality on the labelled extraction sets (development
// and held-out), and its speed in messages per CPU-second over a JSONL file of inbound
// events. They print figures; nothing here asserts a speed.

#include <string>

namespace engram::bench {

/// Extraction quality (rules + validator) on tests/data/extraction's development and
/// held-out sets, each with the cues alone and with the entry-type model at `model`
/// (run from the source root).
int bench_extraction(const std::string& model);

/// Rules extraction + validation over a JSONL file of inbound events, one thread, `runs`
/// times (medians printed); with the entry-type model at `type_model` unless it is empty.
int bench_extract_speed(const std::string& path, int runs, const std::string& type_model);

}  // namespace engram::bench
