// libFuzzer: the document reader of engramctl ingest-docs (tools/engramctl/documents.hpp): the
// Markdown, HTML and text readers and the chunker. The first byte picks the kind (.md, .html,
// .txt), the second the chunk size; the rest is the file. A document read has an id and chunks
// with text; a refusal says why.
#include "tools/engramctl/documents.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2)
    return 0;
  static const char* kinds[] = {".md", ".html", ".txt"};
  static const std::string base = "/dev/shm/engram-fuzz-document-" + std::to_string(::getpid());
  const std::string path = base + kinds[data[0] % 3];
  const std::size_t chunk_chars = 100 + std::size_t(data[1]) * 20;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data) + 2, static_cast<std::streamsize>(size - 2));
  }
  engram::ctl::document d;
  std::string error;
  if (!engram::ctl::read_document(path, chunk_chars, &d, &error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  if (d.id.empty() || d.chunks.empty())
    std::abort();
  for (const auto& c : d.chunks)
    if (c.text.empty())
      std::abort();
  return 0;
}
