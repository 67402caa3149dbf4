// libFuzzer: the inbound-message decoder (schemas/inbound_message.hpp), which every event on
// inbound-messages meets first. What it accepts re-encodes to canonical JSON that decodes again
// to the same canonical JSON (nothing accepted is lost or changed on the way to the store).
#include "schemas/inbound_message.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace engram::schemas;
  inbound_message m;
  if (decode(std::string_view(reinterpret_cast<const char*>(data), size), {}, m))
    return 0;  // refused, with a reason: fine
  const auto canonical = to_json(m);
  inbound_message again;
  if (decode(canonical, {}, again) || to_json(again) != canonical)
    std::abort();
  return 0;
}
