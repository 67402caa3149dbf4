#include "kg/json_schema.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <unordered_map>

#include <re2/re2.h>

namespace engram::kg {

namespace {

constexpr std::string_view draft_2020_12 = "https://json-schema.org/draft/2020-12/schema";

const std::vector<std::string_view> keywords{
    // core
    "$schema", "$id", "$ref", "$defs", "$anchor", "$comment",
    // applicators
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "dependentSchemas", "items", "prefixItems", "contains",
    // assertions
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
    "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties",
    "minProperties", "required", "dependentRequired",
    // annotations
    "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "format", "contentMediaType",
    "contentEncoding", "contentSchema"};

const std::set<std::string_view> type_names{"null", "boolean", "object", "array", "number", "string", "integer"};

/// A count keyword's value (minLength, maxItems, ...), which compile checked is a non-negative
/// integer. One written as a float past what a size_t holds (1e86) counts as the largest: the
/// conversion itself would be undefined (found by fuzz_json_schema).
std::size_t count_of(const json& n) {
  if (!n.is_number_float())
    return n.get<std::size_t>();
  const double d = n.get<double>();
  return d >= 18446744073709551615.0 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(d);
}

std::string escape_token(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::size_t code_points(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool is_integer(const json& v) {
  if (v.is_number_integer())
    return true;
  if (!v.is_number_float())
    return false;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

bool has_type(const json& v, std::string_view t) {
  if (t == "null")
    return v.is_null();
  if (t == "boolean")
    return v.is_boolean();
  if (t == "object")
    return v.is_object();
  if (t == "array")
    return v.is_array();
  if (t == "string")
    return v.is_string();
  if (t == "number")
    return v.is_number();
  return is_integer(v);  // "integer"
}

/// JSON equality as JSON Schema defines it: numbers by value (1 == 1.0).
bool same(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float())
      return a.get<double>() == b.get<double>();
    return a == b;
  }
  if (a.type() != b.type())
    return false;
  if (a.is_array()) {
    if (a.size() != b.size())
      return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i]))
        return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size())
      return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !same(it.value(), *other))
        return false;
    }
    return true;
  }
  return a == b;
}

bool multiple_of(const json& v, const json& m) {
  if (v.is_number_integer() && m.is_number_integer()) {
    const auto d = m.get<std::int64_t>();
    return d != 0 && v.get<std::int64_t>() % d == 0;
  }
  const double q = v.get<double>() / m.get<double>();
  if (!std::isfinite(q))
    return false;
  return std::fabs(q - std::round(q)) < 1e-9 * std::max(1.0, std::fabs(q));
}

/// A schema's regular expression (pattern, patternProperties), compiled with RE2: matching
/// takes time linear in the text whatever the pattern (a backtracking engine such as
/// std::regex can take for ever on a pattern like "(a??)+?b"; fuzz_json_schema found one).
/// RE2 reads the ECMAScript syntax JSON Schema names except backreferences and lookaround,
/// which are refused when the schema is compiled; `\uXXXX` is read as RE2's `\x{XXXX}`.
/// The error says why it was refused, or null.
std::unique_ptr<re2::RE2> compile_pattern(const std::string& ecma, std::string* error) {
  std::string translated;
  translated.reserve(ecma.size());
  for (std::size_t i = 0; i < ecma.size(); ++i) {
    if (ecma[i] == '\\' && i + 5 < ecma.size() && ecma[i + 1] == 'u' &&
        std::all_of(ecma.begin() + static_cast<std::ptrdiff_t>(i) + 2,
                    ecma.begin() + static_cast<std::ptrdiff_t>(i) + 6,
                    [](unsigned char c) { return std::isxdigit(c); })) {
      translated += "\\x{" + ecma.substr(i + 2, 4) + "}";
      i += 5;
    } else if (ecma[i] == '\\' && i + 1 < ecma.size()) {
      translated += ecma.substr(i, 2);  // an escaped character stays escaped (and "\\u" is not \u)
      ++i;
    } else {
      translated += ecma[i];
    }
  }
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(1 << 20);  // a pattern whose program would need more is refused, not built
  auto re = std::make_unique<re2::RE2>(translated, o);
  if (!re->ok()) {
    *error = re->error();
    return nullptr;
  }
  return re;
}

