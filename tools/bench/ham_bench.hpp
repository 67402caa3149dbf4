#pragma once
// Benchmarks of the SpamAssassin corpus (real mail from 2002; tools/fetch-data.sh
// spamassassin) through import and rules extraction: the ham folders' figures, and bulk and
// spam mail by folder with the labelled samples of list and bulk mail. They print figures;
// nothing here asserts a speed.

#include <string>

namespace engram::bench {

/// The ham corpus (easy-ham-1, easy-ham-2, hard-ham-1) through import and rules extraction:
/// no crash, no entry over the caps, and the figures (entries per message, messages/s, the
/// most frequent titles, so junk shows). 1 when an entry is over the caps, else 0.
int bench_ham(const std::string& data_dir);

/// Bulk and spam mail (extraction.bulk) by SpamAssassin folder: each message's class, and
/// entries per message read with keep (as before mail was classed) and with skip (the default). The
/// classifier's signals were set looking at easy-ham-1, hard-ham-1 and spam-1; easy-ham-2 and
/// spam-2 are reported as a check it was not tuned on. First, the labelled samples of list
/// and bulk mail (tests/data/mail-classes; run from the source root).
int bench_bulk(const std::string& data_dir);

}  // namespace engram::bench
