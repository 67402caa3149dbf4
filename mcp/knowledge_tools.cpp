// The knowledge tools (docs/architecture.md): reads through the query service, changes as records
// on engram-log answered once applied. Arguments arrive checked against each tool's
// inputSchema (registry.hpp); what is left here is what a schema cannot say (an unknown id,
// an expired branch, an entry not awaiting review).
#include "mcp/internal/present.hpp"
#include "mcp/internal/tool_context.hpp"

#include "mcp/jsonrpc.hpp"
#include "knowledge/write_rules.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/knowledge_save.hpp"
#include "schemas/time.hpp"
#include "schemas/tools.hpp"

#include <stdexcept>

namespace engram::mcp {

namespace {

std::string str(const json& a, const char* k) {
  return a.contains(k) && a[k].is_string() ? a[k].get<std::string>() : std::string();
}

std::optional<schemas::entry_type> type_arg(const json& a) {
  return a.contains("type") && a["type"].is_string() ? schemas::parse_entry_type(a["type"].get<std::string>())
                                                     : std::nullopt;
}

query::result_kinds kinds_arg(const json& a) {
  if (!a.contains("kinds") || !a["kinds"].is_array())
    return {};
  query::result_kinds k{false, false};
  for (const auto& v : a["kinds"]) {
    k.entries |= v == "entry";
    k.passages |= v == "passage";
  }
  return k;
}

std::size_t count(const json& a, const char* k, std::size_t dflt) {
  return a.contains(k) && a[k].is_number() ? static_cast<std::size_t>(a[k].get<double>()) : dflt;
}

/// A knowledge command's result as the tools give it: the entries it changed, how many it
/// removed and branch saves it dropped, and for a forget what it forgot by kind.
json command_json(const storage::command_result& cr, bool forget) {
  json j{{"entries", json::array()}, {"removed", cr.removed.size()}, {"droppedSaves", cr.dropped_saves}};
  for (const auto& doc : cr.entries)
    j["entries"].push_back(json::parse(doc));
  if (forget)
    j["forgotten"] = cr.forgotten;
  return j;
}

/// A knowledge command from an agent: appended, answered once applied.
void command(tool_context& ctx, const grant& g, schemas::knowledge_command c, tool_reply reply,
             std::function<json(const json& result)> answer,
             std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
  stamp(ctx, g, c, "cmd-");
  const bool forget = c.op == schemas::command_op::forget;
  ctx.append_and_answer(
      c, std::move(reply),
      [answer = std::move(answer), forget](const services::applied_event& what) {
        if (auto refused = refused_answer(what))
          return *refused;
        // merge_branch answers with the saves it merged (JSON the store wrote), the rest typed.
        return answer(what.command ? command_json(*what.command, forget)
                                   : json::parse(what.result.empty() ? std::string("{}") : what.result));
      },
      wait);
}

/// How long a forget other than an entry's is waited for: the store compacts, and a forget
/// of messages rebuilds the organisation from engram-log (docs/forgetting.md).
constexpr std::chrono::minutes rebuild_wait{10};

std::string no_entry(const std::string& id) { return "id: no entry '" + id + "' in this organisation"; }

void save(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::knowledge_save s;
  s.type = *type_arg(a);
  s.title = str(a, "title");
  s.content = str(a, "content");
  s.branch_id = str(a, "branchId");
  if (!s.branch_id.empty())
    s.branch_ttl_ms = ctx.query().policy().branch_ttl_ms;
  s.contact_id = str(a, "contactId");
  s.confidence = a["confidence"].get<double>();
  for (const auto& t : a.value("tags", json::array()))
    s.tags.push_back(t.get<std::string>());
  s.event_id = ctx.new_event_id("save-");
  s.organization_id = g.organization_id;
  s.saved_at_ms = ctx.query().now();
  s.saved_at = schemas::format_rfc3339(s.saved_at_ms);
  s.saved_by = g.name;
  if (auto days = count(a, "expiresInDays", 0); days > 0)
    s.expires_at = schemas::format_rfc3339(s.saved_at_ms + static_cast<std::int64_t>(days) * 86400000);
  s.embedding = ctx.embed_save(s);
  ctx.append_and_answer(s, std::move(reply), [s](const services::applied_event& what) {
    if (what.error != storage::errc::ok)
      return tool_error("the store failed to apply the save");
    if (what.duplicate)
      return tool_error("already saved");
    if (!s.branch_id.empty()) {
      auto j = json::parse(what.result);
      j["branchId"] = s.branch_id;
      return tool_result(j);
    }
    if (what.resolutions.empty())
      return tool_error("the store failed to apply the save");
    return tool_result(json::parse(schemas::save_answer_json(s.organization_id, s.event_id, what.resolutions[0])));
  });
}

void recall(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  query::recall_request r;
  r.query = str(a, "query");
  r.contact_id = str(a, "contactId");
  r.branch_id = str(a, "branchId");
  r.type = type_arg(a);
  r.limit = count(a, "limit", 5);
  r.kinds = kinds_arg(a);
  for (auto [k, out] : {std::pair{"since", &r.since_ms}, {"until", &r.until_ms}})
    if (a.contains(k)) {
      *out = schemas::parse_rfc3339(str(a, k));
      if (!*out)
        return reply(tool_error(std::string(k) + ": not an RFC 3339 time (\"2026-03-05T10:00:00Z\")"));
    }
  std::string note;
  json out{{"results", ctx.capped(present_hits(ctx.query(), ctx.query().recall(g.organization_id, r, &note)))}};
  if (!note.empty())
    out["note"] = note;
  reply(tool_result(out));
}

void search(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  query::search_request r;
  r.query = str(a, "query");
  r.type = type_arg(a);
  r.limit = count(a, "limit", 10);
  r.kinds = kinds_arg(a);
  reply(tool_result({{"results", ctx.capped(present_hits(ctx.query(), ctx.query().search(g.organization_id, r)))}}));
}

void get(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  const auto id = str(a, "id");
  auto found = ctx.query().get(g.organization_id, id);
  reply(found ? tool_result(present_found(ctx.query(), *found)) : tool_error(no_entry(id)));
}

void validate(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::knowledge_command c;
  c.op = schemas::command_op::validate;
  c.id = str(a, "id");
  c.outcome = str(a, "outcome");
  if (!ctx.query().load(g.organization_id, c.id))
    return reply(tool_error(no_entry(c.id)));
  command(ctx, g, c, std::move(reply), [&ctx, c](const json& r) {
    if (r["entries"].empty())
      return tool_error(no_entry(c.id));
    knowledge::stored_entry stored;
    if (auto bad = knowledge::from_json(r["entries"][0], stored))
      return tool_error("internal: the store returned an unreadable entry (" + *bad + ")");
    auto e = present_entry(ctx.query(), stored);
    return tool_result({{"id", c.id},
                        {"outcome", c.outcome},
                        {"confidence", e["confidence"]},
                        {"effectiveConfidence", e["effectiveConfidence"]},
                        {"lastValidatedAt", e["lastValidatedAt"]}});
  });
}

void branch_op(tool_context& ctx, const grant& g, const json& a, tool_reply reply, bool merge) {
  schemas::knowledge_command c;
  c.op = merge ? schemas::command_op::merge_branch : schemas::command_op::discard_branch;
  c.branch_id = str(a, "branchId");
  c.ttl_ms = ctx.query().policy().branch_ttl_ms;
  if (!ctx.query().branch_alive(g.organization_id, c.branch_id))
    return reply(
        tool_error("branchId: no saves in branch '" + c.branch_id + "' (never used, merged, discarded or expired)"));
  command(ctx, g, c, std::move(reply), [c, merge](const json& r) {
    if (merge)
      return tool_result(r);
    return tool_result({{"branchId", c.branch_id}, {"discarded", r["droppedSaves"]}});
  });
}

void review_queue(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  reply(tool_result(
      {{"items",
        ctx.capped(present_review(ctx.query(), ctx.query().review_queue(g.organization_id, count(a, "limit", 10))))}}));
}

void resolve_review(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::knowledge_command c;
  c.op = schemas::command_op::resolve_review;
  c.id = str(a, "id");
  c.keep = str(a, "keep");
  auto doc = ctx.query().load(g.organization_id, c.id);
  if (!doc)
    return reply(tool_error(no_entry(c.id)));
  if (!knowledge::awaiting_review(*doc))
    return reply(tool_error("id: entry '" + c.id + "' is not awaiting review"));
  command(ctx, g, c, std::move(reply), [&ctx, c](const json& r) {
    json entries = json::array();
    for (const auto& e : r["entries"]) {
      knowledge::stored_entry stored;
      if (auto bad = knowledge::from_json(e, stored))
        return tool_error("internal: the store returned an unreadable entry (" + *bad + ")");
      entries.push_back(present_entry(ctx.query(), stored));
    }
    return tool_result({{"id", c.id}, {"keep", c.keep}, {"entries", entries}});
  });
}

void forget(tool_context& ctx, const grant& g, const json& a, tool_reply reply) {
  schemas::knowledge_command c;
  c.op = schemas::command_op::forget;
  c.what = str(a, "kind");
  c.id = a.contains("id") ? str(a, "id") : std::string();
  if (c.what == "contact" && !g.allows("admin"))
    return reply(tool_error("kind: forgetting a contact needs the admin scope"));
  if (c.what == "organization") {
    if (!g.allows("admin"))
      return reply(tool_error("kind: forgetting the organisation needs the admin scope"));
    if (c.id.empty())
      c.id = g.organization_id;
    if (c.id != g.organization_id)
      return reply(tool_error("id: a token forgets only its own organisation ('" + g.organization_id + "')"));
  } else {
    if (c.id.empty())
      return reply(tool_error("id: required for kind " + c.what));
    if (c.what == "entry" && !ctx.query().load(g.organization_id, c.id))
      return reply(tool_error(no_entry(c.id)));
    if (schemas::forgets_messages(c.what)) {
      // What to forget is read now and carried by the command, so a replay forgets the same.
      auto targets = ctx.store().find_forget_targets(g.organization_id, c.what, c.id);
      if (!targets.error.empty())
        return reply(tool_error(targets.error));
      c.events = std::move(targets.events);
      c.people = std::move(targets.people);
    }
  }
  command(
      ctx, g, c, std::move(reply),
      [c](const json& r) {
        return tool_result({{"kind", c.what}, {"id", c.id}, {"forgotten", r.value("forgotten", json::object())}});
      },
      c.what == "entry" ? std::chrono::milliseconds(0) : std::chrono::milliseconds(rebuild_wait));
}

}  // namespace

std::optional<json> refused_answer(const services::applied_event& what) {
  if (what.error != storage::errc::ok)
    return tool_error("the store failed to apply the command");
  if (what.duplicate)
    return tool_error("already applied");
  return std::nullopt;
}

std::function<json(const services::applied_event&)> answer_applied(std::function<json(const json& result)> answer) {
  return [answer = std::move(answer)](const services::applied_event& what) {
    if (auto refused = refused_answer(what))
      return *refused;
    return answer(json::parse(what.result));
  };
}

void add_tools(registry& r, tool_context& ctx, std::string_view definitions_json,
               const std::vector<std::tuple<const char*, const char*, tool_handler>>& table) {
  const auto definitions = json::parse(definitions_json);
  for (const auto& [name, scope, fn] : table) {
    auto def = std::find_if(definitions.begin(), definitions.end(),
                            [&name = name](const json& d) { return d["name"] == name; });
    if (def == definitions.end())
      throw std::logic_error(std::string("no definition of tool ") + name);  // a programmer's error
    r.add({*def, scope,
           [&ctx, fn = fn](const grant& g, const json& a, tool_reply rep) { fn(ctx, g, a, std::move(rep)); }, nullptr});
  }
  if (definitions.size() != table.size())
    throw std::logic_error("a tool definition without a handler");  // a programmer's error
}

void add_knowledge_tools(registry& r, tool_context& ctx) {
  add_tools(r, ctx, schemas::tool_definitions(),
            {{"save_knowledge", "write", save},
             {"recall_knowledge", "read", recall},
             {"get_knowledge", "read", get},
             {"search_knowledge", "read", search},
             {"validate_knowledge", "write", validate},
             {"merge_branch", "write",
              [](tool_context& c, const grant& g, const json& a, tool_reply rep) {
                branch_op(c, g, a, std::move(rep), true);
              }},
             {"discard_branch", "write",
              [](tool_context& c, const grant& g, const json& a, tool_reply rep) {
                branch_op(c, g, a, std::move(rep), false);
              }},
             {"list_review_queue", "read", review_queue},
             {"resolve_review", "write", resolve_review},
             {"forget_knowledge", "write", forget}});
}

}  // namespace engram::mcp