/// A keyword's error in a schema: "<keyword> at '<schema path>': <why>".
std::optional<std::string> bad_keyword(const std::string& k, const std::string& at, const std::string& why) {
  return k + " at '" + at + "': " + why;
}

}  // namespace

struct json_schema::impl {
  json doc;
  std::string base;  // the root's $id, without a fragment
  std::unordered_map<const json*, std::unique_ptr<re2::RE2>> patterns;
  std::unordered_map<std::string, const json*> anchors;
  std::unordered_map<const json*, const json*> refs;  // a schema with $ref -> its target

  /// Checks a schema's keywords (recursively) and gathers regexes and anchors; the first error.
  std::optional<std::string> walk(const json& s, const std::string& at, const compile_options& o) {
    if (s.is_boolean())
      return std::nullopt;
    if (!s.is_object())
      return "schema at '" + at + "': must be an object or a boolean";
    for (auto it = s.begin(); it != s.end(); ++it) {
      const auto& k = it.key();
      const auto& v = it.value();
      const auto here = at + "/" + escape_token(k);
      if (std::find(keywords.begin(), keywords.end(), k) == keywords.end()) {
        if (o.extension && o.extension(k))
          continue;
        return bad_keyword(k, at,
                           "keyword not supported (supported: the keywords json_schema::supported_keywords() lists)");
      }
      // Each keyword is read by one of the three steps (the others pass it by).
      if (auto e = walk_core(s, k, v, at))
        return e;
      if (auto e = walk_applicator(k, v, at, here, o))
        return e;
      if (auto e = walk_assertion(k, v, at))
        return e;
      // const, default, examples: any value.
    }
    return std::nullopt;
  }

  /// walk's step for the core and string-valued annotation keywords ($schema, $id, $anchor, $ref, ...).
  std::optional<std::string> walk_core(const json& s, const std::string& k, const json& v, const std::string& at) {
    if (k == "$schema") {
      if (!v.is_string() || v.get<std::string>().rfind(std::string(draft_2020_12), 0) != 0)
        return bad_keyword(k, at, "only draft 2020-12 (" + std::string(draft_2020_12) + ") is supported");
    } else if (k == "$id" || k == "$comment" || k == "title" || k == "description" || k == "format" ||
               k == "contentMediaType" || k == "contentEncoding") {
      if (!v.is_string())
        return bad_keyword(k, at, "must be a string");
      if (k == "$id" && at.empty()) {
        auto id = v.get<std::string>();
        base = id.substr(0, id.find('#'));
      } else if (k == "$id" && !v.get<std::string>().starts_with("#")) {
        return bad_keyword(k, at, "only the root schema may have an $id (no embedded resources)");
      }
    } else if (k == "$anchor") {
      if (!v.is_string() || v.get<std::string>().empty())
        return bad_keyword(k, at, "must be a non-empty string");
      anchors[v.get<std::string>()] = &s;
    } else if (k == "$ref") {
      if (!v.is_string())
        return bad_keyword(k, at, "must be a string");
    }
    return std::nullopt;
  }

  /// walk's step for the keywords that hold subschemas (walked in turn; patternProperties' regexes gathered).
  std::optional<std::string> walk_applicator(const std::string& k, const json& v, const std::string& at,
                                             const std::string& here, const compile_options& o) {
    auto sub = [&](const json& x, const std::string& where) { return walk(x, where, o); };
    if (k == "$defs" || k == "properties" || k == "patternProperties" || k == "dependentSchemas") {
      if (!v.is_object())
        return bad_keyword(k, at, "must be an object of schemas");
      for (auto p = v.begin(); p != v.end(); ++p) {
        if (k == "patternProperties") {
          std::string why;
          auto re = compile_pattern(p.key(), &why);
          if (!re)
            return bad_keyword(k, at,
                               "'" + p.key() + "' is not a regular expression this validator reads (" + why + ")");
          patterns.emplace(&p.value(), std::move(re));
        }
        if (auto e = sub(p.value(), here + "/" + escape_token(p.key())))
          return e;
      }
    } else if (k == "additionalProperties" || k == "propertyNames" || k == "items" || k == "contains" || k == "not" ||
               k == "if" || k == "then" || k == "else" || k == "contentSchema") {
      if (auto e = sub(v, here))
        return e;
    } else if (k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems") {
      if (!v.is_array() || v.empty())
        return bad_keyword(k, at, "must be a non-empty array of schemas");
      for (std::size_t i = 0; i < v.size(); ++i)
        if (auto e = sub(v[i], here + "/" + std::to_string(i)))
          return e;
    }
    return std::nullopt;
  }

