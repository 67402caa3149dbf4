#pragma once
// Field readers for the schemas' JSON decoders: each names the field's JSON pointer and
// the reason when it refuses ("/extraction/entries/2/confidence: must be a number").

#include "schemas/command_envelope.hpp"
#include "schemas/vector.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace engram::schemas::detail {

using error = std::optional<std::string>;

/// One JSON object being read, and its pointer.
class fields {
public:
  fields(const nlohmann::json& j, std::string pointer) : j_(j), at_(std::move(pointer)) {}

  [[nodiscard]] bool is_object() const { return j_.is_object(); }
  [[nodiscard]] bool has(const char* k) const { return j_.contains(k); }
  [[nodiscard]] const nlohmann::json& operator[](const char* k) const { return j_[k]; }
  [[nodiscard]] std::string at(const std::string& k) const { return at_ + "/" + k; }
  [[nodiscard]] std::string why(const std::string& k, const std::string& reason) const { return at(k) + ": " + reason; }

  error text(const char* k, std::string& out, bool required = false) const {
    if (!j_.contains(k))
      return required ? error(why(k, "required")) : std::nullopt;
    if (!j_[k].is_string())
      return why(k, "must be a string");
    out = j_[k].get<std::string>();
    return std::nullopt;
  }
  error texts(const char* k, std::vector<std::string>& out) const {
    if (!j_.contains(k))
      return std::nullopt;
    if (!j_[k].is_array())
      return why(k, "must be an array of strings");
    out.clear();
    for (const auto& t : j_[k]) {
      if (!t.is_string())
        return why(k, "must be an array of strings");
      out.push_back(t.get<std::string>());
    }
    return std::nullopt;
  }
  error number(const char* k, double& out, bool required = false) const {
    if (!j_.contains(k))
      return required ? error(why(k, "required")) : std::nullopt;
    if (!j_[k].is_number())
      return why(k, "must be a number");
    out = j_[k].get<double>();
    return std::nullopt;
  }
  /// A string of at most `max_bytes` bytes; `required`: present and not empty.
  error text(const char* k, std::string& out, std::size_t max_bytes, bool required) const {
    if (!j_.contains(k))
      return required ? error(why(k, "required")) : std::nullopt;
    if (!j_[k].is_string())
      return why(k, "must be a string");
    const auto& s = j_[k].get_ref<const std::string&>();
    if (required && s.empty())
      return why(k, "must not be empty");
    if (s.size() > max_bytes)
      return why(k, "at most " + std::to_string(max_bytes) + " bytes");
    out = s;
    return std::nullopt;
  }
  /// An array of at most `max_count` non-empty strings of at most `max_each` bytes (items
  /// named "k/i").
  error texts(const char* k, std::vector<std::string>& out, std::size_t max_each, std::size_t max_count,
              bool required) const;
  error boolean(const char* k, bool& out) const {
    if (!j_.contains(k))
      return std::nullopt;
    if (!j_[k].is_boolean())
      return why(k, "must be true or false");
    out = j_[k].get<bool>();
    return std::nullopt;
  }
  error count(const char* k, std::size_t& out) const {
    if (!j_.contains(k))
      return std::nullopt;
    if (!j_[k].is_number_unsigned())
      return why(k, "must be a non-negative integer");
    out = j_[k].get<std::size_t>();
    return std::nullopt;
  }
  /// {"scale": number, "q": base64}, absent: left empty.
  error vector(const char* k, vector8& out) const;

private:
  const nlohmann::json& j_;
  std::string at_;
};

/// {"scale": …, "q": "<base64>"}.
[[nodiscard]] nlohmann::json vector_json(const vector8& v);

/// A command's envelope as its first keys: eventId, organizationId, issuedAt, issuedBy.
void put_envelope(nlohmann::ordered_json& j, const command_envelope& c);
/// Reads them (eventId and organizationId at most 256 bytes, issuedAt an RFC 3339 time,
/// issuedBy optional), the first problem as "/field: reason".
[[nodiscard]] error read_envelope(const fields& f, command_envelope& out);

}  // namespace engram::schemas::detail
