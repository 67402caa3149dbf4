// Knowledge bundles in the graph store (storage/bundles.cpp), over RocksDB and the memory
// backend: chunks are invisible until the last one, a new version replaces the old whole,
// filters read the index, tool names are checked, deletes remove every row, redelivery is a
// no-op, and a replay of the same records gives the same digest.
#include "storage/graph_store.hpp"
#include "schemas/tools.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace {

using namespace engram;
using json = nlohmann::json;

schemas::kg_type_spec type(const std::string& name, std::vector<std::string> indexed,
                           std::vector<std::string> expose = {"list", "get"},
                           std::map<std::string, std::string> refs = {}) {
  schemas::kg_type_spec t;
  t.name = name;
  t.id_field = "code";
  t.description = "The " + name + "s.";
  t.expose = std::move(expose);
  t.indexed = std::move(indexed);
  t.refs = std::move(refs);
  t.schema = json{{"type", "object"}, {"properties", {{"code", {{"type", "string"}}}}}}.dump();
  return t;
}

schemas::kg_item item(const std::string& type, const std::string& id, json fields) {
  fields["code"] = id;
  return {type, id, fields.dump()};
}

/// An apply of `items` in `n` chunks (items dealt round-robin).
std::vector<schemas::kg_command> apply_records(const std::string& org, const std::string& bundle,
                                               const std::string& apply_id, std::vector<schemas::kg_type_spec> types,
                                               std::vector<schemas::kg_item> items, std::uint32_t n,
                                               const std::string& version = "1.0.0") {
  std::vector<schemas::kg_command> out(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& c = out[i];
    c.event_id = "kg-" + apply_id + "-" + std::to_string(i);
    c.organization_id = org;
    c.issued_at = "2026-03-05T10:00:00.000Z";
    c.issued_at_ms = 1772704800000;
    c.op = schemas::kg_op::apply;
    c.bundle = bundle;
    c.apply_id = apply_id;
    c.chunk = i;
    c.chunks = n;
    if (i == 0) {
      c.version = version;
      c.types = types;
    }
  }
  for (std::size_t i = 0; i < items.size(); ++i)
    out[i % n].items.push_back(items[i]);
  return out;
}

