#include "actors/mcp/mcp.hpp"
#include "actors/common/log.hpp"

#include "actors/extractor/signature.hpp"
#include "schemas/knowledge_command.hpp"
#include "schemas/knowledge_save.hpp"
#include "storage/vector_index.hpp"
#include "schemas/tools.hpp"
#include "schemas/time.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <condition_variable>
#include <thread>

namespace engram::mcp {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::mcp); }

using json = nlohmann::json;

constexpr int parse_error = -32700, invalid_request = -32600, method_not_found = -32601, invalid_params = -32602;

http::response json_response(int status, const json& body, std::vector<std::pair<std::string, std::string>> headers = {}) {
  return {status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace), std::move(headers)};
}

json rpc_error(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json rpc_result(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

/// A tool's answer: structured content plus the same as a text block.
json tool_result(json structured) {
  auto text = structured.dump(-1, ' ', false, json::error_handler_t::replace);
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"structuredContent", std::move(structured)},
          {"isError", false}};
}

/// A tool-level failure (validation, timeout): a result with isError, never a JSON-RPC error.
json tool_error(const std::string& message) {
  return {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
}

/// Origins a browser on this machine sends; anything else is refused (DNS rebinding).
bool local_origin(const std::string& origin) {
  for (const char* prefix : {"http://localhost", "http://127.0.0.1", "http://[::1]", "https://localhost",
                             "https://127.0.0.1", "https://[::1]"}) {
    std::string p(prefix);
    if (origin.rfind(p, 0) == 0 && (origin.size() == p.size() || origin[p.size()] == ':' || origin[p.size()] == '/'))
      return true;
  }
  return false;
}

std::string rfc3339(std::int64_t ms) {
  return schemas::format_rfc3339(ms);
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Argument checks with messages that name the field and the reason.
struct args {
  const json& a;
  std::string error;

  bool has(const char* k) const { return a.contains(k) && !a[k].is_null(); }
  std::string str(const char* k, bool required, std::size_t max) {
    if (!has(k)) {
      if (required && error.empty())
        error = std::string(k) + ": required";
      return {};
    }
    if (!a[k].is_string()) {
      if (error.empty())
        error = std::string(k) + ": must be a string";
      return {};
    }
    auto v = a[k].get<std::string>();
    if (error.empty() && (v.empty() || v.size() > max))
      error = std::string(k) + ": must be 1.." + std::to_string(max) + " characters";
    return v;
  }
  std::optional<schemas::entry_type> type(const char* k, bool required) {
    auto v = str(k, required, 32);
    if (v.empty())
      return std::nullopt;
    auto t = schemas::parse_entry_type(v);
    if (!t && error.empty())
      error = std::string(k) + ": must be one of fact, decision, event, preference, goal, relationship, action_item";
    return t;
  }
  std::int64_t integer(const char* k, std::int64_t dflt, std::int64_t lo, std::int64_t hi) {
    if (!has(k))
      return dflt;
    if (!a[k].is_number_integer() && !(a[k].is_number_float() && a[k].get<double>() == std::floor(a[k].get<double>()))) {
      if (error.empty())
        error = std::string(k) + ": must be an integer";
      return dflt;
    }
    auto v = a[k].get<double>();
    if ((v < double(lo) || v > double(hi)) && error.empty())
      error = std::string(k) + ": must be within " + std::to_string(lo) + ".." + std::to_string(hi);
    return static_cast<std::int64_t>(v);
  }
  void unknown_keys(std::initializer_list<const char*> known) {
    for (const auto& [k, _] : a.items())
      if (std::none_of(known.begin(), known.end(), [&](const char* x) { return k == x; }) && error.empty())
        error = k + ": unknown argument";
  }
};

}  // namespace

struct service::impl {
  mcp_dependencies deps;
  mcp_options opts;
  json tools = json::parse(schemas::tool_definitions());
  std::mt19937_64 rng{std::random_device{}()};
  std::mutex rng_mutex;
  /// Saves waiting for the store (their threads use this object).
  std::mutex wait_mutex;
  std::condition_variable wait_cv;
  std::size_t waiting = 0;

  ~impl() {
    std::unique_lock lock(wait_mutex);
    wait_cv.wait(lock, [&] { return waiting == 0; });
  }

  std::string new_event_id(const char* prefix = "save-") {
    std::lock_guard lock(rng_mutex);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%s%016llx", prefix, static_cast<unsigned long long>(rng()));
    return buf;
  }

  std::int64_t now() const { return deps.clock ? deps.clock->now_ms() : now_ms(); }

  /// Decayed confidence of a stored entry at `at` (ms).
  double effective(const json& doc, std::int64_t at) const {
    const double c = doc.value("confidence", 0.0);
    auto type = schemas::parse_entry_type(doc.value("entryType", ""));
    auto validated = schemas::parse_rfc3339(doc.value("lastValidatedAt", ""));
    if (!type || !validated)
      return c;
    return schemas::effective_confidence(c, *validated, at, opts.half_life_days[static_cast<std::size_t>(*type)]);
  }

  /// An entry as tools return it: the stored JSON minus internals, content capped, with its
  /// confidence decayed to `at`.
  json present(const json& doc, std::int64_t at) const {
    json e = json::object();
    for (const char* k : {"id", "organizationId", "entryType", "title", "content", "sourceType", "sourceId", "contactIds",
                          "threadId", "confidence", "lastValidatedAt", "expiresAt", "dueAt", "tags", "entities",
                          "relations", "status", "createdAt", "updatedAt", "branchId", "review", "supersededBy",
                          "reminderSentAt", "suspicious"})
      if (doc.contains(k))
        e[k] = doc[k];
    if (e.contains("content") && e["content"].is_string() && e["content"].get<std::string>().size() > 2000)
      e["content"] = e["content"].get<std::string>().substr(0, 2000);
    e["effectiveConfidence"] = std::round(effective(doc, at) * 1e6) / 1e6;
    return e;
  }

  std::optional<json> load(const std::string& org, const std::string& id) const {
    std::string raw;
    if (deps.store->get_entry(org, id, &raw) != storage::errc::ok)
      return std::nullopt;
    auto doc = json::parse(raw, nullptr, false);
    if (doc.is_discarded())
      return std::nullopt;
    return doc;
  }

  /// Visible now: not superseded, not expired.
  static bool visible(const json& doc, const std::string& now) {
    if (doc.value("status", "active") == "superseded")
      return false;
    return !(doc.contains("expiresAt") && doc["expiresAt"].is_string() && doc["expiresAt"].get<std::string>() <= now);
  }

  /// Keeps results while the answer stays under the size cap.
  json capped(std::vector<json> results) const {
    json out = json::array();
    std::size_t bytes = 0;
    for (auto& r : results) {
      bytes += r.dump().size();
      if (bytes > opts.max_response_bytes && !out.empty())
        break;
      out.push_back(std::move(r));
    }
    return out;
  }

  static std::vector<std::string> terms_of(const std::string& text) {
    const auto words = extractor::content_words(text);
    const auto ws = schemas::split_words(words);
    return {ws.begin(), ws.end()};
  }

  json recall(const grant& g, const json& a) {
    args v{a, {}};
    v.unknown_keys({"query", "contactId", "type", "limit", "branchId"});
    auto query = v.str("query", true, schemas::max_query);
    auto contact = v.str("contactId", false, schemas::max_id);
    auto branch = v.str("branchId", false, schemas::max_id);
    auto type = v.type("type", false);
    auto limit = v.integer("limit", 5, 1, schemas::max_recall);
    if (!v.error.empty())
      return tool_error(v.error);
    const auto& org = g.organization_id;
    std::map<std::string, double> fused;  // reciprocal rank fusion, k = 60
    auto text = deps.store->search_text(org, terms_of(query), 100);
    for (std::size_t i = 0; i < text.size(); ++i)
      fused[text[i].first] += 1.0 / (60.0 + double(i + 1));
    std::vector<std::string_view> q{query};
    std::vector<std::vector<float>> qv;
    std::string error;
    if (deps.embedder && deps.index && deps.embedder->embed(q, qv, &error)) {
      auto near = deps.index->nearest(org, qv[0], 100);
      for (std::size_t i = 0; i < near.size(); ++i)
        fused[near[i].first] += 1.0 / (60.0 + double(i + 1));
    } else if (!error.empty()) {
      logger().warn("recall without vectors (embedding failed): {}", error);
    }
    const auto at = now();
    const auto now = rfc3339(at);
    std::map<std::string, json> branch_docs;  // the branch's own saves, seen only here
    if (!branch.empty())
      add_branch(org, branch, at, query, qv.empty() ? nullptr : &qv[0], fused, branch_docs);
    // Entries are read in fused order, at most 8 × limit of them: parsing every candidate
    // dominated. The type and contact filters may then leave fewer than `limit`.
    std::vector<std::pair<std::string, double>> order(fused.begin(), fused.end());
    std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    if (order.size() > static_cast<std::size_t>(limit) * 8)
      order.resize(static_cast<std::size_t>(limit) * 8);
    std::vector<std::pair<double, json>> scored;
    for (const auto& [id, rrf] : order) {
      auto overlaid = branch_docs.find(id);
      auto doc = overlaid != branch_docs.end() ? std::optional<json>(overlaid->second) : load(org, id);
      if (!doc || !visible(*doc, now) || effective(*doc, at) < opts.hide_below)
        continue;
      if (type && doc->value("entryType", "") != schemas::to_string(*type))
        continue;
      double weight = 1.0;
      const auto& contacts = (*doc)["contactIds"];
      if (!contact.empty()) {
        bool mine = std::find(contacts.begin(), contacts.end(), contact) != contacts.end();
        if (mine)
          weight = 2.0;  // the contact's own knowledge first
        else if (!contacts.empty())
          continue;  // another contact's: not in this contact's scope
      }
      double score = rrf * weight * std::max(0.05, effective(*doc, at));
      auto e = present(*doc, at);
      e["score"] = score;
      scored.emplace_back(score, std::move(e));
    }
    std::sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second["id"] < y.second["id"];
    });
    std::vector<json> results;
    for (std::size_t i = 0; i < scored.size() && i < static_cast<std::size_t>(limit); ++i)
      results.push_back(std::move(scored[i].second));
    return tool_result({{"results", capped(std::move(results))}});
  }

  json search(const grant& g, const json& a) {
    args v{a, {}};
    v.unknown_keys({"query", "type", "limit"});
    auto query = v.str("query", true, schemas::max_query);
    auto type = v.type("type", false);
    auto limit = v.integer("limit", 10, 1, schemas::max_search);
    if (!v.error.empty())
      return tool_error(v.error);
    const auto at = now();
    const auto now = rfc3339(at);
    std::vector<json> results;
    for (const auto& [id, score] : deps.store->search_text(g.organization_id, terms_of(query), 200)) {
      if (results.size() == static_cast<std::size_t>(limit))
        break;
      auto doc = load(g.organization_id, id);
      if (!doc || !visible(*doc, now) || effective(*doc, at) < opts.hide_below ||
          (type && doc->value("entryType", "") != schemas::to_string(*type)))
        continue;
      auto e = present(*doc, at);
      e["score"] = score;
      results.push_back(std::move(e));
    }
    return tool_result({{"results", capped(std::move(results))}});
  }

  json get(const grant& g, const json& a) {
    args v{a, {}};
    v.unknown_keys({"id"});
    auto id = v.str("id", true, schemas::max_id);
    if (!v.error.empty())
      return tool_error(v.error);
    auto doc = load(g.organization_id, id);
    if (!doc)
      return tool_error("id: no entry '" + id + "' in this organisation");
    json source = nullptr;
    std::string raw;
    if (deps.store->get_message(g.organization_id, doc->value("eventId", ""), &raw) == storage::errc::ok)
      source = json::parse(raw, nullptr, false);
    if (source.is_discarded())
      source = nullptr;
    return tool_result({{"entry", present(*doc, now())}, {"source", source}});
  }

  /// Validates, appends to engram-log and answers once applied (or times out).
  void save(const grant& g, const json& a, const json& id, http::responder respond) {
    args v{a, {}};
    v.unknown_keys({"type", "title", "content", "contactId", "confidence", "expiresInDays", "tags", "branchId"});
    schemas::knowledge_save s;
    auto type = v.type("type", true);
    s.title = v.str("title", true, schemas::max_title);
    s.content = v.str("content", true, schemas::max_content);
    s.branch_id = v.str("branchId", false, schemas::max_id);
    if (!s.branch_id.empty())
      s.branch_ttl_ms = opts.branch_ttl_ms;
    s.contact_id = v.str("contactId", false, schemas::max_id);
    if (v.error.empty()) {
      if (!a.contains("confidence"))
        v.error = "confidence: required";
      else if (!a["confidence"].is_number() || a["confidence"].get<double>() < 0 || a["confidence"].get<double>() > 1)
        v.error = "confidence: must be a number within 0..1";
      else
        s.confidence = a["confidence"].get<double>();
    }
    auto days = v.integer("expiresInDays", 0, 1, schemas::max_expires_days);
    if (v.error.empty() && v.has("tags")) {
      if (!a["tags"].is_array() || a["tags"].size() > schemas::max_tags)
        v.error = "tags: must be an array of at most " + std::to_string(schemas::max_tags) + " strings";
      else
        for (const auto& t : a["tags"]) {
          if (!t.is_string() || t.get<std::string>().empty() || t.get<std::string>().size() > schemas::max_tag) {
            v.error = "tags: each must be a string of 1.." + std::to_string(schemas::max_tag) + " characters";
            break;
          }
          s.tags.push_back(t.get<std::string>());
        }
    }
    if (!v.error.empty())
      return respond(json_response(200, rpc_result(id, tool_error(v.error))));
    s.type = *type;
    s.event_id = new_event_id();
    s.organization_id = g.organization_id;
    s.saved_at_ms = now();
    s.saved_at = rfc3339(s.saved_at_ms);
    s.saved_by = g.name;
    if (days > 0)
      s.expires_at = rfc3339(s.saved_at_ms + days * 86400000);
    append_and_answer(s, id, std::move(respond), [s](const actors::applied_event& what) {
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
                        return tool_result(json::parse(schemas::save_answer_json(s.organization_id, s.event_id,
                                                                                 what.resolutions[0])));
                      });
  }

  /// Appends one record to engram-log and answers once the store has applied it (read your
  /// writes), with `answer(what the store said)`, or after opts.save_timeout with isError
  /// (the record stays on the log and will be applied).
  void append_and_answer(const schemas::log_payload& record, const json& id, http::responder respond,
                         std::function<json(const actors::applied_event&)> answer) {
    const auto& org = schemas::organization_of(record);
    const auto& event_id = schemas::event_id_of(record);
    auto applied = deps.notifier->expect(org, event_id);
    std::string error;
    if (!deps.append(schemas::encode(record), &error)) {
      deps.notifier->forget(org, event_id);
      return respond(json_response(200, rpc_result(id, tool_error("not done: engram-log refused the record: " + error))));
    }
    // Wait off the I/O thread; the answer goes out from here.
    {
      std::lock_guard lock(wait_mutex);
      ++waiting;
    }
    std::thread([this, org, event_id, id, respond = std::move(respond), applied = std::move(applied),
                 answer = std::move(answer)]() mutable {
      struct done_guard {
        impl* self;
        ~done_guard() {
          std::lock_guard lock(self->wait_mutex);
          --self->waiting;
          self->wait_cv.notify_all();
        }
      } guard{this};
      if (applied.wait_for(opts.save_timeout) != std::future_status::ready) {
        deps.notifier->forget(org, event_id);
        respond(json_response(
            200, rpc_result(id, tool_error("written to engram-log as " + event_id + " but not applied within " +
                                           std::to_string(opts.save_timeout.count()) +
                                           " ms; it will be applied (nothing is lost), check again later"))));
        return;
      }
      auto what = applied.get();
      if (!what.rejected.empty())
        return respond(json_response(200, rpc_result(id, tool_error(what.rejected))));
      respond(json_response(200, rpc_result(id, answer(what))));
    }).detach();
  }

  /// A knowledge command from an agent: checked, appended, answered once applied.
  void command(const grant& g, schemas::knowledge_command c, const json& id, http::responder respond,
               std::function<json(const json& result)> answer) {
    c.organization_id = g.organization_id;
    c.event_id = new_event_id("cmd-");
    const auto at = now();
    c.issued_at_ms = at;
    c.issued_at = rfc3339(at);
    c.issued_by = g.name;
    append_and_answer(c, id, std::move(respond), [answer = std::move(answer)](const actors::applied_event& what) {
                        if (what.error != storage::errc::ok)
                          return tool_error("the store failed to apply the command");
                        if (what.duplicate)
                          return tool_error("already applied");
                        return answer(json::parse(what.result));
                      });
  }

  void validate(const grant& g, const json& a, const json& id, http::responder respond) {
    args v{a, {}};
    v.unknown_keys({"id", "outcome"});
    schemas::knowledge_command c;
    c.op = schemas::command_op::validate;
    c.id = v.str("id", true, schemas::max_id);
    c.outcome = v.str("outcome", true, 16);
    if (v.error.empty() && c.outcome != "approved" && c.outcome != "rejected")
      v.error = "outcome: must be approved or rejected";
    if (v.error.empty() && !load(g.organization_id, c.id))
      v.error = "id: no entry '" + c.id + "' in this organisation";
    if (!v.error.empty())
      return respond(json_response(200, rpc_result(id, tool_error(v.error))));
    command(g, c, id, std::move(respond), [this, c](const json& r) {
      if (r["entries"].empty())
        return tool_error("id: no entry '" + c.id + "' in this organisation");
      auto e = present(r["entries"][0], now());
      return tool_result({{"id", c.id},
                          {"outcome", c.outcome},
                          {"confidence", e["confidence"]},
                          {"effectiveConfidence", e["effectiveConfidence"]},
                          {"lastValidatedAt", e["lastValidatedAt"]}});
    });
  }

  void branch_op(const grant& g, const json& a, const json& id, http::responder respond, bool merge) {
    args v{a, {}};
    v.unknown_keys({"branchId"});
    schemas::knowledge_command c;
    c.op = merge ? schemas::command_op::merge_branch : schemas::command_op::discard_branch;
    c.branch_id = v.str("branchId", true, schemas::max_id);
    c.ttl_ms = opts.branch_ttl_ms;
    std::int64_t last = 0;
    if (v.error.empty() && (deps.store->branch_saves(g.organization_id, c.branch_id, &last).empty() ||
                            last + opts.branch_ttl_ms < now()))
      v.error = "branchId: no saves in branch '" + c.branch_id + "' (never used, merged, discarded or expired)";
    if (!v.error.empty())
      return respond(json_response(200, rpc_result(id, tool_error(v.error))));
    command(g, c, id, std::move(respond), [c, merge](const json& r) {
      if (merge)
        return tool_result(r);
      return tool_result({{"branchId", c.branch_id}, {"discarded", r["droppedSaves"]}});
    });
  }

  json review_queue(const grant& g, const json& a) {
    args v{a, {}};
    v.unknown_keys({"limit"});
    auto limit = v.integer("limit", 10, 1, 50);
    if (!v.error.empty())
      return tool_error(v.error);
    const auto at = now();
    json items = json::array();
    for (const auto& [flagged, by] : deps.store->review_queue(g.organization_id, static_cast<std::size_t>(limit))) {
      auto older = load(g.organization_id, flagged);
      if (!older)
        continue;
      json newer = nullptr;
      if (auto n = load(g.organization_id, by))
        newer = present(*n, at);
      items.push_back({{"entry", present(*older, at)}, {"contradictedBy", newer}});
    }
    return tool_result({{"items", capped(std::vector<json>(items.begin(), items.end()))}});
  }

  void resolve_review(const grant& g, const json& a, const json& id, http::responder respond) {
    args v{a, {}};
    v.unknown_keys({"id", "keep"});
    schemas::knowledge_command c;
    c.op = schemas::command_op::resolve_review;
    c.id = v.str("id", true, schemas::max_id);
    c.keep = v.str("keep", true, 8);
    if (v.error.empty() && c.keep != "newer" && c.keep != "older" && c.keep != "both")
      v.error = "keep: must be newer, older or both";
    if (v.error.empty()) {
      auto doc = load(g.organization_id, c.id);
      if (!doc)
        v.error = "id: no entry '" + c.id + "' in this organisation";
      else if (doc->value("status", "") != "flagged")
        v.error = "id: entry '" + c.id + "' is not awaiting review";
    }
    if (!v.error.empty())
      return respond(json_response(200, rpc_result(id, tool_error(v.error))));
    command(g, c, id, std::move(respond), [this, c](const json& r) {
      json entries = json::array();
      const auto at = now();
      for (const auto& e : r["entries"])
        entries.push_back(present(e, at));
      return tool_result({{"id", c.id}, {"keep", c.keep}, {"entries", entries}});
    });
  }

  /// A branch save as the entry it would become, for that branch's recalls.
  static json branch_doc(const schemas::knowledge_save& s) {
    json contacts = json::array();
    if (!s.contact_id.empty())
      contacts.push_back(s.contact_id);
    return {{"id", schemas::entry_id(s.organization_id, s.event_id, 0)},
            {"organizationId", s.organization_id},
            {"entryType", schemas::to_string(s.type)},
            {"title", s.title},
            {"content", s.content},
            {"sourceType", "manual"},
            {"sourceId", s.event_id},
            {"contactIds", contacts},
            {"confidence", s.confidence},
            {"lastValidatedAt", s.saved_at},
            {"expiresAt", s.expires_at.empty() ? json(nullptr) : json(s.expires_at)},
            {"tags", s.tags},
            {"relations", json::array()},
            {"status", "active"},
            {"branchId", s.branch_id},
            {"createdAt", s.saved_at},
            {"updatedAt", s.saved_at}};
  }

  /// A branch's own saves into a recall's fusion: ranked by cosine to the query and by the
  /// query words they share. Nothing when the branch is unknown or expired.
  void add_branch(const std::string& org, const std::string& branch, std::int64_t at, const std::string& query,
                  const std::vector<float>* qv, std::map<std::string, double>& fused,
                  std::map<std::string, json>& docs) const {
    std::int64_t last = 0;
    auto saves = deps.store->branch_saves(org, branch, &last);
    if (saves.empty() || last + opts.branch_ttl_ms < at)
      return;
    const auto q = terms_of(query);
    const std::set<std::string> qset(q.begin(), q.end());
    std::vector<std::pair<double, std::string>> by_vector, by_words;
    for (const auto& b : saves) {
      schemas::knowledge_save s;
      if (schemas::decode(b.save_json, s))
        continue;
      auto doc = branch_doc(s);
      const auto eid = doc["id"].get<std::string>();
      docs[eid] = std::move(doc);
      if (qv && b.embedding.size() == qv->size())
        by_vector.emplace_back(-static_cast<double>(storage::dot(*qv, b.embedding)), eid);
      std::size_t shared = 0;
      const auto words = terms_of(s.title + " " + s.content);
      for (const auto& t : std::set<std::string>(words.begin(), words.end()))
        shared += qset.count(t);
      if (shared)
        by_words.emplace_back(-static_cast<double>(shared), eid);
    }
    for (auto* ranked : {&by_vector, &by_words}) {
      std::sort(ranked->begin(), ranked->end());
      for (std::size_t i = 0; i < ranked->size(); ++i)
        fused[(*ranked)[i].second] += 1.0 / (60.0 + double(i + 1));
    }
  }
};

