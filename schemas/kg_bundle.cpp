#include "schemas/kg_bundle.hpp"

#include "schemas/internal/json_fields.hpp"

#include "schemas/inbound_message.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace engram::schemas {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using error = std::optional<std::string>;

bool type_name_ok(std::string_view s) {
  if (s.empty() || s.size() > kg_limits::type_name || s[0] < 'a' || s[0] > 'z')
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

/// A string field of `j` (at `at`) as every codec reads one: required and not blank unless
/// `required` is false, at most `max` bytes.
error text(const json& j, const std::string& at, const char* k, std::string& out, std::size_t max,
           bool required = true) {
  return detail::fields(j, at).text(k, out, max, required);
}

error count(const json& j, const char* k, std::uint32_t& out, std::uint32_t max) {
  if (!j.contains(k) || !j[k].is_number_unsigned() || j[k].get<std::uint64_t>() > max)
    return std::string("/") + k + ": must be an integer 0.." + std::to_string(max);
  out = j[k].get<std::uint32_t>();
  return std::nullopt;
}

error strings(const json& j, const std::string& at, const char* k, std::vector<std::string>& out) {
  if (!j.contains(k) || !j[k].is_array())
    return at + "/" + k + ": must be an array of strings";
  out.clear();
  for (const auto& x : j[k]) {
    if (!x.is_string())
      return at + "/" + k + ": must be an array of strings";
    out.push_back(x.get<std::string>());
  }
  return std::nullopt;
}

error read_type(const json& j, const std::string& at, kg_type_spec& t) {
  if (!j.is_object())
    return at + ": must be an object";
  if (auto e = text(j, at, "name", t.name, kg_limits::type_name))
    return e;
  if (!type_name_ok(t.name))
    return at + "/name: '" + t.name + "' must be lowercase letters, digits and '_'";
  if (auto e = text(j, at, "idField", t.id_field, 256))
    return e;
  if (auto e = text(j, at, "description", t.description, 8192, false))
    return e;
  if (auto e = strings(j, at, "expose", t.expose))
    return e;
  for (const auto& x : t.expose)
    if (x != "list" && x != "get" && x != "list_ids")
      return at + "/expose: '" + x + "' is not list, get or list_ids";
  if (auto e = strings(j, at, "indexed", t.indexed))
    return e;
  if (!j.contains("refs") || !j["refs"].is_object())
    return at + "/refs: must be an object of type names";
  for (auto it = j["refs"].begin(); it != j["refs"].end(); ++it) {
    if (!it.value().is_string() || !type_name_ok(it.value().get<std::string>()))
      return at + "/refs/" + it.key() + ": must name a type";
    t.refs[it.key()] = it.value().get<std::string>();
  }
  if (!j.contains("schema") || !j["schema"].is_object())
    return at + "/schema: must be a JSON Schema object";
  t.schema = j["schema"].dump();
  return std::nullopt;
}

}  // namespace

std::string_view to_string(kg_op op) { return op == kg_op::apply ? "apply" : "delete"; }

bool valid_bundle_name(std::string_view s) {
  return !s.empty() && s.size() <= kg_limits::bundle_name && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::vector<std::string> kg_tool_names(const kg_type_spec& t) {
  std::vector<std::string> out;
  auto has = [&](const char* x) { return std::find(t.expose.begin(), t.expose.end(), x) != t.expose.end(); };
  if (has("list"))
    out.push_back("list_" + t.name);
  if (has("get"))
    out.push_back("get_" + t.name);
  if (has("list_ids"))
    out.push_back("list_" + t.name + "_ids");
  return out;
}

std::string kg_index_value(std::string_view v) {
  auto j = json::parse(v, nullptr, false);
  return j.is_string() ? j.get<std::string>() : j.dump();
}

std::string to_json(const kg_command& c) {
  ojson j;
  detail::put_envelope(j, c);
  j["op"] = to_string(c.op);
  j["bundle"] = c.bundle;
  if (c.op == kg_op::apply) {
    j["applyId"] = c.apply_id;
    j["chunk"] = c.chunk;
    j["chunks"] = c.chunks;
    if (c.chunk == 0) {
      j["version"] = c.version;
      j["description"] = c.description;
      j["types"] = ojson::array();
      for (const auto& t : c.types) {
        ojson refs = ojson::object();
        for (const auto& [f, to] : t.refs)
          refs[f] = to;
        j["types"].push_back({{"name", t.name},
                              {"idField", t.id_field},
                              {"description", t.description},
                              {"expose", t.expose},
                              {"indexed", t.indexed},
                              {"refs", std::move(refs)},
                              {"schema", ojson::parse(t.schema)}});
      }
    }
    j["entities"] = ojson::array();
    for (const auto& e : c.items)
      j["entities"].push_back({{"type", e.type}, {"id", e.id}, {"data", ojson::parse(e.data)}});
  }
  return j.dump();
}

std::optional<std::string> decode(std::string_view bytes, kg_command& out) {
  auto j = json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("not a JSON object");
  kg_command c;
  std::string op;
  const detail::fields top(j, "");
  if (auto e = detail::read_envelope(top, c))
    return e;
  if (auto e = top.text("op", op, 16, true))
    return e;
  if (auto e = top.text("bundle", c.bundle, kg_limits::bundle_name, true))
    return e;
  if (op != "apply" && op != "delete")
    return "/op: unknown operation '" + op + "'";
  c.op = op == "apply" ? kg_op::apply : kg_op::remove;
  if (!valid_bundle_name(c.bundle))
    return "/bundle: '" + c.bundle + "' must be lowercase letters, digits and '-'";
  if (c.op == kg_op::apply) {
    if (auto e = text(j, "", "applyId", c.apply_id, 128))
      return e;
    if (auto e = count(j, "chunks", c.chunks, kg_limits::chunks))
      return e;
    if (auto e = count(j, "chunk", c.chunk, kg_limits::chunks))
      return e;
    if (c.chunks == 0 || c.chunk >= c.chunks)
      return std::string("/chunk: must be below chunks (at least 1)");
    if (c.chunk == 0) {
      if (auto e = text(j, "", "version", c.version, 64))
        return e;
      if (auto e = text(j, "", "description", c.description, 8192, false))
        return e;
      if (!j.contains("types") || !j["types"].is_array() || j["types"].empty() || j["types"].size() > kg_limits::types)
        return "/types: must hold 1.." + std::to_string(kg_limits::types) + " types";
      for (std::size_t i = 0; i < j["types"].size(); ++i) {
        kg_type_spec t;
        if (auto e = read_type(j["types"][i], "/types/" + std::to_string(i), t))
          return e;
        c.types.push_back(std::move(t));
      }
    }
    if (!j.contains("entities") || !j["entities"].is_array())
      return std::string("/entities: required array");
    for (std::size_t i = 0; i < j["entities"].size(); ++i) {
      const auto& x = j["entities"][i];
      const auto at = "/entities/" + std::to_string(i);
      if (!x.is_object())
        return at + ": must be an object";
      kg_item item;
      if (auto e = text(x, at, "type", item.type, kg_limits::type_name))
        return e;
      if (auto e = text(x, at, "id", item.id, kg_limits::id))
        return e;
      if (item.id.empty() || item.id.find('\0') != std::string::npos)
        return at + "/id: must be a non-empty string without NUL";
      if (!x.contains("data") || !x["data"].is_object())
        return at + "/data: must be an object";
      item.data = x["data"].dump();
      c.items.push_back(std::move(item));
    }
  }
  out = std::move(c);
  return std::nullopt;
}

}  // namespace engram::schemas
