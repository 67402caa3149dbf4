#include "schemas/knowledge_command.hpp"

#include "schemas/internal/json_fields.hpp"

#include "schemas/inbound_message.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <variant>

namespace engram::schemas {

namespace {

constexpr std::array<std::string_view, 8> op_names = {"validate", "resolve_review", "merge_branch", "discard_branch",
                                                      "expire",   "reminder_sent",  "chunk_failed", "forget"};

using op_set = std::uint16_t;
constexpr op_set bit(command_op op) { return static_cast<op_set>(1u << static_cast<unsigned>(op)); }

/// One field of the record after the common ones: its JSON name, where it lives, the ops that
/// need it (encoded always and required when decoding) and the ops that may omit it when
/// decoding (records written before the field was carried).
struct field {
  const char* name;
  std::variant<std::string knowledge_command::*, std::int64_t knowledge_command::*, std::int32_t knowledge_command::*>
      member;
  op_set required;
  op_set legacy_optional = 0;
};

// The one table the encoder and the decoder both read, so they cannot disagree.
const std::array<field, 13> fields{{
    {"id", &knowledge_command::id,
     bit(command_op::validate) | bit(command_op::resolve_review) | bit(command_op::reminder_sent) |
         bit(command_op::chunk_failed) | bit(command_op::forget)},
    {"what", &knowledge_command::what, bit(command_op::forget)},
    {"outcome", &knowledge_command::outcome, bit(command_op::validate)},
    {"keep", &knowledge_command::keep, bit(command_op::resolve_review)},
    {"branchId", &knowledge_command::branch_id, bit(command_op::merge_branch) | bit(command_op::discard_branch)},
    {"limit", &knowledge_command::limit, bit(command_op::expire)},
    {"ttlMs", &knowledge_command::ttl_ms, bit(command_op::expire) | bit(command_op::merge_branch),
     bit(command_op::merge_branch)},
    {"reminderId", &knowledge_command::reminder_id, bit(command_op::reminder_sent)},
    {"partition", &knowledge_command::reminder_partition, bit(command_op::reminder_sent)},
    {"title", &knowledge_command::title, 0},
    {"chunk", &knowledge_command::chunk, bit(command_op::chunk_failed)},
    {"chunks", &knowledge_command::chunks, bit(command_op::chunk_failed)},
    {"reason", &knowledge_command::reason, bit(command_op::chunk_failed)},
}};
// reminder_offset is carried as "offset" (below): -1 is its default, not 0.

bool is_default(const knowledge_command& c, const field& f) {
  return std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(c.*m)>;
        return c.*m == T{};
      },
      f.member);
}

}  // namespace

std::string_view to_string(command_op op) { return op_names[static_cast<std::size_t>(op)]; }

std::optional<command_op> parse_command_op(std::string_view s) {
  for (std::size_t i = 0; i < op_names.size(); ++i)
    if (op_names[i] == s)
      return static_cast<command_op>(i);
  return std::nullopt;
}

std::string to_json(const knowledge_command& c) {
  nlohmann::ordered_json j;
  detail::put_envelope(j, c);
  j["op"] = to_string(c.op);
  for (const auto& f : fields)
    if ((f.required & bit(c.op)) || !is_default(c, f))
      std::visit([&](auto m) { j[f.name] = c.*m; }, f.member);
  if (c.op == command_op::reminder_sent || c.reminder_offset != -1)
    j["offset"] = c.reminder_offset;
  for (auto [name, list] : {std::pair{"events", &c.events}, {"people", &c.people}})
    if (!list->empty())
      j[name] = *list;
  // A reason quotes what was refused, perhaps cut inside a character: replaced, not thrown.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::optional<std::string> decode(std::string_view bytes, knowledge_command& out) {
  auto j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("not a JSON object");
  std::string op;
  const detail::fields top(j, "");
  if (auto e = detail::read_envelope(top, out))
    return e;
  if (auto e = top.text("op", op, 64, true))
    return e;
  auto parsed = parse_command_op(op);
  if (!parsed)
    return "/op: unknown operation '" + op + "'";
  out.op = *parsed;
  for (const auto& f : fields) {
    const bool required = (f.required & bit(out.op)) && !(f.legacy_optional & bit(out.op));
    if (!j.contains(f.name)) {
      if (required)
        return std::string("/") + f.name + ": required for op " + op;
      continue;
    }
    const auto& v = j[f.name];
    auto bad = std::visit(
        [&](auto m) -> std::optional<std::string> {
          using T = std::decay_t<decltype(out.*m)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string() || (required && v.get<std::string>().empty()))
              return std::string("/") + f.name + ": must be a non-empty string";
            out.*m = v.get<std::string>();
          } else {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
                v.get<std::int64_t>() > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
              return std::string("/") + f.name + ": must be a non-negative integer";
            out.*m = static_cast<T>(v.get<std::int64_t>());
          }
          return std::nullopt;
        },
        f.member);
    if (bad)
      return bad;
  }
  if (j.contains("offset")) {
    if (!j["offset"].is_number_integer())
      return std::string("/offset: must be an integer");
    out.reminder_offset = j["offset"].get<std::int64_t>();
  } else if (out.op == command_op::reminder_sent) {
    return std::string("/offset: required for op reminder_sent");
  }
  for (auto [name, list] : {std::pair{"events", &out.events}, {"people", &out.people}}) {
    if (!j.contains(name))
      continue;
    const auto& v = j[name];
    if (!v.is_array())
      return std::string("/") + name + ": must be an array of strings";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get<std::string>().empty() || v[i].get<std::string>().size() > 512)
        return std::string("/") + name + "/" + std::to_string(i) + ": must be a non-empty string of at most 512 bytes";
      list->push_back(v[i].get<std::string>());
    }
  }
  if (out.op == command_op::validate && out.outcome != "approved" && out.outcome != "rejected")
    return std::string("/outcome: must be approved or rejected");
  if (out.op == command_op::resolve_review && out.keep != "newer" && out.keep != "older" && out.keep != "both")
    return std::string("/keep: must be newer, older or both");
  if (out.op == command_op::forget && out.what != retention_kind &&
      std::find(std::begin(forget_kinds), std::end(forget_kinds), out.what) == std::end(forget_kinds))
    return std::string("/what: must be entry, message, thread, document, contact, organization or retention");
  if (out.op == command_op::chunk_failed && (out.chunks < 1 || out.chunk >= out.chunks))
    return std::string("/chunk: must be less than chunks (at least 1)");
  return std::nullopt;
}

}  // namespace engram::schemas