service::service(mcp_dependencies deps, mcp_options opts) : impl_(std::make_unique<impl>()) {
  impl_->deps = std::move(deps);
  impl_->opts = std::move(opts);
}

service::~service() = default;

void service::handle(const http::request& req, http::responder respond) {
  auto& m = *impl_;
  if (m.deps.metrics) {
    // Every answer passes here once: count it by tool (or method) and outcome.
    std::string what = "unknown";
    auto msg = json::parse(req.body, nullptr, false);
    if (msg.is_object() && msg.contains("method") && msg["method"].is_string()) {
      what = msg["method"].get<std::string>();
      if (what == "tools/call" && msg.contains("params") && msg["params"].is_object() &&
          msg["params"].contains("name") && msg["params"]["name"].is_string())
        what = msg["params"]["name"].get<std::string>();
    }
    // Labels only from a fixed set: a client must not mint new series.
    static const std::set<std::string> known{
        "initialize",      "ping",           "tools/list",         "tools/call",        "save_knowledge",
        "recall_knowledge", "get_knowledge", "search_knowledge",   "validate_knowledge", "merge_branch",
        "discard_branch",  "list_review_queue", "resolve_review"};
    if (what.rfind("notifications/", 0) == 0)
      what = "notification";
    else if (!known.count(what))
      what = "other";
    respond = [metrics = m.deps.metrics, what, t0 = std::chrono::steady_clock::now(),
               inner = std::move(respond)](http::response r) {
      std::string outcome = r.status == 200 ? "ok" : r.status == 202 ? "ok" : "http_" + std::to_string(r.status);
      if (r.status == 200 && r.body.find("\"isError\":true") != std::string::npos)
        outcome = "tool_error";
      else if (r.status == 200 && r.body.find("\"error\":{") != std::string::npos)
        outcome = "rpc_error";
      metrics->observe_mcp(what, outcome,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      inner(std::move(r));
    };
  }
  auto header = [&](const char* k) {
    auto it = req.headers.find(k);
    return it == req.headers.end() ? std::string() : it->second;
  };
  // Origin first: a foreign page must learn nothing, not even whether a token is valid.
  if (auto origin = header("origin"); !origin.empty() && !local_origin(origin))
    return respond(json_response(403, rpc_error(nullptr, invalid_request, "origin not allowed: " + origin)));
  // Auth on every request.
  const grant* g = nullptr;
  grant anonymous;
  auto auth = header("authorization");
  if (auth.empty() && !m.opts.anonymous_organization.empty()) {
    anonymous = {m.opts.anonymous_organization, {"read", "write"}, "anonymous"};
    g = &anonymous;
  } else {
    const std::string bearer = "Bearer ";
    if (auth.size() > bearer.size() && std::equal(bearer.begin(), bearer.end(), auth.begin(), [](char x, char y) {
          return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
        }))
      if (auto it = m.opts.tokens.find(auth.substr(bearer.size())); it != m.opts.tokens.end())
        g = &it->second;
    if (!g)
      return respond(json_response(
          401, rpc_error(nullptr, invalid_request, auth.empty() ? "authorization required" : "invalid token"),
          {{"WWW-Authenticate", auth.empty() ? "Bearer realm=\"engram\""
                                             : "Bearer realm=\"engram\", error=\"invalid_token\""}}));
  }
  if (req.method != "POST")
    return respond(json_response(405, rpc_error(nullptr, invalid_request, "use POST for /mcp (no SSE stream here)"),
                                 {{"Allow", "POST"}}));
  if (auto v = header("mcp-protocol-version");
      !v.empty() && std::none_of(std::begin(protocol_versions), std::end(protocol_versions),
                                 [&](const char* p) { return v == p; }))
    return respond(json_response(400, rpc_error(nullptr, invalid_request, "unsupported MCP-Protocol-Version " + v)));
  auto msg = json::parse(req.body, nullptr, false);
  if (msg.is_discarded())
    return respond(json_response(400, rpc_error(nullptr, parse_error, "parse error: the body is not JSON")));
  if (msg.is_array())
    return respond(json_response(400, rpc_error(nullptr, invalid_request, "batches are not supported: send one message")));
  if (!msg.is_object() || msg.value("jsonrpc", "") != "2.0" || !msg.contains("method") || !msg["method"].is_string())
    return respond(json_response(400, rpc_error(msg.is_object() && msg.contains("id") ? msg["id"] : json(nullptr),
                                                invalid_request, "not a JSON-RPC 2.0 request")));
  const auto method = msg["method"].get<std::string>();
  if (!msg.contains("id")) {  // a notification (initialized, cancelled, ...): accepted, nothing to answer
    respond(http::response{202, "application/json", "", {}});
    return;
  }
  const json id = msg["id"];
  if (!id.is_string() && !id.is_number_integer())
    return respond(json_response(400, rpc_error(nullptr, invalid_request, "id: must be a string or an integer")));
  const json params = msg.contains("params") ? msg["params"] : json::object();
  if (!params.is_object())
    return respond(json_response(200, rpc_error(id, invalid_params, "params: must be an object")));
  auto reply = [&](json result) { respond(json_response(200, rpc_result(id, std::move(result)))); };
  if (method == "initialize") {
    std::string asked = params.value("protocolVersion", "");
    std::string version = protocol_versions[0];
    for (const char* p : protocol_versions)
      if (asked == p)
        version = p;
    return reply({{"protocolVersion", version},
                  {"capabilities", {{"tools", {{"listChanged", false}}}}},
                  {"serverInfo", {{"name", "engram"}, {"version", "0.1.0"}}},
                  {"instructions", "Engram: this organisation's knowledge, read from its mail and chat. "
                                   "recall_knowledge before answering; save_knowledge what you learn."}});
  }
  if (method == "ping")
    return reply(json::object());
  if (method == "tools/list")
    return reply({{"tools", m.tools}});
  if (method != "tools/call")
    return respond(json_response(200, rpc_error(id, method_not_found, "method not found: " + method)));
  if (!params.contains("name") || !params["name"].is_string())
    return respond(json_response(200, rpc_error(id, invalid_params, "params.name: must be a tool name")));
  const auto name = params["name"].get<std::string>();
  const json arguments = params.contains("arguments") ? params["arguments"] : json::object();
  if (!arguments.is_object())
    return respond(json_response(200, rpc_error(id, invalid_params, "params.arguments: must be an object")));
  static const std::set<std::string> readers{"recall_knowledge", "get_knowledge", "search_knowledge",
                                             "list_review_queue"};
  static const std::set<std::string> writers{"save_knowledge", "validate_knowledge", "merge_branch", "discard_branch",
                                             "resolve_review"};
  const bool writes = writers.count(name) > 0;
  if (!writes && !readers.count(name))
    return respond(json_response(200, rpc_error(id, invalid_params, "unknown tool: " + name)));
  if (!g->scopes.count(writes ? "write" : "read") && !g->scopes.count("admin"))
    return respond(json_response(403, rpc_error(id, invalid_request,
                                                std::string("this token lacks the ") + (writes ? "write" : "read") +
                                                    " scope")));
  try {
    if (name == "save_knowledge")
      return m.save(*g, arguments, id, std::move(respond));
    if (name == "validate_knowledge")
      return m.validate(*g, arguments, id, std::move(respond));
    if (name == "merge_branch" || name == "discard_branch")
      return m.branch_op(*g, arguments, id, std::move(respond), name == "merge_branch");
    if (name == "resolve_review")
      return m.resolve_review(*g, arguments, id, std::move(respond));
    if (name == "list_review_queue")
      return reply(m.review_queue(*g, arguments));
    if (name == "recall_knowledge")
      return reply(m.recall(*g, arguments));
    if (name == "get_knowledge")
      return reply(m.get(*g, arguments));
    return reply(m.search(*g, arguments));
  } catch (const std::exception& e) {
    logger().error("{} failed: {}", name, e.what());
    return reply(tool_error(name + " failed: " + e.what()));
  }
}

}  // namespace engram::mcp
