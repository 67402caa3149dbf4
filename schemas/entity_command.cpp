#include "schemas/entity_command.hpp"

#include "schemas/inbound_message.hpp"
#include "schemas/internal/json_fields.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>

namespace engram::schemas {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::array<std::string_view, 7> op_names = {
    "add_entities",        "relate",           "add_observations", "delete_entities",
    "delete_observations", "delete_relations", "merge_entities"};

bool has_entities(entity_op op) { return op == entity_op::add_entities; }
bool has_relations(entity_op op) { return op == entity_op::relate || op == entity_op::delete_relations; }
bool has_observations(entity_op op) {
  return op == entity_op::add_observations || op == entity_op::delete_observations;
}

ojson attributes_json(const attribute_map& m) {
  ojson j = ojson::object();
  for (const auto& [k, v] : m)
    j[k] = v;
  return j;
}

using detail::error;
using detail::fields;

/// A name or label: required, at most `max` bytes, with something besides white space.
error name(const fields& f, const char* k, std::string& out, std::size_t max) {
  if (auto e = f.text(k, out, max, true))
    return e;
  if (out.find_first_not_of(" \t\r\n") == std::string::npos)
    return f.why(k, "must not be empty");
  return std::nullopt;
}

/// Names or observations: as fields::texts reads them, none only white space.
error names(const fields& f, const char* k, std::vector<std::string>& out, std::size_t max_each, std::size_t max_count,
            bool required) {
  if (auto e = f.texts(k, out, max_each, max_count, required))
    return e;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].find_first_not_of(" \t\r\n") == std::string::npos)
      return f.why(std::string(k) + "/" + std::to_string(i), "must not be empty");
  return std::nullopt;
}

/// "attributes": an object of at most entity_limits::attributes strings.
error read_attributes(const fields& f, attribute_map& out) {
  if (!f.has("attributes"))
    return std::nullopt;
  const auto& v = f["attributes"];
  if (!v.is_object())
    return f.why("attributes", "must be an object of strings");
  if (v.size() > entity_limits::attributes)
    return f.why("attributes", "at most " + std::to_string(entity_limits::attributes) + " keys");
  for (auto it = v.begin(); it != v.end(); ++it) {
    const auto at = "attributes/" + it.key();
    if (!it.value().is_string())
      return f.why(at, "must be a string");
    if (it.key().find_first_not_of(" \t\r\n") == std::string::npos)
      return f.why("attributes", "must not be empty");
    if (it.key().size() > entity_limits::attribute_key)
      return f.why("attributes", "at most " + std::to_string(entity_limits::attribute_key) + " bytes");
    if (it.value().get_ref<const std::string&>().size() > entity_limits::attribute_value)
      return f.why(at, "at most " + std::to_string(entity_limits::attribute_value) + " bytes");
    out[it.key()] = it.value().get<std::string>();
  }
  return std::nullopt;
}

/// "weight": a positive number, absent: left as it is.
error read_weight(const fields& f, double& out) {
  if (!f.has("weight"))
    return std::nullopt;
  const auto& v = f["weight"];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
    return f.why("weight", "must be a positive number");
  out = v.get<double>();
  return std::nullopt;
}

/// The items of array `k` (1..entity_limits::items objects), each read by `read`.
template <class T, class F>
std::optional<std::string> read_items(const nlohmann::json& j, const char* k, std::vector<T>& out, F read) {
  if (!j.contains(k) || !j[k].is_array())
    return std::string("/") + k + ": required array";
  const auto& a = j[k];
  if (a.size() > entity_limits::items)
    return std::string("/") + k + ": at most " + std::to_string(entity_limits::items) + " items";
  out.clear();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_object())
      return std::string("/") + k + "/" + std::to_string(i) + ": must be an object";
    T x;
    if (auto e = read(fields(a[i], std::string("/") + k + "/" + std::to_string(i)), x))
      return e;
    out.push_back(std::move(x));
  }
  return std::nullopt;
}

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

/// Trimmed lower snake case: runs of other characters become one '_', and a capital that
/// starts a lower-case word after a lower-case letter starts a new word ("worksAt" ->
/// "works_at", "SaaS company" -> "saas_company").
std::string snake(std::string_view given) {
  std::string out;
  bool gap = false;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const char c = given[i];
    const bool word = is_upper(c) || is_lower(c) || (c >= '0' && c <= '9') || static_cast<unsigned char>(c) >= 0x80;
    if (!word) {
      gap = !out.empty();
      continue;
    }
    const bool camel = is_upper(c) && i > 0 && is_lower(given[i - 1]) && i + 1 < given.size() && is_lower(given[i + 1]);
    if (gap || (camel && !out.empty()))
      out += '_';
    out += is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
    gap = false;
  }
  return out;
}

}  // namespace

