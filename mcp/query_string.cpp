// The /v1 API's request targets: path segments and query parameters, percent-decoded, and
// tool arguments typed from a query string (mcp/internal/api.hpp). Apart from the API's
// handlers so that its fuzz target (tests/fuzz/fuzz_v1_query.cpp) builds it alone.
#include "mcp/internal/query_string.hpp"

#include <charconv>
#include <cstdlib>

namespace engram::mcp {

namespace {

using query_list = std::vector<std::pair<std::string, std::string>>;

std::string percent_decode(std::string_view s, bool plus_is_space) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; !text.empty() && at <= text.size();) {
    auto comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return out;
}

void split_target(const std::string& target, std::vector<std::string>& segments, query_list& query) {
  const auto q = target.find('?');
  const std::string_view path(target.data(), q == std::string::npos ? target.size() : q);
  for (std::size_t at = 0; at <= path.size();) {
    auto slash = path.find('/', at);
    auto seg = path.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
    if (!seg.empty())
      segments.push_back(percent_decode(seg, false));
    if (slash == std::string_view::npos)
      break;
    at = slash + 1;
  }
  if (q == std::string::npos)
    return;
  const std::string_view qs(target.data() + q + 1, target.size() - q - 1);
  for (std::size_t at = 0; at <= qs.size();) {
    auto amp = qs.find('&', at);
    auto pair = qs.substr(at, amp == std::string_view::npos ? std::string_view::npos : amp - at);
    if (!pair.empty()) {
      auto eq = pair.find('=');
      query.emplace_back(percent_decode(pair.substr(0, eq), true),
                         eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos)
      break;
    at = amp + 1;
  }
}

std::optional<std::string> arguments_from_query(const query_list& query, const json& input_schema, json& arguments) {
  const json properties = input_schema.value("properties", json::object());
  for (const auto& [name, text] : query) {
    if (arguments.contains(name))
      return name + ": given twice";
    const json property = properties.value(name, json::object());
    const auto type =
        property.contains("type") && property["type"].is_string() ? property["type"].get<std::string>() : std::string();
    json value = text;
    if (type == "integer") {
      long long n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec == std::errc() && end == text.data() + text.size() && !text.empty())
        value = n;
    } else if (type == "number") {
      char* end = nullptr;
      const double d = text.empty() ? 0 : std::strtod(text.c_str(), &end);
      if (!text.empty() && end == text.c_str() + text.size())
        value = d;
    } else if (type == "boolean") {
      if (text == "true" || text == "false")
        value = text == "true";
    } else if (type == "array") {
      value = split_commas(text);
    }
    arguments[name] = std::move(value);
  }
  return std::nullopt;
}

}  // namespace engram::mcp
