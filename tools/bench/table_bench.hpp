#pragma once
// The benchmark table of docs/benchmarks.md (tools/dev.sh bench): the embedding, recall at
// two sizes, ingest and replay of the ham corpus, many organisations on many partitions and
// real mail, run one after the other and printed as one Markdown table of headline figures
// with the cores and the commit. It prints figures; nothing here asserts a speed.

#include <string>

namespace engram::bench {

/// The figures docs/benchmarks.md shows, as one Markdown table (tools/dev.sh bench); the
/// commit column is ENGRAM_COMMIT ("unknown" without it). `quick` shrinks every input so the
/// whole run takes about a minute (the smoke test of the table's shape); its figures are not
/// comparable.
int bench_table(const std::string& model_path, const std::string& ham_dir, bool quick);

}  // namespace engram::bench