  /// walk's step for the assertion keywords (type, enum, bounds, pattern, required, ...).
  std::optional<std::string> walk_assertion(const std::string& k, const json& v, const std::string& at) {
    auto count = [](const json& x) { return x.is_number_integer() && x.get<std::int64_t>() >= 0; };
    if (k == "type") {
      auto ok = [](const json& t) { return t.is_string() && type_names.count(t.get<std::string>()); };
      if (!(ok(v) || (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), ok))))
        return bad_keyword(
            k, at, "must be a type name or an array of them (null, boolean, object, array, number, string, integer)");
    } else if (k == "enum") {
      if (!v.is_array())
        return bad_keyword(k, at, "must be an array");
    } else if (k == "multipleOf") {
      if (!v.is_number() || v.get<double>() <= 0)
        return bad_keyword(k, at, "must be a number above 0");
    } else if (k == "maximum" || k == "exclusiveMaximum" || k == "minimum" || k == "exclusiveMinimum") {
      if (!v.is_number())
        return bad_keyword(k, at, "must be a number");
    } else if (k == "maxLength" || k == "minLength" || k == "maxItems" || k == "minItems" || k == "maxContains" ||
               k == "minContains" || k == "maxProperties" || k == "minProperties") {
      if (!count(v) && !(v.is_number_float() && is_integer(v) && v.get<double>() >= 0))
        return bad_keyword(k, at, "must be a non-negative integer");
    } else if (k == "pattern") {
      if (!v.is_string())
        return bad_keyword(k, at, "must be a string");
      std::string why;
      auto re = compile_pattern(v.get<std::string>(), &why);
      if (!re)
        return bad_keyword(
            k, at, "'" + v.get<std::string>() + "' is not a regular expression this validator reads (" + why + ")");
      patterns.emplace(&v, std::move(re));
    } else if (k == "uniqueItems" || k == "deprecated" || k == "readOnly" || k == "writeOnly") {
      if (!v.is_boolean())
        return bad_keyword(k, at, "must be a boolean");
    } else if (k == "required") {
      if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); }))
        return bad_keyword(k, at, "must be an array of strings");
    } else if (k == "dependentRequired") {
      if (!v.is_object())
        return bad_keyword(k, at, "must be an object of string arrays");
      for (const auto& list : v)
        if (!list.is_array() || !std::all_of(list.begin(), list.end(), [](const json& x) { return x.is_string(); }))
          return bad_keyword(k, at, "must be an object of string arrays");
    }
    return std::nullopt;
  }

  /// Resolves every $ref (after walk found the anchors); the first error.
  std::optional<std::string> link(const json& s, const std::string& at) {
    if (!s.is_object())
      return std::nullopt;
    if (auto r = s.find("$ref"); r != s.end()) {
      auto ref = r->get<std::string>();
      if (!base.empty() && ref.rfind(base, 0) == 0)
        ref = ref.substr(base.size());
      const json* target = nullptr;
      if (ref == "#" || ref.empty()) {
        target = &doc;
      } else if (ref.rfind("#/", 0) == 0) {
        try {
          target = &doc.at(json::json_pointer(percent_decode(ref.substr(1))));
        } catch (const json::exception&) {
        }
      } else if (ref[0] == '#') {
        if (auto a = anchors.find(ref.substr(1)); a != anchors.end())
          target = a->second;
      } else {
        return "$ref at '" + at + "': '" + ref +
               "' is outside this schema (only references within the document: #/..., #anchor)";
      }
      if (!target)
        return "$ref at '" + at + "': '" + ref + "' points at nothing in this schema";
      refs[&s] = target;
    }
    for (auto it = s.begin(); it != s.end(); ++it) {
      const auto& k = it.key();
      const auto here = at + "/" + escape_token(k);
      const auto& v = it.value();
      if (k == "$defs" || k == "properties" || k == "patternProperties" || k == "dependentSchemas") {
        for (auto p = v.begin(); p != v.end(); ++p)
          if (auto e = link(p.value(), here + "/" + escape_token(p.key())))
            return e;
      } else if (k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems") {
        for (std::size_t i = 0; i < v.size(); ++i)
          if (auto e = link(v[i], here + "/" + std::to_string(i)))
            return e;
      } else if (k == "additionalProperties" || k == "propertyNames" || k == "items" || k == "contains" || k == "not" ||
                 k == "if" || k == "then" || k == "else" || k == "contentSchema") {
        if (auto e = link(v, here))
          return e;
      }
    }
    return std::nullopt;
  }

  struct run {
    std::vector<validation_error>* errors;
    std::size_t max;
    [[nodiscard]] bool full() const { return errors->size() >= max; }
  };

  /// One check's place: the schema and the instance, their paths, where errors go and the depth.
  struct frame {
    const json& s;
    const json& v;
    const std::string& ip;
    const std::string& sp;
    const run& r;
    int depth;
    /// Records an error at keyword `k` (up to the run's max); false.
    bool fail(const char* k, std::string why) const {
      if (!r.full())
        r.errors->push_back({ip, k, sp + "/" + k, std::move(why)});
      return false;
    }
  };

  /// Validates; true when valid. Errors go to `r` (up to its max).
  bool check(const json& s, const json& v, const std::string& ip, const std::string& sp, const run& r,
             int depth) const {
    const frame f{s, v, ip, sp, r, depth};
    if (s.is_boolean())
      return s.get<bool>() || f.fail("false", "no value is allowed here");
    if (depth > 200)
      return f.fail("$ref", "references nest too deep (a loop that never reads the instance?)");
    bool ok = true;
    if (auto t = refs.find(&s); t != refs.end())
      ok &= check(*t->second, v, ip, sp + "/$ref", r, depth + 1);
    ok &= check_value(f);
    if (v.is_number())
      ok &= check_number(f);
    if (v.is_string())
      ok &= check_string(f);
    if (v.is_array())
      ok &= check_array(f);
    if (v.is_object())
      ok &= check_object(f);
    ok &= check_combined(f);
    return ok;
  }

  /// A yes/no answer from a subschema, its errors dropped.
  bool passes(const frame& f, const json& sub, const json& x, const std::string& sub_path) const {
    std::vector<validation_error> scratch;
    return check(sub, x, f.ip, sub_path, run{&scratch, 1}, f.depth + 1);
  }

  /// check's step for type, enum and const.
  bool check_value(const frame& f) const {
    const json& s = f.s;  // references, not a structured binding: lambdas capture them
    const json& v = f.v;
    bool ok = true;
    if (auto t = s.find("type"); t != s.end()) {
      const bool any = t->is_string() ? has_type(v, t->get<std::string>())
                                      : std::any_of(t->begin(), t->end(),
                                                    [&](const json& n) { return has_type(v, n.get<std::string>()); });
      if (!any)
        ok = f.fail("type", "must be of type " + t->dump());
    }
    if (auto e = s.find("enum");
        e != s.end() && std::none_of(e->begin(), e->end(), [&](const json& x) { return same(x, v); }))
      ok = f.fail("enum", "must be one of " + e->dump());
    if (auto c = s.find("const"); c != s.end() && !same(*c, v))
      ok = f.fail("const", "must be " + c->dump());
    return ok;
  }

  /// check's step for a number: bounds and multipleOf.
  bool check_number(const frame& f) const {
    const json& s = f.s;
    const json& v = f.v;
    bool ok = true;
    const double x = v.get<double>();
    auto num = [&](const char* k, auto bad_if, const char* says) {
      if (auto n = s.find(k); n != s.end() && bad_if(x, n->get<double>()))
        ok = f.fail(k, std::string(says) + " " + n->dump());
    };
    num(
        "minimum", [](double a, double b) { return a < b; }, "must be at least");
    num(
        "maximum", [](double a, double b) { return a > b; }, "must be at most");
    num(
        "exclusiveMinimum", [](double a, double b) { return a <= b; }, "must be more than");
    num(
        "exclusiveMaximum", [](double a, double b) { return a >= b; }, "must be less than");
    if (auto m = s.find("multipleOf"); m != s.end() && !multiple_of(v, *m))
      ok = f.fail("multipleOf", "must be a multiple of " + m->dump());
    return ok;
  }

  /// check's step for a string: its length in code points and its pattern.
  bool check_string(const frame& f) const {
    const auto& [s, v, ip, sp, r, depth] = f;
    bool ok = true;
    const auto& str = v.get_ref<const std::string&>();
    if (auto n = s.find("minLength"); n != s.end() && code_points(str) < count_of(*n))
      ok = f.fail("minLength", "must be at least " + n->dump() + " characters");
    if (auto n = s.find("maxLength"); n != s.end() && code_points(str) > count_of(*n))
      ok = f.fail("maxLength", "must be at most " + n->dump() + " characters");
    if (auto p = s.find("pattern"); p != s.end() && !RE2::PartialMatch(str, *patterns.at(&*p)))
      ok = f.fail("pattern", "must match " + p->dump());
    return ok;
  }

  /// check's step for an array: its size, unique items, prefixItems, items and contains.
  bool check_array(const frame& f) const {
    const auto& [s, v, ip, sp, r, depth] = f;
    bool ok = true;
    if (auto n = s.find("minItems"); n != s.end() && v.size() < count_of(*n))
      ok = f.fail("minItems", "must hold at least " + n->dump() + " items");
    if (auto n = s.find("maxItems"); n != s.end() && v.size() > count_of(*n))
      ok = f.fail("maxItems", "must hold at most " + n->dump() + " items");
    if (auto u = s.find("uniqueItems"); u != s.end() && u->get<bool>())
      for (std::size_t i = 0; i < v.size(); ++i)
        for (std::size_t j = i + 1; j < v.size(); ++j)
          if (same(v[i], v[j])) {
            ok = f.fail("uniqueItems", "items " + std::to_string(i) + " and " + std::to_string(j) + " are equal");
            i = j = v.size();
          }
    std::size_t prefix = 0;
    if (auto p = s.find("prefixItems"); p != s.end()) {
      prefix = std::min(p->size(), v.size());
      for (std::size_t i = 0; i < prefix; ++i)
        ok &=
            check((*p)[i], v[i], ip + "/" + std::to_string(i), sp + "/prefixItems/" + std::to_string(i), r, depth + 1);
    }
    if (auto it = s.find("items"); it != s.end())
      for (std::size_t i = prefix; i < v.size(); ++i)
        ok &= check(*it, v[i], ip + "/" + std::to_string(i), sp + "/items", r, depth + 1);
    if (auto c = s.find("contains"); c != s.end()) {
      std::size_t matches = 0;
      for (const auto& x : v)
        matches += passes(f, *c, x, sp + "/contains");
      const auto lo = s.contains("minContains") ? count_of(s["minContains"]) : std::size_t{1};
      if (matches < lo)
        ok = f.fail("contains", "must contain at least " + std::to_string(lo) + " matching items");
      if (auto n = s.find("maxContains"); n != s.end() && matches > count_of(*n))
        ok = f.fail("maxContains", "must contain at most " + n->dump() + " matching items");
    }
    return ok;
  }

  /// check's step for an object: its size, required and dependent members, and each member's schemas.
  bool check_object(const frame& f) const {
    const auto& [s, v, ip, sp, r, depth] = f;
    bool ok = true;
    if (auto n = s.find("minProperties"); n != s.end() && v.size() < count_of(*n))
      ok = f.fail("minProperties", "must have at least " + n->dump() + " properties");
    if (auto n = s.find("maxProperties"); n != s.end() && v.size() > count_of(*n))
      ok = f.fail("maxProperties", "must have at most " + n->dump() + " properties");
    if (auto req = s.find("required"); req != s.end())
      for (const auto& k : *req)
        if (!v.contains(k.get<std::string>()))
          ok = f.fail("required", "'" + k.get<std::string>() + "' is required");
    if (auto dr = s.find("dependentRequired"); dr != s.end())
      for (auto d = dr->begin(); d != dr->end(); ++d)
        if (v.contains(d.key()))
          for (const auto& k : d.value())
            if (!v.contains(k.get<std::string>()))
              ok = f.fail("dependentRequired", "'" + k.get<std::string>() + "' is required with '" + d.key() + "'");
    const auto props = s.find("properties");
    const auto pats = s.find("patternProperties");
    const auto extra = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const auto child = ip + "/" + escape_token(it.key());
      bool known = false;
      if (props != s.end())
        if (auto p = props->find(it.key()); p != props->end()) {
          known = true;
          ok &= check(*p, it.value(), child, sp + "/properties/" + escape_token(it.key()), r, depth + 1);
        }
      if (pats != s.end())
        for (auto p = pats->begin(); p != pats->end(); ++p)
          if (RE2::PartialMatch(it.key(), *patterns.at(&p.value()))) {
            known = true;
            ok &= check(p.value(), it.value(), child, sp + "/patternProperties/" + escape_token(p.key()), r, depth + 1);
          }
      if (!known && extra != s.end() && !check(*extra, it.value(), child, sp + "/additionalProperties", r, depth + 1)) {
        ok = false;
        if (extra->is_boolean() && !r.full())
          r.errors->back().message = "'" + it.key() + "' is not a property this schema allows";
      }
      if (auto names = s.find("propertyNames"); names != s.end())
        ok &= check(*names, json(it.key()), child, sp + "/propertyNames", r, depth + 1);
    }
    if (auto ds = s.find("dependentSchemas"); ds != s.end())
      for (auto d = ds->begin(); d != ds->end(); ++d)
        if (v.contains(d.key()))
          ok &= check(d.value(), v, ip, sp + "/dependentSchemas/" + escape_token(d.key()), r, depth + 1);
    return ok;
  }

  /// check's step for the schemas that combine: allOf, anyOf, oneOf, not, if/then/else.
  bool check_combined(const frame& f) const {
    const auto& [s, v, ip, sp, r, depth] = f;
    bool ok = true;
    if (auto all = s.find("allOf"); all != s.end())
      for (std::size_t i = 0; i < all->size(); ++i)
        ok &= check((*all)[i], v, ip, sp + "/allOf/" + std::to_string(i), r, depth + 1);
    if (auto any = s.find("anyOf"); any != s.end()) {
      bool one = false;
      for (std::size_t i = 0; i < any->size() && !one; ++i)
        one = passes(f, (*any)[i], v, sp + "/anyOf/" + std::to_string(i));
      if (!one)
        ok = f.fail("anyOf", "must match at least one of the schemas");
    }
    if (auto one = s.find("oneOf"); one != s.end()) {
      std::size_t n = 0;
      for (std::size_t i = 0; i < one->size(); ++i)
        n += passes(f, (*one)[i], v, sp + "/oneOf/" + std::to_string(i));
      if (n != 1)
        ok = f.fail("oneOf", "must match exactly one of the schemas (matches " + std::to_string(n) + ")");
    }
    if (auto no = s.find("not"); no != s.end() && passes(f, *no, v, sp + "/not"))
      ok = f.fail("not", "must not match the schema");
    if (auto cond = s.find("if"); cond != s.end()) {
      if (passes(f, *cond, v, sp + "/if")) {
        if (auto then = s.find("then"); then != s.end())
          ok &= check(*then, v, ip, sp + "/then", r, depth + 1);
      } else if (auto otherwise = s.find("else"); otherwise != s.end()) {
        ok &= check(*otherwise, v, ip, sp + "/else", r, depth + 1);
      }
    }
    return ok;
  }
};

engram::result<json_schema> json_schema::compile(json schema, const compile_options& opts) {
  auto p = std::make_shared<impl>();
  p->doc = std::move(schema);
  if (auto e = p->walk(p->doc, "", opts))
    return engram::fail(*e);
  if (auto e = p->link(p->doc, ""))
    return engram::fail(*e);
  return json_schema(std::move(p));
}

std::vector<validation_error> json_schema::validate(const json& instance, std::size_t max_errors) const {
  std::vector<validation_error> errors;
  p_->check(p_->doc, instance, "", "", impl::run{&errors, std::max<std::size_t>(1, max_errors)}, 0);
  return errors;
}

const json& json_schema::document() const { return p_->doc; }

const std::vector<std::string_view>& json_schema::supported_keywords() { return keywords; }

}  // namespace engram::kg
