#include "schemas/knowledge_command.hpp"

#include "schemas/inbound_message.hpp"

#include <nlohmann/json.hpp>

#include <array>

namespace engram::schemas {

namespace {

constexpr std::array<std::string_view, 6> op_names = {"validate",       "resolve_review", "merge_branch",
                                                      "discard_branch", "expire",         "reminder_sent"};

}  // namespace

std::string_view to_string(command_op op) {
  return op_names[static_cast<std::size_t>(op)];
}

std::optional<command_op> parse_command_op(std::string_view s) {
  for (std::size_t i = 0; i < op_names.size(); ++i)
    if (op_names[i] == s)
      return static_cast<command_op>(i);
  return std::nullopt;
}

std::string to_json(const knowledge_command& c) {
  nlohmann::ordered_json j;
  j["eventId"] = c.event_id;
  j["organizationId"] = c.organization_id;
  j["issuedAt"] = c.issued_at;
  j["issuedBy"] = c.issued_by;
  j["op"] = to_string(c.op);
  switch (c.op) {
    case command_op::validate:
      j["id"] = c.id;
      j["outcome"] = c.outcome;
      break;
    case command_op::resolve_review:
      j["id"] = c.id;
      j["keep"] = c.keep;
      break;
    case command_op::merge_branch:
    case command_op::discard_branch: j["branchId"] = c.branch_id; break;
    case command_op::expire:
      j["limit"] = c.limit;
      j["ttlMs"] = c.ttl_ms;
      break;
    case command_op::reminder_sent:
      j["id"] = c.id;
      j["reminderId"] = c.reminder_id;
      j["partition"] = c.reminder_partition;
      j["offset"] = c.reminder_offset;
      break;
  }
  return j.dump();
}

std::optional<std::string> decode(std::string_view bytes, knowledge_command& out) {
  auto j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("not a JSON object");
  auto str = [&](const char* k, std::string& dst) -> std::optional<std::string> {
    if (!j.contains(k) || !j[k].is_string() || j[k].get<std::string>().empty())
      return std::string("/") + k + ": required non-empty string";
    dst = j[k].get<std::string>();
    return std::nullopt;
  };
  auto integer = [&](const char* k, std::int64_t& dst) -> std::optional<std::string> {
    if (!j.contains(k) || !j[k].is_number_integer() || j[k].get<std::int64_t>() < 0)
      return std::string("/") + k + ": required non-negative integer";
    dst = j[k].get<std::int64_t>();
    return std::nullopt;
  };
  std::string op;
  for (auto [k, dst] : {std::pair{"eventId", &out.event_id}, {"organizationId", &out.organization_id},
                        {"issuedAt", &out.issued_at}, {"op", &op}})
    if (auto e = str(k, *dst))
      return e;
  if (j.contains("issuedBy") && j["issuedBy"].is_string())
    out.issued_by = j["issuedBy"].get<std::string>();
  auto ms = parse_rfc3339(out.issued_at);
  if (!ms)
    return std::string("/issuedAt: not an RFC 3339 time");
  out.issued_at_ms = *ms;
  auto parsed = parse_command_op(op);
  if (!parsed)
    return "/op: unknown operation '" + op + "'";
  out.op = *parsed;
  std::optional<std::string> e;
  switch (out.op) {
    case command_op::validate:
      if ((e = str("id", out.id)) || (e = str("outcome", out.outcome)))
        return e;
      if (out.outcome != "approved" && out.outcome != "rejected")
        return std::string("/outcome: must be approved or rejected");
      break;
    case command_op::resolve_review:
      if ((e = str("id", out.id)) || (e = str("keep", out.keep)))
        return e;
      if (out.keep != "newer" && out.keep != "older" && out.keep != "both")
        return std::string("/keep: must be newer, older or both");
      break;
    case command_op::merge_branch:
    case command_op::discard_branch:
      if ((e = str("branchId", out.branch_id)))
        return e;
      break;
    case command_op::expire:
      if ((e = integer("limit", out.limit)) || (e = integer("ttlMs", out.ttl_ms)))
        return e;
      break;
    case command_op::reminder_sent:
      if ((e = str("id", out.id)) || (e = str("reminderId", out.reminder_id)))
        return e;
      if (!j.contains("partition") || !j["partition"].is_number_integer() || !j.contains("offset") ||
          !j["offset"].is_number_integer())
        return std::string("/partition, /offset: required integers");
      out.reminder_partition = j["partition"].get<std::int32_t>();
      out.reminder_offset = j["offset"].get<std::int64_t>();
      break;
  }
  return std::nullopt;
}

}  // namespace engram::schemas
