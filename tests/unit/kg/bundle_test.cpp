// Loading a bundle from disk: the seed's catalog shape (categories, brands with x-ref chains,
// a brand -> brand self reference and a category <-> brand cycle) loads, with derived counts
// and a cycle warning; each way a bundle can be wrong is reported with its file, entity,
// pointer and reason, table-driven, one mutation of the good bundle per row.
#include "kg/bundle.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

namespace engram::kg {
namespace {

namespace fs = std::filesystem;

const char* manifest = R"(name: shop-kg
version: 1.0.0
description: "A small catalog."
schemas:
  - schemas/category.schema.json
  - schemas/brand.schema.json
entities:
  - type: category
    file: entities/categories.yaml
  - type: brand
    file: entities/brands.json
)";

json category_schema() {
  return json::parse(R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "category", "type": "object",
    "x-id-field": "code", "x-tool-expose": ["list", "get", "list_ids"], "x-tool-description": "Catalog categories.",
    "required": ["code", "name", "tier"], "additionalProperties": false,
    "properties": {
      "code": {"type": "string", "pattern": "^[a-z][a-z0-9_-]{1,30}$", "x-index": true},
      "name": {"type": "string", "minLength": 3, "maxLength": 60},
      "tier": {"type": "string", "enum": ["primary", "secondary"], "x-index": true},
      "flagship": {"type": "string", "x-ref": "brand"},
      "brand_count": {"type": "integer", "minimum": 0, "x-derived": true}}})");
}

json brand_schema() {
  return json::parse(R"({
    "type": "object", "x-id-field": "code", "required": ["code", "category"],
    "properties": {
      "code": {"type": "string"},
      "category": {"type": "string", "x-ref": "category", "x-index": true},
      "parent_brand": {"type": "string", "x-ref": "brand", "x-ref-field": "code"}}})");
}

const char* categories = R"(- code: footwear
  name: Footwear
  tier: primary
  flagship: north-aurora
- code: outdoor
  name: "Outdoor gear"
  tier: secondary
)";

json brands() {
  return json::parse(R"([{"code": "north-aurora", "category": "footwear"},
                          {"code": "stride-co", "category": "footwear", "parent_brand": "north-aurora"},
                          {"code": "peak", "category": "outdoor"}])");
}

class Bundle : public ::testing::Test {
public:  // the table's rows mutate the fixture
  Bundle() : dir_(fs::temp_directory_path() / ("engram-bundle-" + std::to_string(::getpid()))) { reset(); }
  ~Bundle() override { fs::remove_all(dir_); }
  void reset() {
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "schemas");
    fs::create_directories(dir_ / "entities");
    write("manifest.yaml", manifest);
    write("schemas/category.schema.json", category_schema().dump(2));
    write("schemas/brand.schema.json", brand_schema().dump(2));
    write("entities/categories.yaml", categories);
    write("entities/brands.json", brands().dump());
  }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  fs::path dir_;
};

TEST_F(Bundle, TheCatalogLoadsWithDerivedCountsAndACycleWarning) {
  auto loaded = load_bundle(dir_);
  ASSERT_TRUE(std::holds_alternative<bundle>(loaded)) << std::get<std::vector<bundle_error>>(loaded)[0].to_string();
  const auto& b = std::get<bundle>(loaded);
  EXPECT_EQ(b.name, "shop-kg");
  EXPECT_EQ(b.version, "1.0.0");
  ASSERT_EQ(b.types.size(), 2u);
  const auto& c = b.types.at("category");
  EXPECT_EQ(c.id_field, "code");
  EXPECT_EQ(c.entities.size(), 2u);
  EXPECT_EQ(c.expose, (std::vector<std::string>{"list", "get", "list_ids"}));
  EXPECT_EQ(c.description, "Catalog categories.");
  EXPECT_EQ(c.indexed.size(), 2u);
  EXPECT_EQ(b.types.at("brand").expose, (std::vector<std::string>{"list", "get"}));
  EXPECT_EQ(derived_values(b, "category", c.entities[0]), (json{{"brand_count", 2}}));
  EXPECT_EQ(derived_values(b, "category", c.entities[1]), (json{{"brand_count", 1}}));
  ASSERT_EQ(b.warnings.size(), 2u);  // category <-> brand, and brand -> brand
  EXPECT_NE(std::find(b.warnings.begin(), b.warnings.end(), "cycle between types: brand -> category -> brand"),
            b.warnings.end());
  EXPECT_NE(std::find(b.warnings.begin(), b.warnings.end(), "cycle between types: brand -> brand"), b.warnings.end());
}

