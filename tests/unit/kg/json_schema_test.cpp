// The validator's own errors, table-driven: a schema it cannot honour is refused naming the
// keyword and where it is; an invalid instance gets every reason with the instance's JSON
// pointer, the keyword and the schema's pointer.
#include "kg/bowtie.hpp"
#include "kg/json_schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace engram::kg {
namespace {

TEST(JsonSchema, SchemasItCannotHonourAreRefusedNamingTheKeywordAndPlace) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"properties": {"a": {"unevaluatedProperties": false}}})", "unevaluatedProperties at '/properties/a'"},
      {R"({"x-id-field": "id"})", "x-id-field at ''"},
      {R"({"$schema": "http://json-schema.org/draft-07/schema#"})", "only draft 2020-12"},
      {R"({"type": "text"})", "type at ''"},
      {R"({"pattern": "(unclosed"})", "pattern at ''"},
      {R"({"$ref": "#/$defs/missing"})", "'#/$defs/missing' points at nothing"},
      {R"({"$ref": "other.json"})", "outside this schema"},
      {R"({"minLength": -1})", "minLength at '': must be a non-negative integer"},
      {R"({"items": 5})", "schema at '/items': must be an object or a boolean"},
      {R"({"required": [1]})", "required at ''"},
      {R"({"$defs": {"a": {"$id": "http://x/y"}}})", "only the root schema may have an $id"},
  };
  for (const auto& [schema, says] : cases) {
    auto r = json_schema::compile(json::parse(schema));
    ASSERT_FALSE(r) << schema;
    EXPECT_NE(r.error().find(says), std::string::npos) << schema << " -> " << r.error();
  }
  // The bundles' annotations, when the caller allows them.
  compile_options bundles;
  bundles.extension = [](std::string_view k) { return k.starts_with("x-"); };
  EXPECT_TRUE(
      json_schema::compile(json::parse(R"({"x-id-field": "id", "properties": {"id": {"x-index": true}}})"), bundles));
}

TEST(JsonSchema, InvalidInstancesGetEveryReasonWithPointers) {
  auto schema = json_schema::compile(json::parse(R"({
    "type": "object", "required": ["id", "name"], "additionalProperties": false,
    "$defs": {"code": {"type": "string", "pattern": "^[A-Z]{2}$"}},
    "properties": {
      "id": {"type": "string", "minLength": 3},
      "name": {"type": "string", "maxLength": 5},
      "country": {"$ref": "#/$defs/code"},
      "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true, "maxItems": 3},
      "price": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01}}})"));
  ASSERT_TRUE(schema) << schema.error();
  EXPECT_TRUE(
      schema->validate(json::parse(R"({"id": "abc", "name": "Zoë", "country": "FR", "tags": ["a"], "price": 9.99})"))
          .empty());
  struct expect {
    const char* instance;
    const char* path;
    const char* keyword;
    const char* schema_path;
  };
  const expect cases[] = {
      {R"({"name": "x"})", "", "required", "/required"},
      {R"({"id": "ab", "name": "x"})", "/id", "minLength", "/properties/id/minLength"},
      {R"({"id": "abc", "name": "toolong"})", "/name", "maxLength", "/properties/name/maxLength"},
      {R"({"id": "abc", "name": "x", "country": "fr"})", "/country", "pattern", "/properties/country/$ref/pattern"},
      {R"({"id": "abc", "name": "x", "tags": ["a", "c"]})", "/tags/1", "enum", "/properties/tags/items/enum"},
      {R"({"id": "abc", "name": "x", "tags": ["a", "a"]})", "/tags", "uniqueItems", "/properties/tags/uniqueItems"},
      {R"({"id": "abc", "name": "x", "price": 0})", "/price", "exclusiveMinimum", "/properties/price/exclusiveMinimum"},
      {R"({"id": "abc", "name": "x", "colour": "red"})", "/colour", "false", "/additionalProperties/false"},
      {R"([1])", "", "type", "/type"},
  };
  for (const auto& c : cases) {
    auto errors = schema->validate(json::parse(c.instance));
    ASSERT_FALSE(errors.empty()) << c.instance;
    EXPECT_EQ(errors[0].instance_path, c.path) << c.instance;
    EXPECT_EQ(errors[0].keyword, c.keyword) << c.instance << ": " << errors[0].message;
    EXPECT_EQ(errors[0].schema_path, c.schema_path) << c.instance;
  }
  auto many = schema->validate(json::parse(R"({"id": 1, "name": 2, "extra": 3})"));
  EXPECT_EQ(many.size(), 3u);
  EXPECT_EQ(schema->validate(json::parse(R"({"id": 1, "name": 2, "extra": 3})"), 2).size(), 2u);
  EXPECT_TRUE(std::any_of(many.begin(), many.end(), [](const validation_error& e) {
    return e.instance_path == "/extra" && e.message == "'extra' is not a property this schema allows";
  }));
}

TEST(JsonSchema, ACountWrittenAsAHugeFloatIsTheLargestCount) {
  // 1e86 is a non-negative integer to JSON Schema; converting it to a size_t is undefined
  // behaviour (found by fuzz_json_schema under UBSan): it counts as the largest.
  auto schema = json_schema::compile(json::parse(R"({"type": "array", "minItems": 1e86, "maxItems": 2e300,
                                                     "items": {"type": "string", "maxLength": 1.5e19}})"));
  ASSERT_TRUE(schema) << schema.error();
  auto errors = schema->validate(json::parse(R"(["abc"])"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].keyword, "minItems");
  EXPECT_TRUE(json_schema::compile(json::parse(R"({"maxLength": 2.0})"))->valid("ab"));
  EXPECT_FALSE(json_schema::compile(json::parse(R"({"maxLength": 2.0})"))->valid("abc"));
}

TEST(JsonSchema, PatternsMatchInLinearTimeAndWhatRE2CannotReadIsRefusedWhenCompiled) {
  // (a?){28}a{28} against 28 a's: 2^28 paths for a backtracking engine (std::regex took
  // minutes on a pattern fuzz_json_schema found, one request's worth of DoS); RE2 answers at once.
  auto slow = json_schema::compile(json::parse(R"({"type": "string", "pattern": "^(a?){28}a{28}$"})"));
  ASSERT_TRUE(slow) << slow.error();
  EXPECT_TRUE(slow->valid(std::string(28, 'a')));
  EXPECT_FALSE(slow->valid(std::string(27, 'a') + "b"));
  // patternProperties too, and \uXXXX escapes (ECMAScript's, RE2's \x{XXXX}); unanchored.
  auto props = json_schema::compile(json::parse(
      R"({"patternProperties": {"^x-\\u00e9": {"type": "integer"}}, "properties": {"n": {"pattern": "b+"}}})"));
  ASSERT_TRUE(props) << props.error();
  EXPECT_TRUE(props->valid(json::parse(R"({"x-\u00e9t\u00e9": 1, "n": "abbc"})")));
  EXPECT_FALSE(props->valid(json::parse(R"({"x-\u00e9t\u00e9": "one"})")));
  EXPECT_FALSE(props->valid(json::parse(R"({"n": "ac"})")));
  // Lookahead and backreferences: refused when the schema is compiled, naming the keyword.
  for (const char* schema :
       {R"({"pattern": "^(?=a)a$"})", R"({"pattern": "(a)\\1"})", R"j({"patternProperties": {"(?!x)": true}})j"}) {
    auto r = json_schema::compile(json::parse(schema));
    ASSERT_FALSE(r) << schema;
    EXPECT_NE(r.error().find("is not a regular expression this validator reads"), std::string::npos) << r.error();
  }
}

TEST(Bowtie, TheHarnessSpeaksTheProtocol) {
  std::istringstream in(
      R"({"cmd": "start", "version": 1})"
      "\n"
      R"({"cmd": "dialect", "dialect": "https://json-schema.org/draft/2020-12/schema"})"
      "\n"
      R"({"cmd": "dialect", "dialect": "http://json-schema.org/draft-07/schema#"})"
      "\n"
      R"({"cmd": "run", "seq": 1, "case": {"description": "d", "schema": {"type": "integer", "minimum": 3},)"
      R"( "tests": [{"description": "a", "instance": 5}, {"description": "b", "instance": 2}, {"description": "c", "instance": "x"}]}})"
      "\n"
      R"({"cmd": "run", "seq": 2, "case": {"description": "d", "schema": {"unevaluatedItems": false}, "tests": [{"description": "a", "instance": []}]}})"
      "\n"
      R"({"cmd": "stop"})"
      "\n");
  std::ostringstream out;
  ASSERT_EQ(bowtie_harness(in, out), 0);
  std::istringstream lines(out.str());
  std::vector<json> replies;
  for (std::string line; std::getline(lines, line);)
    replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), 6u) << out.str();
  EXPECT_EQ(replies[0]["version"], 1);
  EXPECT_EQ(replies[0]["implementation"]["language"], "c++");
  EXPECT_EQ(replies[0]["implementation"]["dialects"], json({"https://json-schema.org/draft/2020-12/schema"}));
  EXPECT_EQ(replies[1], (json{{"ok", true}}));
  EXPECT_EQ(replies[2], (json{{"ok", false}}));
  EXPECT_EQ(replies[3], (json{{"seq", 1}, {"results", {{{"valid", true}}, {{"valid", false}}, {{"valid", false}}}}}));
  EXPECT_EQ(replies[4]["seq"], 2);
  EXPECT_EQ(replies[4]["skipped"], true);
  EXPECT_NE(replies[4]["message"].get<std::string>().find("unevaluatedItems"), std::string::npos);
  EXPECT_EQ(replies[5], json::object());

  std::istringstream early(R"({"cmd": "run", "seq": 1})"
                           "\n");
  std::ostringstream said;
  EXPECT_EQ(bowtie_harness(early, said), 1);
  EXPECT_NE(said.str().find("'start' must come first"), std::string::npos);
}

}  // namespace
}  // namespace engram::kg
