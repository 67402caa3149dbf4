#pragma once
// Reading a document for engramctl ingest-docs (docs.hpp): text, Markdown, HTML and PDF
// (poppler's pdftotext), cleaned and cut into chunks under their headings. Apart from the rest
// of engramctl so that its fuzz target (tests/fuzz/fuzz_document.cpp) builds it alone.

#include <cstddef>
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

}  // namespace engram::ctl