TEST_F(Bundle, EveryProblemIsReportedWithItsPlace) {
  struct row {
    const char* what;
    std::function<void(Bundle&)> mutate;
    const char* file;
    long entity;
    const char* pointer;
    const char* says;
  };
  // clang-format off
  const std::vector<row> rows{
      {"an unknown manifest key", [](Bundle& t) { t.write("manifest.yaml", std::string(manifest) + "owner: me\n"); },
       "manifest.yaml", -1, "/owner", "unknown key"},
      {"a bad bundle name", [](Bundle& t) { t.write("manifest.yaml", "name: Shop KG\n" + std::string(manifest).substr(13)); },
       "manifest.yaml", -1, "/name", "must be lowercase"},
      {"a missing entity file", [](Bundle& t) { fs::remove(t.dir_ / "entities/brands.json"); },
       "entities/brands.json", -1, "", "cannot read the file"},
      {"a type with no schema",
       [](Bundle& t) { t.write("manifest.yaml", std::string(manifest) + "  - type: shop\n    file: entities/brands.json\n"); },
       "manifest.yaml", -1, "/entities/2/type", "type 'shop' has no schema"},
      {"an unknown annotation",
       [](Bundle& t) {
         auto s = brand_schema();
         s["properties"]["code"]["x-unique"] = true;
         t.write("schemas/brand.schema.json", s.dump());
       },
       "schemas/brand.schema.json", -1, "/properties/code/x-unique", "known: x-id-field, x-tool-expose"},
      {"an unsupported keyword",
       [](Bundle& t) {
         auto s = brand_schema();
         s["unevaluatedProperties"] = false;
         t.write("schemas/brand.schema.json", s.dump());
       },
       "schemas/brand.schema.json", -1, "", "unevaluatedProperties at ''"},
      // Annotations of another type are refused, not thrown (the loader once ended engramctl).
      {"a tool description that is not a string",
       [](Bundle& t) {
         auto s = category_schema();
         s["x-tool-description"] = 7;
         t.write("schemas/category.schema.json", s.dump());
       },
       "schemas/category.schema.json", -1, "/x-tool-description", "must be a string"},
      {"a reference field that is not a string",
       [](Bundle& t) {
         auto s = brand_schema();
         s["properties"]["parent_brand"]["x-ref-field"] = 1;
         t.write("schemas/brand.schema.json", s.dump());
       },
       "schemas/brand.schema.json", -1, "/properties/parent_brand/x-ref-field", "must name a field"},
      {"no id field",
       [](Bundle& t) {
         auto s = brand_schema();
         s.erase("x-id-field");
         t.write("schemas/brand.schema.json", s.dump());
       },
       "schemas/brand.schema.json", -1, "/x-id-field", "required"},
      {"an instance the schema refuses",
       [](Bundle& t) { t.write("entities/categories.yaml", std::string(categories) + "- code: x\n  name: Xy\n  tier: top\n"); },
       "entities/categories.yaml", 2, "/code", "pattern"},
      {"a duplicate id",
       [](Bundle& t) {
         auto b = brands();
         b.push_back({{"code", "peak"}, {"category", "outdoor"}});
         t.write("entities/brands.json", b.dump());
       },
       "entities/brands.json", 3, "/code", "id 'peak' appears twice"},
      {"a dangling reference",
       [](Bundle& t) {
         auto b = brands();
         b[2]["category"] = "garden";
         t.write("entities/brands.json", b.dump());
       },
       "entities/brands.json", 2, "/category", "refers to category 'garden'"},
      {"a derived value imported",
       [](Bundle& t) { t.write("entities/categories.yaml", std::string(categories) + "  brand_count: 4\n"); },
       "entities/categories.yaml", 1, "/brand_count", "is derived"},
      {"a derived property no rule fits",
       [](Bundle& t) {
         auto s = category_schema();
         s["properties"]["score"] = {{"type", "number"}, {"x-derived", true}};
         // clang-format on
         t.write("schemas/category.schema.json", s.dump());
       },
       "schemas/category.schema.json", -1, "/properties/score/x-derived", "fits no derivation"},
      {"a reference to a type outside the bundle",
       [](Bundle& t) {
         auto s = brand_schema();
         s["properties"]["maker"] = {{"type", "string"}, {"x-ref", "company"}};
         t.write("schemas/brand.schema.json", s.dump());
       },
       "schemas/brand.schema.json", -1, "/properties/maker/x-ref", "type 'company' is not in this bundle"},
      {"bad YAML", [](Bundle& t) { t.write("entities/categories.yaml", "- code: [unclosed\n"); },
       "entities/categories.yaml", -1, "", "not valid YAML"},
  };
  for (const auto& r : rows) {
    reset();
    r.mutate(*this);
    auto loaded = load_bundle(dir_);
    ASSERT_TRUE(std::holds_alternative<std::vector<bundle_error>>(loaded)) << r.what;
    const auto& errors = std::get<std::vector<bundle_error>>(loaded);
    auto hit = std::find_if(errors.begin(), errors.end(), [&](const bundle_error& e) {
      return e.file == r.file && e.entity == r.entity && e.pointer == r.pointer &&
             e.reason.find(r.says) != std::string::npos;
    });
    std::string all;
    for (const auto& e : errors)
      all += "\n  " + e.to_string();
    EXPECT_NE(hit, errors.end()) << r.what << ":" << all;
    // An entity with an id is named by it, as a person knows it.
    if (hit != errors.end() && std::string(r.what) == "a dangling reference") {
      EXPECT_EQ(hit->entity_id, brands()[2]["code"].get<std::string>());
      EXPECT_EQ(hit->to_string(), "entities/brands.json entity '" + hit->entity_id +
                                      "' (#2) /category: refers to category 'garden', which the bundle does not have");
    }
  }
}

}  // namespace
}  // namespace engram::kg
