#include "tools/engramctl/forget.hpp"

#include "net/http.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>

namespace engram::ctl {

namespace {

std::string base(std::string url) {
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  return url;
}

std::map<std::string, std::string> headers(const forget_options& o) {
  return {{"Content-Type", "application/json"},
          {"Accept", "application/json, text/event-stream"},
          {"Authorization", "Bearer " + o.token}};
}

/// What an answer's `error` says: the text of {"error": "..."} (engramd's HTTP answers) or of
/// {"error": {"message": "..."}} (JSON-RPC); `fallback` when it says neither.
std::string error_text(const nlohmann::json& j, const std::string& fallback) {
  const auto e = j.find("error");
  if (e == j.end())
    return fallback;
  if (e->is_string())
    return e->get<std::string>();
  if (e->is_object() && e->contains("message") && (*e)["message"].is_string())
    return (*e)["message"].get<std::string>();
  return fallback;
}

}  // namespace

int forget(const forget_options& o, std::ostream& out, std::ostream& err) {
  nlohmann::json args{{"kind", o.kind}};
  if (!o.id.empty())
    args["id"] = o.id;
  const nlohmann::json call{{"jsonrpc", "2.0"},
                            {"id", 1},
                            {"method", "tools/call"},
                            {"params", {{"name", "forget_knowledge"}, {"arguments", args}}}};
  // A forget is answered once the store applied it: an organisation's may take a while.
  auto r = net::fetch("POST", base(o.url) + "/mcp", call.dump(), headers(o), std::chrono::minutes(10));
  if (r.status == 0) {
    err << "forget: " << r.error << "\n";
    return 1;
  }
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    err << "forget: HTTP " << r.status << ": " << r.body << "\n";
    return 1;
  }
  if (j.contains("error") || !j.contains("result") || !j["result"].is_object()) {
    err << "forget: " << error_text(j, r.body) << "\n";
    return 1;
  }
  const auto& result = j["result"];
  const auto failed = result.find("isError");
  if (failed != result.end() && failed->is_boolean() && failed->get<bool>()) {
    std::string text = r.body;  // the tool's words when the answer has them where MCP puts them
    const auto c = result.find("content");
    if (c != result.end() && c->is_array() && !c->empty() && (*c)[0].is_object() && (*c)[0].contains("text") &&
        (*c)[0]["text"].is_string())
      text = (*c)[0]["text"].get<std::string>();
    err << "forget: " << text << "\n";
    return 1;
  }
  out << result.value("structuredContent", nlohmann::json::object()).dump(2) << "\n";
  return 0;
}

int audit(const forget_options& o, std::ostream& out, std::ostream& err) {
  auto r = net::fetch("GET", base(o.url) + "/v1/audit", {}, headers(o));
  if (r.status == 0) {
    err << "audit: " << r.error << "\n";
    return 1;
  }
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (r.status != 200 || j.is_discarded()) {
    err << "audit: HTTP " << r.status << ": " << (j.is_object() ? error_text(j, r.body) : r.body) << "\n";
    return 1;
  }
  for (const auto& f : j.value("forgets", nlohmann::json::array()))
    out << f.value("issuedAt", "") << "  " << f.value("issuedBy", "") << "  forgot " << f.value("what", "") << " "
        << f.value("id", "") << "\n";
  return 0;
}

}  // namespace engram::ctl