std::string_view to_string(entity_op op) { return op_names[static_cast<std::size_t>(op)]; }

std::optional<entity_op> parse_entity_op(std::string_view s) {
  for (std::size_t i = 0; i < op_names.size(); ++i)
    if (op_names[i] == s)
      return static_cast<entity_op>(i);
  return std::nullopt;
}

std::string relation_label(std::string_view given) { return snake(given); }

std::string type_key(std::string_view given) { return snake(given); }

std::string to_json(const entity_command& c) {
  ojson j;
  detail::put_envelope(j, c);
  j["op"] = to_string(c.op);
  if (has_entities(c.op)) {
    j["onExisting"] = c.merge_existing ? "merge" : "skip";
    j["entities"] = ojson::array();
    for (const auto& e : c.entities)
      j["entities"].push_back({{"name", e.name},
                               {"entityType", e.entity_type},
                               {"attributes", attributes_json(e.attributes)},
                               {"observations", e.observations}});
  }
  if (has_relations(c.op)) {
    j["relations"] = ojson::array();
    for (const auto& r : c.relations) {
      ojson x{{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}};
      if (c.op == entity_op::relate) {
        x["weight"] = r.weight;
        x["attributes"] = attributes_json(r.attributes);
      }
      j["relations"].push_back(std::move(x));
    }
  }
  if (has_observations(c.op)) {
    j["observations"] = ojson::array();
    for (const auto& o : c.observations)
      j["observations"].push_back({{"entityName", o.entity_name}, {"contents", o.contents}});
  }
  if (c.op == entity_op::delete_entities)
    j["names"] = c.names;
  if (c.op == entity_op::merge_entities) {
    j["nameA"] = c.name_a;
    j["nameB"] = c.name_b;
  }
  return j.dump();
}

std::optional<std::string> decode(std::string_view bytes, entity_command& out) {
  auto j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("not a JSON object");
  entity_command c;
  std::string op;
  const fields top(j, "");
  if (auto e = detail::read_envelope(top, c))
    return e;
  if (auto e = top.text("op", op, 64, true))
    return e;
  auto parsed = parse_entity_op(op);
  if (!parsed)
    return "/op: unknown operation '" + op + "'";
  c.op = *parsed;
  std::optional<std::string> bad;
  if (has_entities(c.op)) {
    std::string on;
    if (auto e = top.text("onExisting", on, 16, true))
      return e;
    if (on != "merge" && on != "skip")
      return std::string("/onExisting: must be merge or skip");
    c.merge_existing = on == "merge";
    bad = read_items(j, "entities", c.entities, [](const fields& r, entity_spec& e) -> error {
      if (auto x = name(r, "name", e.name, entity_limits::name))
        return x;
      if (auto x = name(r, "entityType", e.entity_type, entity_limits::entity_type))
        return x;
      if (auto x = read_attributes(r, e.attributes))
        return x;
      return names(r, "observations", e.observations, entity_limits::observation, entity_limits::observations, false);
    });
  } else if (has_relations(c.op)) {
    bad = read_items(j, "relations", c.relations, [](const fields& r, relation_spec& x) -> error {
      if (auto e = name(r, "from", x.from, entity_limits::name))
        return e;
      if (auto e = name(r, "to", x.to, entity_limits::name))
        return e;
      if (auto e = name(r, "relationType", x.relation_type, entity_limits::label))
        return e;
      if (relation_label(x.relation_type).empty())
        return r.why("relationType", "has no letters or digits");
      if (auto e = read_weight(r, x.weight))
        return e;
      return read_attributes(r, x.attributes);
    });
  } else if (has_observations(c.op)) {
    bad = read_items(j, "observations", c.observations, [](const fields& r, observation_spec& o) -> error {
      if (auto e = name(r, "entityName", o.entity_name, entity_limits::name))
        return e;
      return names(r, "contents", o.contents, entity_limits::observation, entity_limits::observations, true);
    });
  } else if (c.op == entity_op::delete_entities) {
    bad = names(top, "names", c.names, entity_limits::name, entity_limits::items, true);
  } else {
    bad = name(top, "nameA", c.name_a, entity_limits::name);
    if (!bad)
      bad = name(top, "nameB", c.name_b, entity_limits::name);
  }
  if (bad)
    return bad;
  out = std::move(c);
  return std::nullopt;
}

}  // namespace engram::schemas
