#include "mcp/registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

namespace engram::mcp {

namespace {

/// A tool with its inputSchema compiled once; a schema that does not compile makes every
/// call of the tool an error that says so (the server's own definitions are tested).
std::shared_ptr<const tool> compiled(tool t) {
  auto schema = kg::json_schema::compile(t.definition.value("inputSchema", json::object()));
  if (schema)
    t.input_schema = std::make_shared<const kg::json_schema>(std::move(*schema));
  else
    t.schema_error = "inputSchema of " + t.name() + ": " + schema.error();
  return std::make_shared<const tool>(std::move(t));
}

}  // namespace

void registry::add(tool t) {
  {
    std::unique_lock lock(mutex_);
    auto shared = compiled(std::move(t));
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
      tools_.push_back(compiled(std::move(t)));
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

std::string article(const std::string& t) {
  return (t == "integer" || t == "array" || t == "object") ? "an " + t : "a " + t;
}

std::string number(double x) {
  return x == std::floor(x) ? std::to_string(static_cast<long long>(x)) : std::to_string(x);
}

/// A field as the tools name it: "/tags/1" -> "tags[1]", "/a/b" -> "a.b", "" -> "arguments".
std::string field_name(const std::string& pointer) {
  if (pointer.empty())
    return "arguments";
  std::string out;
  std::size_t from = 1;
  while (from <= pointer.size()) {
    auto to = pointer.find('/', from);
    if (to == std::string::npos)
      to = pointer.size();
    std::string token = pointer.substr(from, to - from);
    for (std::size_t at; (at = token.find("~1")) != std::string::npos;)
      token.replace(at, 2, "/");
    for (std::size_t at; (at = token.find("~0")) != std::string::npos;)
      token.replace(at, 2, "~");
    const bool index =
        !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    out += index ? "[" + token + "]" : (out.empty() ? "" : ".") + token;
    from = to + 1;
  }
  return out;
}

/// Why `keyword` of the schema `node` failed, in the words the tools use.
std::string reason(const json& node, const std::string& keyword, const std::string& fallback) {
  constexpr auto unbounded = std::numeric_limits<std::size_t>::max();
  if (keyword == "type") {
    std::vector<std::string> types;
    if (node["type"].is_string())
      types.push_back(node["type"].get<std::string>());
    else
      for (const auto& x : node["type"])
        types.push_back(x.get<std::string>());
    std::string want;
    for (const auto& x : types)
      want += (want.empty() ? "" : " or ") + article(x);
    return "must be " + want;
  }
  if (keyword == "enum") {
    std::string one_of;
    for (const auto& x : node["enum"])
      one_of += (one_of.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
    return "must be one of " + one_of;
  }
  if (keyword == "minLength" || keyword == "maxLength") {
    const auto lo = node.value("minLength", std::size_t{0});
    const auto hi = node.value("maxLength", unbounded);
    return hi == unbounded ? "must be at least " + std::to_string(lo) + " characters"
                           : "must be " + std::to_string(lo) + ".." + std::to_string(hi) + " characters";
  }
  if (keyword == "minimum" || keyword == "maximum" || keyword == "exclusiveMinimum" || keyword == "exclusiveMaximum") {
    std::string range;
    if (node.contains("minimum"))
      range = number(node["minimum"].get<double>()) + "..";
    else if (node.contains("exclusiveMinimum"))
      range = "more than " + number(node["exclusiveMinimum"].get<double>()) + " and up to ";
    if (node.contains("maximum"))
      range += number(node["maximum"].get<double>());
    else if (node.contains("exclusiveMaximum"))
      range += "below " + number(node["exclusiveMaximum"].get<double>());
    return "must be within " + range;
  }
  if (keyword == "minItems" || keyword == "maxItems")
    return "must hold " + std::to_string(node.value("minItems", std::size_t{0})) + ".." +
           std::to_string(node.value("maxItems", unbounded)) + " items";
  return fallback;
}

}  // namespace

std::optional<std::string> check_arguments(const kg::json_schema& schema, const json& arguments) {
  // An optional argument sent as null is absent (a required one is then missing).
  json v = arguments;
  if (v.is_object())
    for (auto it = v.begin(); it != v.end();)
      it = it->is_null() ? v.erase(it) : std::next(it);
  const auto errors = schema.validate(v);
  if (errors.empty())
    return std::nullopt;
  // A field that is wrong before one that is missing, as a caller fixes them.
  auto e = std::find_if(errors.begin(), errors.end(), [](const auto& x) { return x.keyword != "required"; });
  if (e == errors.end())
    e = errors.begin();
  if (e->keyword == "required") {
    // The validator says "'<name>' is required".
    const auto a = e->message.find('\''), b = e->message.find('\'', a + 1);
    const auto name = b == std::string::npos ? e->message : e->message.substr(a + 1, b - a - 1);
    return (e->instance_path.empty() ? name : field_name(e->instance_path) + "." + name) + ": required";
  }
  const std::string tail = "/additionalProperties/false";
  if (e->schema_path.ends_with(tail))
    return field_name(e->instance_path) + ": unknown argument";
  const auto node_path = e->schema_path.substr(0, e->schema_path.rfind('/'));
  const auto pointer = json::json_pointer(node_path);
  const auto& doc = schema.document();
  if (node_path.find("/$ref") != std::string::npos || !doc.contains(pointer))
    return field_name(e->instance_path) + ": " + e->message;
  return field_name(e->instance_path) + ": " + reason(doc[pointer], e->keyword, e->message);
}

std::optional<std::string> check_arguments(const json& schema, const json& value) {
  auto compiled = kg::json_schema::compile(schema);
  if (!compiled)
    return "inputSchema: " + compiled.error();
  return check_arguments(*compiled, value);
}

}  // namespace engram::mcp
