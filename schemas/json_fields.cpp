#include "schemas/internal/json_fields.hpp"

#include "schemas/inbound_message.hpp"

namespace engram::schemas::detail {

error fields::vector(const char* k, vector8& out) const {
  if (!j_.contains(k))
    return std::nullopt;
  const auto& v = j_[k];
  if (!v.is_object() || !v.contains("scale") || !v["scale"].is_number() || !v.contains("q") || !v["q"].is_string())
    return why(k, "must be {\"scale\": number, \"q\": base64 string}");
  auto q = from_base64(v["q"].get_ref<const std::string&>());
  if (!q)
    return why(std::string(k) + "/q", "not base64");
  const double scale = v["scale"].get<double>();
  if (!(scale > 0) || q->empty())
    return why(k, "must have a positive scale and at least one component");
  out.scale = static_cast<float>(scale);
  out.q = std::move(*q);
  return std::nullopt;
}

error fields::texts(const char* k, std::vector<std::string>& out, std::size_t max_each, std::size_t max_count,
                    bool required) const {
  if (!j_.contains(k))
    return required ? error(why(k, "required")) : std::nullopt;
  const auto& v = j_[k];
  if (!v.is_array())
    return why(k, "must be an array of strings");
  if (v.size() > max_count)
    return why(k, "at most " + std::to_string(max_count) + " items");
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto item = std::string(k) + "/" + std::to_string(i);
    if (!v[i].is_string())
      return why(item, "must be a string");
    const auto& s = v[i].get_ref<const std::string&>();
    if (s.empty())
      return why(item, "must not be empty");
    if (s.size() > max_each)
      return why(item, "at most " + std::to_string(max_each) + " bytes");
    out.push_back(s);
  }
  return std::nullopt;
}

void put_envelope(nlohmann::ordered_json& j, const command_envelope& c) {
  j["eventId"] = c.event_id;
  j["organizationId"] = c.organization_id;
  j["issuedAt"] = c.issued_at;
  j["issuedBy"] = c.issued_by;
}

error read_envelope(const fields& f, command_envelope& out) {
  if (auto e = f.text("eventId", out.event_id, 256, true))
    return e;
  if (auto e = f.text("organizationId", out.organization_id, 256, true))
    return e;
  if (auto e = f.text("issuedAt", out.issued_at, 64, true))
    return e;
  if (auto e = f.text("issuedBy", out.issued_by, 256, false))
    return e;
  auto ms = parse_rfc3339(out.issued_at);
  if (!ms)
    return f.why("issuedAt", "not an RFC 3339 time");
  out.issued_at_ms = *ms;
  return std::nullopt;
}

nlohmann::json vector_json(const vector8& v) {
  // A float is exactly a double: the number reads back to the same float.
  return {{"scale", static_cast<double>(v.scale)}, {"q", to_base64(v.q)}};
}

}  // namespace engram::schemas::detail
