// libFuzzer: the name tagger (reading/name_tagger.hpp) with the compiled-in model over any text:
// its tokens lie inside the text in order, and its names lie inside it, in order, none
// overlapping another, each a log-probability at or above the threshold asked for.
#include "reading/name_tagger.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t at = 0;
  for (const auto& t : engram::reading::tagging::tokenize(text)) {
    if (t.begin < at || t.begin >= t.end || t.end > text.size())
      std::abort();
    at = t.end;
  }
  const auto& tagger = *engram::reading::name_tagger::builtin();
  for (const std::int32_t threshold : {tagger.threshold(), std::numeric_limits<std::int32_t>::min()}) {
    std::size_t end = 0;
    for (const auto& n : tagger.tag(text, threshold)) {
      if (n.begin < end || n.begin >= n.end || n.end > text.size() || n.score > 0 || n.score < threshold)
        std::abort();
      end = n.end;
    }
  }
  return 0;
}
