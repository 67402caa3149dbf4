#include "schemas/internal/json_fields.hpp"

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

nlohmann::json vector_json(const vector8& v) {
  // A float is exactly a double: the number reads back to the same float.
  return {{"scale", static_cast<double>(v.scale)}, {"q", to_base64(v.q)}};
}

}  // namespace engram::schemas::detail