class BundleStoreTest : public ::testing::TestWithParam<bool> {
protected:
  BundleStoreTest() {
    dir_ = std::filesystem::temp_directory_path() /
           ("engram-bundles-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(dir_);
    store_ = open(dir_);
  }
  ~BundleStoreTest() override {
    store_.reset();
    for (const auto& d : dirs_)
      std::filesystem::remove_all(d);
  }
  std::unique_ptr<storage::graph_store> open(const std::filesystem::path& d) {
    if (!GetParam())
      return storage::make_memory_graph_store(schemas::server_tool_names());
    dirs_.push_back(d);
    storage::open_options o;
    o.path = d.string();
    o.reserved_tool_names = schemas::server_tool_names();
    auto s = storage::open_graph_store(o);
    EXPECT_TRUE(s) << s.error();
    return std::move(*s);
  }
  storage::kg_result apply(storage::graph_store& s, const schemas::kg_command& c,
                           storage::apply_outcome expect = storage::apply_outcome::applied) {
    storage::kg_result r;
    storage::apply_outcome out{};
    EXPECT_EQ(s.apply_kg_command({"engram-log", 0, offset_++, "c"}, c, &r, &out), storage::errc::ok);
    EXPECT_EQ(out, expect);
    return r;
  }
  std::vector<std::string> ids(const std::string& org, const std::string& bundle, const std::string& t,
                               std::vector<std::pair<std::string, std::string>> filters = {}, std::size_t offset = 0,
                               std::size_t limit = 100) {
    return store_->kg_list(org, bundle, t, filters, offset, limit, false).ids;
  }

  static inline int counter_ = 0;
  std::int64_t offset_ = 0;
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> dirs_;
  std::unique_ptr<storage::graph_store> store_;
};

std::vector<schemas::kg_item> catalog() {
  return {item("category", "footwear", {{"name", "Footwear"}, {"tier", "primary"}, {"tags", {"outdoor", "sport"}}}),
          item("category", "bags", {{"name", "Bags"}, {"tier", "secondary"}, {"tags", {"travel"}}}),
          item("category", "hats", {{"name", "Hats"}, {"tier", "secondary"}, {"rank", 3}}),
          item("brand", "stride-co", {{"category", "footwear"}}),
          item("brand", "north-aurora", {{"category", "footwear"}}),
          item("brand", "packwell", {{"category", "bags"}})};
}

std::vector<schemas::kg_type_spec> catalog_types() {
  return {type("category", {"tier", "tags", "rank"}, {"list", "get", "list_ids"}),
          type("brand", {"category"}, {"list", "get"}, {{"category", "category"}})};
}

TEST_P(BundleStoreTest, ChunksStayInvisibleUntilTheLastThenTheVersionIsWhole) {
  auto recs = apply_records("acme", "shop", "a1", catalog_types(), catalog(), 3);
  auto r0 = apply(*store_, recs[0]);
  EXPECT_FALSE(r0.changed);
  EXPECT_EQ(json::parse(r0.json)["state"], "staged");
  apply(*store_, recs[2]);  // chunks may come in any order within the apply
  EXPECT_TRUE(store_->kg_bundles("acme").empty());
  EXPECT_TRUE(ids("acme", "shop", "category").empty());
  auto st = json::parse(*store_->kg_status("acme", "shop"));
  EXPECT_EQ(st["state"], "staged");
  EXPECT_EQ(st["chunksReceived"], 2);
  auto r1 = apply(*store_, recs[1]);
  EXPECT_TRUE(r1.changed);
  EXPECT_TRUE(r1.error.empty()) << r1.error;
  EXPECT_EQ(json::parse(r1.json)["state"], "applied");
  EXPECT_EQ(json::parse(r1.json)["entities"], 6);
  auto bundles = store_->kg_bundles("acme");
  ASSERT_EQ(bundles.size(), 1u);
  EXPECT_EQ(bundles[0].name, "shop");
  EXPECT_EQ(bundles[0].version, "1.0.0");
  EXPECT_EQ(bundles[0].counts.at("category"), 3u);
  EXPECT_EQ(bundles[0].counts.at("brand"), 3u);
  EXPECT_EQ(bundles[0].types, catalog_types());
  EXPECT_EQ(ids("acme", "shop", "category"), (std::vector<std::string>{"bags", "footwear", "hats"}));
  auto got = store_->kg_get("acme", "shop", "brand", "packwell");
  ASSERT_TRUE(got);
  EXPECT_EQ(json::parse(*got)["category"], "bags");
  EXPECT_FALSE(store_->kg_get("acme", "shop", "brand", "nope"));
  EXPECT_FALSE(store_->kg_get("acme", "shop", "category", "packwell"));  // ids are per type
}

TEST_P(BundleStoreTest, FiltersReadTheIndexIntersectAndPage) {
  for (auto& c : apply_records("acme", "shop", "a1", catalog_types(), catalog(), 1))
    apply(*store_, c);
  EXPECT_EQ(ids("acme", "shop", "category", {{"tier", "secondary"}}), (std::vector<std::string>{"bags", "hats"}));
  EXPECT_EQ(ids("acme", "shop", "category", {{"tags", "sport"}}),
            (std::vector<std::string>{"footwear"}));                                                // an array element
  EXPECT_EQ(ids("acme", "shop", "category", {{"rank", "3"}}), (std::vector<std::string>{"hats"}));  // a number as JSON
  EXPECT_EQ(ids("acme", "shop", "category", {{"tier", "secondary"}, {"tags", "travel"}}),
            (std::vector<std::string>{"bags"}));
  EXPECT_TRUE(ids("acme", "shop", "category", {{"tier", "primary"}, {"tags", "travel"}}).empty());
  EXPECT_TRUE(ids("acme", "shop", "category", {{"tier", "Secondary"}}).empty());  // codes, exactly
  EXPECT_EQ(ids("acme", "shop", "brand", {{"category", "footwear"}}),
            (std::vector<std::string>{"north-aurora", "stride-co"}));
  auto page = store_->kg_list("acme", "shop", "brand", {{"category", "footwear"}}, 1, 1, true);
  EXPECT_EQ(page.total, 2u);
  ASSERT_EQ(page.ids, std::vector<std::string>{"stride-co"});
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(json::parse(page.items[0])["code"], "stride-co");
  auto all = store_->kg_list("acme", "shop", "category", {}, 2, 50, true);
  EXPECT_EQ(all.total, 3u);
  EXPECT_EQ(all.ids, std::vector<std::string>{"hats"});
  EXPECT_EQ(store_->kg_list("acme", "shop", "category", {}, 5, 50, false).total, 3u);  // past the end: total still
}

TEST_P(BundleStoreTest, ANewVersionReplacesTheOldOneWithNoRowLeftBehind) {
  for (auto& c : apply_records("acme", "shop", "a1", catalog_types(), catalog(), 2))
    apply(*store_, c);
  auto v2 = catalog();
  v2.erase(v2.begin());                                     // footwear gone
  v2[0] = item("category", "bags", {{"tier", "primary"}});  // bags moved to primary
  for (auto& c : apply_records("acme", "shop", "a2", catalog_types(), v2, 2, "2.0.0"))
    apply(*store_, c);
  EXPECT_EQ(store_->kg_bundles("acme").at(0).version, "2.0.0");
  EXPECT_EQ(ids("acme", "shop", "category"), (std::vector<std::string>{"bags", "hats"}));
  EXPECT_EQ(ids("acme", "shop", "category", {{"tier", "primary"}}), std::vector<std::string>{"bags"});
  EXPECT_EQ(ids("acme", "shop", "category", {{"tier", "secondary"}}), std::vector<std::string>{"hats"});
  EXPECT_TRUE(ids("acme", "shop", "category", {{"tags", "sport"}}).empty());
  // The same store state as applying version 2 alone.
  auto fresh = open(dir_.string() + "-fresh");
  for (auto& c : apply_records("acme", "shop", "a2", catalog_types(), v2, 2, "2.0.0"))
    apply(*fresh, c);
  EXPECT_EQ(store_->kg_bundles("acme").at(0).counts, fresh->kg_bundles("acme").at(0).counts);
  for (const auto& t : {"category", "brand"})
    EXPECT_EQ(store_->kg_list("acme", "shop", t, {}, 0, 100, true).items,
              fresh->kg_list("acme", "shop", t, {}, 0, 100, true).items);
}

TEST_P(BundleStoreTest, AToolNameTakenByAnotherBundleRefusesTheWholeApply) {
  for (auto& c : apply_records("acme", "shop", "a1", catalog_types(), catalog(), 1))
    apply(*store_, c);
  auto recs = apply_records("acme", "outlet", "b1", {type("brand", {})}, {item("brand", "x", {})}, 2);
  apply(*store_, recs[0]);
  auto r = apply(*store_, recs[1]);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.error,
            "tool_name_collision_in_tenant: list_brand is already exposed by bundle 'shop' of this organisation");
  auto st = json::parse(*store_->kg_status("acme", "outlet"));
  EXPECT_EQ(st["state"], "rejected");
  EXPECT_EQ(st["error"], r.error);
  EXPECT_EQ(store_->kg_bundles("acme").size(), 1u);
  EXPECT_TRUE(ids("acme", "outlet", "brand").empty());
  // The server's own tools are taken too; another organisation may use the same names.
  auto own = apply(*store_, apply_records("acme", "kb", "c1", {type("knowledge", {})}, {}, 1)[0]);
  EXPECT_EQ(own.error, "tool_name_collision_in_tenant: get_knowledge is a tool of the server itself");
  for (auto& c : apply_records("globex", "outlet", "b2", {type("brand", {})}, {item("brand", "x", {})}, 1))
    EXPECT_TRUE(apply(*store_, c).error.empty());
  EXPECT_EQ(ids("globex", "outlet", "brand"), std::vector<std::string>{"x"});
  EXPECT_TRUE(ids("acme", "outlet", "brand").empty());  // isolation: keys start with the organisation
  // The same bundle may keep its own names in a new version.
  for (auto& c : apply_records("acme", "shop", "a2", catalog_types(), catalog(), 1, "1.1.0"))
    EXPECT_TRUE(apply(*store_, c).error.empty());
}

