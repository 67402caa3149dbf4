// The JSON Schema validator (kg/json_schema.hpp) against the official JSON-Schema-Test-Suite's
// draft 2020-12 files (Debian's libtest-json-schema-acceptance-perl, installed by
// tools/dev.sh setup): every test of every file of a supported keyword, except the groups
// listed in `excluded` with the reason. A group whose schema uses a keyword outside the
// supported set must fail to compile (never be silently accepted): checked too.
#include "kg/json_schema.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

namespace engram::kg {
namespace {

// clang-format off
const std::vector<std::string> files{
    "additionalProperties", "allOf", "anchor", "anyOf", "boolean_schema", "const", "contains", "content", "default",
    "defs", "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum", "format",
    "if-then-else", "infinite-loop-detection", "items", "maxContains", "maxItems", "maxLength", "maxProperties",
    "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf",
    "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "ref", "required", "type",
    "uniqueItems"};

/// Groups left out, by "file: description", with why. Each uses something outside the
/// supported set; the test checks that compiling it fails, naming the keyword.
const std::map<std::string, std::string> excluded{
    {"anchor: Location-independent identifier with absolute URI",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"anchor: Location-independent identifier with base URI change in subschema",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"anchor: same $anchor with different base uri",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"anchor: invalid anchors",
     "a reference outside the document (the draft's metaschema by URL): no network, no bundled metaschema"},
    {"defs: validate definition against metaschema",
     "a reference outside the document (the draft's metaschema by URL): no network, no bundled metaschema"},
    {"not: collect annotations inside a 'not', even if collection is disabled",
     "unevaluatedProperties: not in the supported set"},
    {"ref: remote ref, containing refs itself",
     "a reference outside the document (the draft's metaschema by URL): no network, no bundled metaschema"},
    {"ref: Recursive references between schemas",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: ref creates new scope when adjacent to keywords",
     "unevaluatedProperties: not in the supported set"},
    {"ref: refs with relative uris and defs",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: relative refs with absolute uris and defs",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: $id must be resolved against nearest parent, not just immediate parent",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: order of evaluation: $id and $ref",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: order of evaluation: $id and $anchor and $ref",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: URN base URI with f-component",
     "a reference outside the document (the draft's metaschema by URL): no network, no bundled metaschema"},
    {"ref: URN ref with nested pointer ref",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: ref to if",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: ref to then",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: ref to else",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"},
    {"ref: ref with absolute-path-reference",
     "an embedded resource ($id inside the schema): bundle schemas are one resource each"}};
// clang-format on

json load(const std::string& file) {
  std::ifstream in(std::string(JSON_SCHEMA_SUITE) + "/" + file + ".json");
  EXPECT_TRUE(in) << file;
  return json::parse(in);
}

TEST(JsonSchemaSuite, EveryTestOfEverySupportedKeywordsFilePasses) {
  std::size_t passed = 0, groups = 0;
  for (const auto& file : files) {
    for (const auto& group : load(file)) {
      const auto name = file + ": " + group["description"].get<std::string>();
      if (excluded.count(name)) {
        auto refused = json_schema::compile(group["schema"]);
        EXPECT_FALSE(refused) << name << " is excluded but compiles: update the list";
        continue;
      }
      ++groups;
      auto schema = json_schema::compile(group["schema"]);
      if (!schema) {
        ADD_FAILURE() << name << " does not compile: " << schema.error();
        continue;
      }
      for (const auto& t : group["tests"]) {
        const bool got = schema->valid(t["data"]);
        if (got == t["valid"].get<bool>())
          ++passed;
        else
          ADD_FAILURE() << name << " / " << t["description"].get<std::string>() << ": expected " << t["valid"]
                        << ", data " << t["data"].dump();
      }
    }
  }
  std::printf("json schema suite: %zu groups, %zu tests passed, %zu groups excluded\n", groups, passed,
              excluded.size());
}

}  // namespace
}  // namespace engram::kg
