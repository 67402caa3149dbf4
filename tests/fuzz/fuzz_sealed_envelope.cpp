// libFuzzer: the sealed record's envelope (actors/ingest/sealing.hpp): its JSON header line and
// the ciphertext after it, as engram-log's readers meet them. Whatever it reads must not open
// with a key that did not seal it; the input sealed as a record's value opens to itself.
#include "actors/ingest/sealing.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace engram::ingest;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static const data_key sealer{"0123456789abcdef", std::string(32, '\x17')};
  {
    std::string why;
    auto sealed = read_envelope(seal("acme", "ev-1", "extracted-message", input, sealer), &why);
    if (!sealed || sealed->kind != "extracted-message" || sealed->event_id != "ev-1" ||
        open(*sealed, sealer.bytes) != input)
      std::abort();
  }
  std::string why;
  auto e = read_envelope(input, &why);
  if (!e) {
    if (why.empty())
      std::abort();  // a refusal names its reason
    return 0;
  }
  static const std::string key(32, '\x5a');
  (void)open(*e, key);  // fails (the tag does not match) unless the input was sealed with it
  (void)open(*e, std::string_view(key).substr(0, 7));  // a key of the wrong size: refused
  return 0;
}
