#pragma once
// Documents as a source (docs/graph-queries.md): engramctl ingest-docs reads text,
// Markdown, HTML and PDF (poppler's pdftotext), cleans them, cuts them into chunks under
// their headings and produces one inbound event per chunk (sourceType file, with the
// document's id and title), so documents go through the same log, extraction, graph and
// replay as mail. engramctl kag status|query read what they gave from a store opened
// read-only.

#include "tools/engramctl/documents.hpp"

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace engram::ctl {

struct ingest_options {
  std::string brokers, output, organization, topic = "inbound-messages";
  /// RFC 3339 for every event; empty: each file's modification time.
  std::string sent_at;
  std::size_t chunk_chars = 4000;
  std::vector<std::string> paths;
};

/// engramctl ingest-docs. Exit 0, 1 when a file could not be read (the others are produced;
/// each problem on `err`), 2 on bad options.
int ingest_docs(const ingest_options& o, std::ostream& out, std::ostream& err);

struct kag_options {
  std::string data_dir, organization, query;
  std::size_t max_hops = 2, limit = 20;
  bool json = false;
};

/// engramctl kag status: each document's chunks applied and pending, and what they gave.
int kag_status(const kag_options& o, std::ostream& out, std::ostream& err);
/// engramctl kag query: kag_query's context (or its whole answer as JSON with --json).
int kag_query(const kag_options& o, std::ostream& out, std::ostream& err);

}  // namespace engram::ctl
