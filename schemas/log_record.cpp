#include "schemas/log_record.hpp"

namespace engram::schemas {

namespace {

constexpr std::array<std::string_view, all_record_kinds.size()> kind_names{
    kind_inbound_message,   kind_knowledge_save, kind_knowledge_command,
    kind_extracted_message, kind_entity_command, kind_kg_bundle};

const inbound_message& message_of(const inbound_message& m) { return m; }
const inbound_message& message_of(const extracted_message& x) { return x.message; }
template <class T>
const T& message_of(const T& v) {
  return v;
}

}  // namespace

std::string_view to_string(record_kind k) { return kind_names[static_cast<std::size_t>(k)]; }

std::optional<record_kind> parse_record_kind(std::string_view header) {
  if (header.empty())
    return record_kind::inbound_message;
  for (auto k : all_record_kinds)
    if (to_string(k) == header)
      return k;
  return std::nullopt;
}

record_kind kind_of(const log_payload& p) { return all_record_kinds[p.index()]; }

const std::string& organization_of(const log_payload& p) {
  return std::visit([](const auto& v) -> const std::string& { return message_of(v).organization_id; }, p);
}

const std::string& event_id_of(const log_payload& p) {
  return std::visit([](const auto& v) -> const std::string& { return message_of(v).event_id; }, p);
}

encoded_record encode(const log_payload& p) {
  return {organization_of(p), std::string(to_string(kind_of(p))),
          std::visit([](const auto& v) { return to_json(v); }, p)};
}

std::variant<log_payload, record_error> decode_record(std::string_view header, std::string_view value,
                                                      const decode_limits& limits) {
  auto kind = parse_record_kind(header);
  if (!kind)
    return record_error{"unknown record kind '" + std::string(header) + "'", "unknown_kind"};
  switch (*kind) {
    case record_kind::inbound_message: {
      inbound_message m;
      if (auto bad = decode(value, limits, m))
        return record_error{bad->to_string(), std::string(to_string(bad->what))};
      return log_payload{std::move(m)};
    }
    case record_kind::knowledge_save: {
      knowledge_save s;
      if (auto bad = decode(value, s))
        return record_error{"knowledge-save " + *bad, "schema"};
      return log_payload{std::move(s)};
    }
    case record_kind::knowledge_command: {
      knowledge_command c;
      if (auto bad = decode(value, c))
        return record_error{"knowledge-command " + *bad, "schema"};
      return log_payload{std::move(c)};
    }
    case record_kind::extracted_message: {
      extracted_message x;
      if (auto bad = decode(value, limits, x))
        return record_error{"extracted-message " + *bad, "schema"};
      return log_payload{std::move(x)};
    }
    case record_kind::entity_command: {
      entity_command c;
      if (auto bad = decode(value, c))
        return record_error{"entity-command " + *bad, "schema"};
      return log_payload{std::move(c)};
    }
    case record_kind::kg_bundle: {
      kg_command c;
      if (auto bad = decode(value, c))
        return record_error{"kg-bundle " + *bad, "schema"};
      return log_payload{std::move(c)};
    }
  }
  return record_error{"unknown record kind '" + std::string(header) + "'", "unknown_kind"};
}

}  // namespace engram::schemas
