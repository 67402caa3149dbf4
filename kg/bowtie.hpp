#pragma once
// The Bowtie harness protocol (bowtie-json-schema/bowtie, schemas/io/v1: JSON lines on
// standard input and output), so kg/json_schema can be compared with other implementations
// the way the JSON Schema community does: start -> {version, implementation}, dialect ->
// {ok}, run -> {seq, results: [{valid}]} (or skipped, naming the unsupported keyword, or
// errored), stop -> exit. `engramctl kg bowtie` runs it.

#include <istream>
#include <ostream>

namespace engram::kg {

/// Serves the protocol until "stop" or the end of `in`; 0, or 1 on a protocol error (also
/// written to `out` as {"error": ...} before returning).
int bowtie_harness(std::istream& in, std::ostream& out);

}  // namespace engram::kg
