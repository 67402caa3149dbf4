#pragma once
// Documents as a source (docs/graph-queries.md): engramctl ingest-docs reads text,
// Markdown, HTML and PDF (poppler's pdftotext), cleans them, cuts them into chunks under
// their headings and produces one inbound event per chunk (sourceType file, with the
// document's id and title), so documents go through the same log, extraction, graph and
// replay as mail. engramctl kag status|query read what they gave from a store opened
// read-only.

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace engram::ctl {

struct document_chunk {
  /// The headings the chunk sits under, " > "-joined ("" before the first heading).
  std::string section;
  std::string text;
};

struct document {
  std::string path, title;
  /// "doc-" + 16 hex digits of the content's hash: the same file gives the same id, so an
  /// ingest run twice applies once (eventIds are the id and the chunk's number).
  std::string id;
  std::vector<document_chunk> chunks;
  /// Pages (PDF) or 1.
  std::size_t pages = 1;
};

/// Reads one document (.txt, .md/.markdown, .html/.htm, .pdf), chunks of at most
/// `chunk_chars` bytes cut at paragraph ends (a longer paragraph at sentence ends); an error
/// naming the file and the reason.
[[nodiscard]] bool read_document(const std::string& path, std::size_t chunk_chars, document* out, std::string* error);

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
