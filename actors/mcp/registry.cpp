#include "actors/mcp/registry.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace engram::mcp {

void registry::add(tool t) {
  {
    std::unique_lock lock(mutex_);
    auto shared = std::make_shared<const tool>(std::move(t));
    auto it = std::find_if(tools_.begin(), tools_.end(),
                           [&](const auto& x) { return x->name() == shared->name() && x->owner == shared->owner; });
    if (it != tools_.end())
      *it = std::move(shared);
    else
      tools_.push_back(std::move(shared));
  }
  announce();
}

void registry::replace_owned(const std::string& owner_prefix, std::vector<tool> tools) {
  {
    std::unique_lock lock(mutex_);
    std::erase_if(tools_, [&](const auto& x) { return !x->owner.empty() && x->owner.starts_with(owner_prefix); });
    for (auto& t : tools)
      tools_.push_back(std::make_shared<const tool>(std::move(t)));
  }
  announce();
}

bool registry::remove(const std::string& name) {
  {
    std::unique_lock lock(mutex_);
    auto it = std::find_if(tools_.begin(), tools_.end(), [&](const auto& x) { return x->name() == name; });
    if (it == tools_.end())
      return false;
    tools_.erase(it);
  }
  announce();
  return true;
}

std::shared_ptr<const tool> registry::find(const std::string& name, const grant& g) const {
  std::shared_lock lock(mutex_);
  for (const auto& t : tools_)
    if (t->name() == name && (!t->visible_to || t->visible_to(g)))
      return t;
  return nullptr;
}

json registry::list(const grant& g) const {
  std::shared_lock lock(mutex_);
  json out = json::array();
  for (const auto& t : tools_)
    if (!t->visible_to || t->visible_to(g))
      out.push_back(t->definition);
  return out;
}

std::vector<std::string> registry::names() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  for (const auto& t : tools_)
    if (std::find(out.begin(), out.end(), t->name()) == out.end())
      out.push_back(t->name());
  return out;
}

void registry::on_list_changed(std::function<void(const json&)> fn) {
  std::unique_lock lock(mutex_);
  listeners_.push_back(std::move(fn));
}

void registry::announce() {
  std::vector<std::function<void(const json&)>> listeners;
  {
    std::shared_lock lock(mutex_);
    listeners = listeners_;
  }
  const json note{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}};
  for (const auto& fn : listeners)
    fn(note);
}

namespace {

std::size_t utf8_length(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

bool integral(const json& v) {
  return v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                   v.get<double>() == std::floor(v.get<double>()));
}

bool has_type(const json& v, const std::string& t) {
  if (t == "string")
    return v.is_string();
  if (t == "integer")
    return integral(v);
  if (t == "number")
    return v.is_number();
  if (t == "boolean")
    return v.is_boolean();
  if (t == "array")
    return v.is_array();
  if (t == "object")
    return v.is_object();
  if (t == "null")
    return v.is_null();
  return false;
}

std::string article(const std::string& t) {
  return (t == "integer" || t == "array" || t == "object") ? "an " + t : "a " + t;
}

std::string number(double x) {
  return x == std::floor(x) ? std::to_string(static_cast<long long>(x)) : std::to_string(x);
}

}  // namespace

std::optional<std::string> check_arguments(const json& schema, const json& v, const std::string& path) {
  const std::string at = path.empty() ? "arguments" : path;
  auto fail = [&](const std::string& reason) { return std::optional<std::string>(at + ": " + reason); };
  if (schema.contains("type")) {
    const auto& t = schema["type"];
    std::vector<std::string> types;
    if (t.is_string())
      types.push_back(t.get<std::string>());
    else
      for (const auto& x : t)
        types.push_back(x.get<std::string>());
    if (std::none_of(types.begin(), types.end(), [&](const std::string& x) { return has_type(v, x); })) {
      std::string want;
      for (const auto& x : types)
        want += (want.empty() ? "" : " or ") + article(x);
      return fail("must be " + want);
    }
  }
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end()) {
    std::string one_of;
    for (const auto& x : schema["enum"])
      one_of += (one_of.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
    return fail("must be one of " + one_of);
  }
  if (v.is_string()) {
    const auto n = utf8_length(v.get<std::string>());
    const auto lo = schema.value("minLength", std::size_t{0});
    const auto hi = schema.value("maxLength", std::numeric_limits<std::size_t>::max());
    if (n < lo || n > hi)
      return fail(hi == std::numeric_limits<std::size_t>::max() ? "must be at least " + std::to_string(lo) + " characters"
                                                                  : "must be " + std::to_string(lo) + ".." +
                                                                        std::to_string(hi) + " characters");
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    const bool low = (schema.contains("minimum") && x < schema["minimum"].get<double>()) ||
                     (schema.contains("exclusiveMinimum") && x <= schema["exclusiveMinimum"].get<double>());
    const bool high = (schema.contains("maximum") && x > schema["maximum"].get<double>()) ||
                      (schema.contains("exclusiveMaximum") && x >= schema["exclusiveMaximum"].get<double>());
    if (low || high) {
      std::string range;
      if (schema.contains("minimum"))
        range = number(schema["minimum"].get<double>()) + "..";
      else if (schema.contains("exclusiveMinimum"))
        range = "more than " + number(schema["exclusiveMinimum"].get<double>()) + " and up to ";
      if (schema.contains("maximum"))
        range += number(schema["maximum"].get<double>());
      else if (schema.contains("exclusiveMaximum"))
        range += "below " + number(schema["exclusiveMaximum"].get<double>());
      return fail("must be within " + range);
    }
  }
  if (v.is_array()) {
    if (v.size() < schema.value("minItems", std::size_t{0}) ||
        v.size() > schema.value("maxItems", std::numeric_limits<std::size_t>::max()))
      return fail("must hold " + std::to_string(schema.value("minItems", std::size_t{0})) + ".." +
                  std::to_string(schema.value("maxItems", std::numeric_limits<std::size_t>::max())) + " items");
    if (schema.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i)
        if (auto e = check_arguments(schema["items"], v[i], at + "[" + std::to_string(i) + "]"))
          return e;
  }
  if (v.is_object()) {
    const json no_properties = json::object();
    const auto& props = schema.contains("properties") ? schema["properties"] : no_properties;
    for (const auto& [k, x] : v.items()) {
      const auto field = path.empty() ? k : path + "." + k;
      if (props.contains(k)) {
        if (x.is_null() && path.empty())
          continue;  // an optional argument sent as null is absent
        if (auto e = check_arguments(props[k], x, field))
          return e;
      } else if (schema.value("additionalProperties", true) == false) {
        return field + ": unknown argument";
      }
    }
    if (schema.contains("required"))
      for (const auto& r : schema["required"]) {
        const auto k = r.get<std::string>();
        if (!v.contains(k) || v[k].is_null())
          return (path.empty() ? k : path + "." + k) + ": required";
      }
  }
  return std::nullopt;
}

}  // namespace engram::mcp