TEST_P(BundleStoreTest, DeleteRemovesEveryRowAndAnAbandonedApplyIsDroppedByTheNext) {
  auto half = apply_records("acme", "shop", "a0", catalog_types(), catalog(), 2);
  apply(*store_, half[0]);  // an apply whose writer died after its first chunk
  for (auto& c : apply_records("acme", "shop", "a1", catalog_types(), catalog(), 2))
    apply(*store_, c);
  const auto before_delete = store_->digest();
  schemas::kg_command del;
  del.event_id = "kg-del-1";
  del.organization_id = "acme";
  del.issued_at = "2026-03-06T10:00:00.000Z";
  del.issued_at_ms = 1772791200000;
  del.op = schemas::kg_op::remove;
  del.bundle = "shop";
  auto r = apply(*store_, del);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(json::parse(r.json)["state"], "deleted");
  EXPECT_TRUE(store_->kg_bundles("acme").empty());
  EXPECT_TRUE(ids("acme", "shop", "brand", {{"category", "footwear"}}).empty());
  EXPECT_NE(store_->digest(), before_delete);
  apply(*store_, del, storage::apply_outcome::duplicate);
  del.event_id = "kg-del-2";
  EXPECT_EQ(json::parse(apply(*store_, del).json)["state"], "absent");
}

TEST_P(BundleStoreTest, RedeliveredChunksAreNoOpsAndAReplayGivesTheSameDigest) {
  auto recs = apply_records("acme", "shop", "a1", catalog_types(), catalog(), 3);
  std::vector<schemas::kg_command> log{recs[0], recs[1], recs[1], recs[0], recs[2], recs[2]};
  for (std::size_t i = 0; i < log.size(); ++i) {
    const bool first =
        std::find(log.begin(), log.begin() + static_cast<long>(i), log[i]) == log.begin() + static_cast<long>(i);
    apply(*store_, log[i], first ? storage::apply_outcome::applied : storage::apply_outcome::duplicate);
  }
  EXPECT_EQ(store_->kg_bundles("acme").at(0).counts.at("category"), 3u);
  auto replayed = open(dir_.string() + "-replay");
  for (const auto& c : recs)
    apply(*replayed, c);
  EXPECT_EQ(store_->digest(), replayed->digest());
}

INSTANTIATE_TEST_SUITE_P(Backends, BundleStoreTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "RocksDB" : "Memory"; });

}  // namespace
