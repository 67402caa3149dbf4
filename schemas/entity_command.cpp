#include "schemas/entity_command.hpp"

#include "schemas/inbound_message.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>

namespace engram::schemas {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::array<std::string_view, 7> op_names = {"add_entities",        "relate",           "add_observations",
                                                      "delete_entities",     "delete_observations",
                                                      "delete_relations",    "merge_entities"};

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

/// Reads one JSON object's fields under a path ("/relations/3"); the first problem wins.
class reader {
public:
  reader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {}

  void text(const char* k, std::string& out, std::size_t max, bool required = true) {
    const auto* at = field(k, required);
    if (!at)
      return;
    const auto& v = *at;
    if (!v.is_string())
      return fail(k, "must be a string");
    out = v.get<std::string>();
    check(k, out, max, required);
  }
  void texts(const char* k, std::vector<std::string>& out, std::size_t max_each, std::size_t max_count,
             bool required) {
    const auto* at = field(k, required);
    if (!at)
      return;
    const auto& v = *at;
    if (!v.is_array())
      return fail(k, "must be an array of strings");
    if (v.size() > max_count)
      return fail(k, "at most " + std::to_string(max_count) + " items");
    out.clear();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        return fail(std::string(k) + "/" + std::to_string(i), "must be a string");
      out.push_back(v[i].get<std::string>());
      check((std::string(k) + "/" + std::to_string(i)).c_str(), out.back(), max_each, true);
      if (error_)
        return;
    }
  }
  void attributes(attribute_map& out) {
    if (error_ || !j_.contains("attributes"))
      return;
    const auto& v = j_["attributes"];
    if (!v.is_object())
      return fail("attributes", "must be an object of strings");
    if (v.size() > entity_limits::attributes)
      return fail("attributes", "at most " + std::to_string(entity_limits::attributes) + " keys");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const auto at = "attributes/" + it.key();
      if (!it.value().is_string())
        return fail(at, "must be a string");
      check("attributes", it.key(), entity_limits::attribute_key, true);
      check(at.c_str(), it.value().get_ref<const std::string&>(), entity_limits::attribute_value, false);
      if (error_)
        return;
      out[it.key()] = it.value().get<std::string>();
    }
  }
  void weight(double& out) {
    if (error_ || !j_.contains("weight"))
      return;
    const auto& v = j_["weight"];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
      return fail("weight", "must be a positive number");
    out = v.get<double>();
  }
  void fail(const std::string& k, const std::string& reason) {
    if (!error_)
      error_ = path_ + "/" + k + ": " + reason;
  }
  [[nodiscard]] const std::optional<std::string>& error() const { return error_; }

private:
  /// The value of `k`, or null (absent: an error when required; or an earlier error).
  const nlohmann::json* field(const char* k, bool required) {
    if (error_)
      return nullptr;
    if (!j_.contains(k)) {
      if (required)
        fail(k, "required");
      return nullptr;
    }
    return &j_[k];
  }
  void check(const char* k, const std::string& s, std::size_t max, bool non_empty) {
    if (non_empty && s.find_first_not_of(" \t\r\n") == std::string::npos)
      fail(k, "must not be empty");
    else if (s.size() > max)
      fail(k, "longer than " + std::to_string(max) + " bytes");
  }
  const nlohmann::json& j_;
  std::string path_;
  std::optional<std::string> error_;
};

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
    reader r(a[i], std::string("/") + k + "/" + std::to_string(i));
    T x;
    read(r, x);
    if (r.error())
      return r.error();
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

std::string_view to_string(entity_op op) {
  return op_names[static_cast<std::size_t>(op)];
}

std::optional<entity_op> parse_entity_op(std::string_view s) {
  for (std::size_t i = 0; i < op_names.size(); ++i)
    if (op_names[i] == s)
      return static_cast<entity_op>(i);
  return std::nullopt;
}

std::string relation_label(std::string_view given) {
  return snake(given);
}

std::string type_key(std::string_view given) {
  return snake(given);
}

std::string to_json(const entity_command& c) {
  ojson j;
  j["eventId"] = c.event_id;
  j["organizationId"] = c.organization_id;
  j["issuedAt"] = c.issued_at;
  j["issuedBy"] = c.issued_by;
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
  reader top(j, "");
  top.text("eventId", c.event_id, 256);
  top.text("organizationId", c.organization_id, 256);
  top.text("issuedAt", c.issued_at, 64);
  top.text("issuedBy", c.issued_by, 256, false);
  top.text("op", op, 64);
  if (top.error())
    return top.error();
  auto ms = parse_rfc3339(c.issued_at);
  if (!ms)
    return std::string("/issuedAt: not an RFC 3339 time");
  c.issued_at_ms = *ms;
  auto parsed = parse_entity_op(op);
  if (!parsed)
    return "/op: unknown operation '" + op + "'";
  c.op = *parsed;
  std::optional<std::string> bad;
  if (has_entities(c.op)) {
    const auto on = j.value("onExisting", std::string());
    if (on != "merge" && on != "skip")
      return std::string("/onExisting: must be merge or skip");
    c.merge_existing = on == "merge";
    bad = read_items(j, "entities", c.entities, [](reader& r, entity_spec& e) {
      r.text("name", e.name, entity_limits::name);
      r.text("entityType", e.entity_type, entity_limits::entity_type);
      r.attributes(e.attributes);
      r.texts("observations", e.observations, entity_limits::observation, entity_limits::observations, false);
    });
  } else if (has_relations(c.op)) {
    bad = read_items(j, "relations", c.relations, [](reader& r, relation_spec& x) {
      r.text("from", x.from, entity_limits::name);
      r.text("to", x.to, entity_limits::name);
      r.text("relationType", x.relation_type, entity_limits::label);
      if (!r.error() && relation_label(x.relation_type).empty())
        r.fail("relationType", "has no letters or digits");
      r.weight(x.weight);
      r.attributes(x.attributes);
    });
  } else if (has_observations(c.op)) {
    bad = read_items(j, "observations", c.observations, [](reader& r, observation_spec& o) {
      r.text("entityName", o.entity_name, entity_limits::name);
      r.texts("contents", o.contents, entity_limits::observation, entity_limits::observations, true);
    });
  } else if (c.op == entity_op::delete_entities) {
    top.texts("names", c.names, entity_limits::name, entity_limits::items, true);
    bad = top.error();
  } else {
    top.text("nameA", c.name_a, entity_limits::name);
    top.text("nameB", c.name_b, entity_limits::name);
    bad = top.error();
  }
  if (bad)
    return bad;
  out = std::move(c);
  return std::nullopt;
}

}  // namespace engram::schemas
