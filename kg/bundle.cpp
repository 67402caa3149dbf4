#include "kg/bundle.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

namespace engram::kg {

namespace {

const std::vector<std::string> type_annotations{"x-id-field", "x-tool-expose", "x-tool-description"};
const std::vector<std::string> property_annotations{"x-index", "x-ref", "x-ref-field", "x-derived"};

/// YAML to JSON: plain scalars typed as YAML 1.2's core schema reads them; quoted ones stay strings.
json to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& x : n)
        a.push_back(to_json(x));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n)
        o[kv.first.as<std::string>()] = to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Scalar: break;
  }
  const auto s = n.Scalar();
  if (n.Tag() == "!")
    return s;  // quoted
  static const std::regex integer("^[-+]?[0-9]+$"), real("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$");
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty())
    return nullptr;
  try {
    if (std::regex_match(s, integer))
      return std::stoll(s);
    if (std::regex_match(s, real))
      return std::stod(s);
  } catch (const std::exception&) {
  }
  return s;
}

std::string list(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string id_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

class loader {
public:
  explicit loader(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::variant<bundle, std::vector<bundle_error>> run() {
    manifest();
    // Every problem at once: instances and references are checked even when some are wrong.
    if (errors_.empty() || !b_.types.empty()) {
      check_types();
      check_references();
    }
    if (!errors_.empty())
      return errors_;
    return std::move(b_);
  }

private:
  void fail(std::string file, long entity, std::string pointer, std::string reason) {
    errors_.push_back({std::move(file), entity, std::move(pointer), std::move(reason)});
  }

  /// A problem of entity `i` of type `t`: named by its file, its place in it and its id.
  void fail_entity(const entity_type& t, std::size_t i, std::string pointer, std::string reason) {
    const auto& [file, index] = origin_[&t][i];
    const auto& e = t.entities[i];
    std::string id;
    if (!t.id_field.empty() && e.is_object() && e.contains(t.id_field))
      id = id_of(e[t.id_field]);
    errors_.push_back({file, index, std::move(pointer), std::move(reason), std::move(id)});
  }

  std::optional<json> read(const std::string& rel) {
    const auto path = dir_ / rel;
    std::ifstream in(path);
    if (!in) {
      fail(rel, -1, "", "cannot read the file (missing?)");
      return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    if (rel.ends_with(".json")) {
      auto j = json::parse(text.str(), nullptr, false);
      if (j.is_discarded())
        fail(rel, -1, "", "not valid JSON");
      return j.is_discarded() ? std::nullopt : std::optional<json>(std::move(j));
    }
    try {
      return to_json(YAML::Load(text.str()));
    } catch (const YAML::Exception& e) {
      fail(rel, -1, "", std::string("not valid YAML: ") + e.what());
      return std::nullopt;
    }
  }

  void manifest() {
    auto m = read("manifest.yaml");
    if (!m)
      return;
    const std::string f = "manifest.yaml";
    if (!m->is_object())
      return fail(f, -1, "", "must be a map");
    for (auto it = m->begin(); it != m->end(); ++it)
      if (!std::set<std::string>{"name", "version", "description", "schemas", "entities"}.count(it.key()))
        fail(f, -1, "/" + it.key(), "unknown key (known: name, version, description, schemas, entities)");
    auto text = [&](const char* k, std::string& out, bool required) {
      if (!m->contains(k)) {
        if (required)
          fail(f, -1, std::string("/") + k, "required");
        return;
      }
      const auto& v = (*m)[k];
      if (!v.is_string() && !v.is_number())
        return fail(f, -1, std::string("/") + k, "must be a string");
      out = v.is_string() ? v.get<std::string>() : v.dump();
    };
    text("name", b_.name, true);
    text("version", b_.version, true);
    text("description", b_.description, false);
    if (!b_.name.empty() && !std::regex_match(b_.name, std::regex("^[a-z0-9-]+$")))
      fail(f, -1, "/name", "'" + b_.name + "' must be lowercase letters, digits and '-'");
    if (!m->contains("schemas") || !(*m)["schemas"].is_array() || (*m)["schemas"].empty())
      return fail(f, -1, "/schemas", "required: a list of schema files");
    for (std::size_t i = 0; i < (*m)["schemas"].size(); ++i) {
      const auto& p = (*m)["schemas"][i];
      if (!p.is_string() || !p.get<std::string>().ends_with(".schema.json")) {
        fail(f, -1, "/schemas/" + std::to_string(i), "must be a path ending in .schema.json");
        continue;
      }
      schema_file(p.get<std::string>());
    }
    if (!m->contains("entities") || !(*m)["entities"].is_array())
      return fail(f, -1, "/entities", "required: a list of {type, file}");
    for (std::size_t i = 0; i < (*m)["entities"].size(); ++i) {
      const auto& e = (*m)["entities"][i];
      const auto at = "/entities/" + std::to_string(i);
      if (!e.is_object() || !e.contains("type") || !e.contains("file") || !e["type"].is_string() ||
          !e["file"].is_string() || e.size() != 2) {
        fail(f, -1, at, "must be {type, file}");
        continue;
      }
      const auto type = e["type"].get<std::string>();
      auto t = b_.types.find(type);
      if (t == b_.types.end()) {
        fail(f, -1, at + "/type", "type '" + type + "' has no schema in /schemas");
        continue;
      }
      entity_file(t->second, e["file"].get<std::string>());
    }
  }

  void schema_file(const std::string& rel) {
    auto s = read(rel);
    if (!s)
      return;
    auto stem = std::filesystem::path(rel).filename().string();
    stem = stem.substr(0, stem.size() - std::string(".schema.json").size());
    if (!std::regex_match(stem, std::regex("^[a-z][a-z0-9_]*$")))
      return fail(rel, -1, "",
                  "the type name (the file's stem) '" + stem + "' must be lowercase letters, digits and '_'");
    if (b_.types.count(stem))
      return fail(rel, -1, "", "type '" + stem + "' has two schemas");
    annotations(rel, *s, "");
    compile_options o;
    o.extension = [](std::string_view k) {
      return std::find(type_annotations.begin(), type_annotations.end(), k) != type_annotations.end() ||
             std::find(property_annotations.begin(), property_annotations.end(), k) != property_annotations.end();
    };
    auto compiled = json_schema::compile(*s, o);
    if (!compiled)
      return fail(rel, -1, "", compiled.error());
    entity_type t;
    t.name = stem;
    t.schema = *s;
    if (!s->is_object() || s->value("type", json()) != "object")
      return fail(rel, -1, "/type", "an entity type's schema must have type: object");
    const json props = s->value("properties", json::object());
    if (!s->contains("x-id-field") || !(*s)["x-id-field"].is_string())
      fail(rel, -1, "/x-id-field", "required: the property that holds each entity's id");
    else if (!props.contains((*s)["x-id-field"].get<std::string>()))
      fail(rel, -1, "/x-id-field", "'" + (*s)["x-id-field"].get<std::string>() + "' is not a property of the schema");
    else
      t.id_field = (*s)["x-id-field"].get<std::string>();
    if (s->contains("x-tool-expose")) {
      const auto& e = (*s)["x-tool-expose"];
      static const std::set<std::string> tools{"list", "get", "list_ids"};
      if (!e.is_array() || e.empty() || !std::all_of(e.begin(), e.end(), [](const json& x) {
            return x.is_string() && tools.count(x.get<std::string>());
          }))
        fail(rel, -1, "/x-tool-expose", "must be a list of list, get, list_ids");
      else
        t.expose = e.get<std::vector<std::string>>();
    }
    if (s->contains("x-tool-description") && !(*s)["x-tool-description"].is_string())
      fail(rel, -1, "/x-tool-description", "must be a string");
    // Read only as strings (a wrong type is refused above, or is a plain schema description).
    const auto text_of = [&](const char* k) {
      const auto it = s->find(k);
      return it != s->end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    t.description = s->contains("x-tool-description") ? text_of("x-tool-description") : text_of("description");
    for (auto p = props.begin(); p != props.end(); ++p) {
      const auto at = "/properties/" + p.key();
      if (!p.value().is_object())
        continue;
      const auto& v = p.value();
      if (v.contains("x-index")) {
        if (v["x-index"] != true)
          fail(rel, -1, at + "/x-index", "must be true (or absent)");
        else
          t.indexed[p.key()] = v;
      }
      if (v.contains("x-ref")) {
        if (!v["x-ref"].is_string())
          fail(rel, -1, at + "/x-ref", "must name a type of the bundle");
        else if (v.contains("x-ref-field") && !v["x-ref-field"].is_string())
          fail(rel, -1, at + "/x-ref-field", "must name a field of the type x-ref names");
        else
          t.refs[p.key()] = {v["x-ref"].get<std::string>(), v.value("x-ref-field", std::string())};
      } else if (v.contains("x-ref-field")) {
        fail(rel, -1, at + "/x-ref-field", "needs x-ref beside it");
      }
      if (v.contains("x-derived")) {
        const auto counted = p.key().ends_with("_count") ? p.key().substr(0, p.key().size() - 6) : std::string();
        if (v["x-derived"] != true)
          fail(rel, -1, at + "/x-derived", "must be true (or absent)");
        else if (counted.empty() || v.value("type", json()) != "integer")
          fail(rel, -1, at + "/x-derived",
               "'" + p.key() +
                   "' fits no derivation the engine knows (an integer '<type>_count' counting the <type> "
                   "entities that refer to this one)");
        else
          t.derived[p.key()] = counted;
      }
    }
    b_.types.emplace(stem, std::move(t));
  }

  /// Unknown x-* annotations anywhere in a schema: an error listing the known ones.
  void annotations(const std::string& rel, const json& s, const std::string& at) {
    if (s.is_object()) {
      for (auto it = s.begin(); it != s.end(); ++it) {
        const auto here = at + "/" + it.key();
        if (it.key().rfind("x-", 0) == 0 &&
            std::find(type_annotations.begin(), type_annotations.end(), it.key()) == type_annotations.end() &&
            std::find(property_annotations.begin(), property_annotations.end(), it.key()) == property_annotations.end())
          fail(rel, -1, here, "unknown annotation '" + it.key() + "' (known: " + list(known_annotations()) + ")");
        else if (it.key().rfind("x-", 0) != 0 && it.key() != "const" && it.key() != "enum" && it.key() != "default" &&
                 it.key() != "examples")
          annotations(rel, it.value(), here);
      }
    } else if (s.is_array()) {
      for (std::size_t i = 0; i < s.size(); ++i)
        annotations(rel, s[i], at + "/" + std::to_string(i));
    }
  }

  void entity_file(entity_type& t, const std::string& rel) {
    auto data = read(rel);
    if (!data)
      return;
    if (!data->is_array())
      return fail(rel, -1, "", "must be an array of " + t.name + " entities");
    files_[t.name].push_back(rel);
    long in_file = 0;  // the place in this file, not among all of the type's files
    for (auto& e : *data) {
      t.entities.push_back(std::move(e));
      origin_[&t].push_back({rel, in_file++});
    }
  }

  void check_types() {
    for (auto& [name, t] : b_.types) {
      auto compiled =
          json_schema::compile(t.schema, compile_options{[](std::string_view k) { return k.starts_with("x-"); }});
      std::set<std::string> ids;
      for (std::size_t i = 0; i < t.entities.size(); ++i) {
        const auto& e = t.entities[i];
        for (const auto& err : compiled->validate(e, 20))
          fail_entity(t, i, err.instance_path, err.keyword == "false" ? err.message : err.keyword + ": " + err.message);
        if (!e.is_object())
          continue;
        for (const auto& [field, counted] : t.derived)
          if (e.contains(field))
            fail_entity(t, i, "/" + field, "is derived (x-derived): the engine computes it, a bundle never sets it");
        if (!t.id_field.empty()) {
          if (!e.contains(t.id_field))
            continue;  // the schema's required (if any) said so; an id is needed all the same
          if (!ids.insert(id_of(e[t.id_field])).second)
            fail_entity(t, i, "/" + t.id_field, "id '" + id_of(e[t.id_field]) + "' appears twice in type " + name);
        }
      }
      for (std::size_t i = 0; i < t.entities.size(); ++i)
        if (!t.id_field.empty() && t.entities[i].is_object() && !t.entities[i].contains(t.id_field))
          fail_entity(t, i, "/" + t.id_field, "the id field (x-id-field) is missing");
    }
  }

  void check_references() {
    for (auto& type : b_.types) {
      const std::string& name = type.first;  // not a structured binding: a lambda captures it
      auto& t = type.second;
      const auto schema_file = "schemas/" + name + ".schema.json";
      for (auto& [field, ref] : t.refs) {
        auto target = b_.types.find(ref.type);
        if (target == b_.types.end()) {
          fail(schema_file, -1, "/properties/" + field + "/x-ref", "type '" + ref.type + "' is not in this bundle");
          continue;
        }
        if (ref.field.empty())
          ref.field = target->second.id_field;
        else if (!target->second.schema.value("properties", json::object()).contains(ref.field)) {
          fail(schema_file, -1, "/properties/" + field + "/x-ref-field",
               "'" + ref.field + "' is not a property of type " + ref.type);
          continue;
        }
        std::set<std::string> known;
        for (const auto& e : target->second.entities)
          if (e.is_object() && e.contains(ref.field))
            known.insert(id_of(e[ref.field]));
        for (std::size_t i = 0; i < t.entities.size(); ++i) {
          const auto& e = t.entities[i];
          if (!e.is_object() || !e.contains(field) || e[field].is_null())
            continue;
          const auto values = e[field].is_array() ? e[field] : json::array({e[field]});
          for (const auto& v : values)
            if (!known.count(id_of(v)))
              fail_entity(t, i, "/" + field,
                          "refers to " + ref.type + " '" + id_of(v) + "', which the bundle does not have");
        }
      }
      for (const auto& [field, counted] : t.derived) {
        auto c = b_.types.find(counted);
        const bool refers = c != b_.types.end() && std::any_of(c->second.refs.begin(), c->second.refs.end(),
                                                               [&](const auto& r) { return r.second.type == name; });
        if (!refers)
          fail(schema_file, -1, "/properties/" + field + "/x-derived",
               "'" + field + "' counts type '" + counted + "', which " +
                   (c == b_.types.end() ? "is not in this bundle" : "has no x-ref to " + name));
      }
    }
    // Cycles between types: allowed, reported.
    std::set<std::string> reported;
    for (const auto& type : b_.types) {
      const std::string& start = type.first;  // captured by the walk below
      std::vector<std::string> path{start};
      std::function<void(const std::string&)> walk = [&](const std::string& at) {
        for (const auto& [f, r] : b_.types.at(at).refs) {
          if (r.type == start) {
            auto cycle = path;
            cycle.push_back(start);
            auto key = cycle;
            key.pop_back();
            std::sort(key.begin(), key.end());
            if (reported.insert(list(key)).second) {
              std::string text;
              for (const auto& c : cycle)
                text += (text.empty() ? "" : " -> ") + c;
              b_.warnings.push_back("cycle between types: " + text);
            }
          } else if (b_.types.count(r.type) && std::find(path.begin(), path.end(), r.type) == path.end()) {
            path.push_back(r.type);
            walk(r.type);
            path.pop_back();
          }
        }
      };
      walk(start);
    }
  }

  std::filesystem::path dir_;
  bundle b_;
  std::vector<bundle_error> errors_;
  std::map<std::string, std::vector<std::string>> files_;
  std::map<const entity_type*, std::vector<std::pair<std::string, long>>> origin_;
};

}  // namespace

std::string bundle_error::to_string() const {
  std::string out = file;
  if (entity >= 0)
    out += entity_id.empty() ? " entity " + std::to_string(entity)
                             : " entity '" + entity_id + "' (#" + std::to_string(entity) + ")";
  if (!pointer.empty())
    out += " " + pointer;
  return out + ": " + reason;
}

const std::vector<std::string>& known_annotations() {
  static const std::vector<std::string> all = [] {
    auto a = type_annotations;
    a.insert(a.end(), property_annotations.begin(), property_annotations.end());
    return a;
  }();
  return all;
}

std::variant<bundle, std::vector<bundle_error>> load_bundle(const std::filesystem::path& dir) {
  return loader(dir).run();
}

json derived_values(const bundle& b, const std::string& type, const json& entity) {
  json out = json::object();
  const auto& t = b.types.at(type);
  for (const auto& [field, counted] : t.derived) {
    const auto& c = b.types.at(counted);
    std::size_t n = 0;
    for (const auto& [f, r] : c.refs) {
      if (r.type != type || !entity.contains(r.field))
        continue;
      const auto id = id_of(entity[r.field]);
      for (const auto& e : c.entities) {
        if (!e.contains(f))
          continue;
        const auto values = e[f].is_array() ? e[f] : json::array({e[f]});
        n += std::any_of(values.begin(), values.end(), [&](const json& v) { return id_of(v) == id; });
      }
    }
    out[field] = n;
  }
  return out;
}

}  // namespace engram::kg
