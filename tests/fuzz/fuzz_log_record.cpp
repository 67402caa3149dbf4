// libFuzzer: every engram-log record codec (schemas/log_record.hpp). The first byte picks the
// kind header (one of the record kinds, or the bytes up to the first newline as a kind of its
// own); the rest is the value. A record that decodes encodes again, and that encoding decodes
// to a record that encodes the same (the log's encoder and decoder agree).
#include "schemas/entity_command.hpp"
#include "schemas/extracted_message.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/kg_bundle.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/knowledge_save.hpp"
#include "schemas/log_record.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace engram::schemas;
  if (size == 0)
    return 0;
  static const char* kinds[] = {kind_inbound_message,   kind_extracted_message, kind_knowledge_save,
                                kind_knowledge_command, kind_entity_command,    kind_kg_bundle};
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view kind;
  if (data[0] < std::size(kinds)) {
    kind = kinds[data[0]];
  } else {
    const auto nl = rest.find('\n');
    kind = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  auto decoded = decode_record(kind, rest, {});
  auto* payload = std::get_if<log_payload>(&decoded);
  if (!payload)
    return 0;  // refused, with a reason
  const auto once = encode(*payload);
  auto again = decode_record(once.kind, once.value, {});
  auto* second = std::get_if<log_payload>(&again);
  if (!second)
    std::abort();
  const auto twice = encode(*second);
  if (twice.kind != once.kind || twice.value != once.value)
    std::abort();
  return 0;
}
