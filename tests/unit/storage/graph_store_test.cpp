#include "storage/graph_store.hpp"
#include "storage/internal/graph_store_impl.hpp"
#include "storage/internal/snapshot_file.hpp"
#include "knowledge/markers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

namespace {

using namespace engram;
using json = nlohmann::json;

schemas::inbound_message message(const std::string& org, const std::string& id, const std::string& thread = "thr-1") {
  schemas::inbound_message m;
  m.event_id = id;
  m.organization_id = org;
  m.thread_id = thread;
  m.sent_at = "2026-03-05T10:00:00Z";
  m.sent_at_ms = 1772704800000;
  m.from = {"Sarah Lee", "Sarah@Acme.example", "c-17"};
  m.to = {{"Bob", "bob@ourco.example", ""}};
  m.cc = {{"", "sarah@acme.example", ""}};  // the sender again, differently cased
  m.subject = "Trial extension";
  m.body = "We extend the trial to March 20.";
  m.contact_ids = {"c-17"};
  return m;
}

class GraphStoreTest : public ::testing::Test {
protected:
  GraphStoreTest() {
    dir_ = std::filesystem::temp_directory_path() / ("engram-store-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    reopen();
  }
  ~GraphStoreTest() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
    for (auto& d : extra_)
      std::filesystem::remove_all(d);
  }

  void reopen() {
    store_.reset();
    auto opened = storage::open_graph_store({dir_.string()});
    ASSERT_TRUE(opened) << opened.error();
    store_ = std::move(*opened);
  }

  /// The threads whose by_thread rows list entry `id` of acme.
  std::set<std::string> thread_rows_of(const std::string& id) {
    std::set<std::string> out;
    std::string family;
    store_->visit_logical([&](std::string_view f) { family = f; },
                          [&](std::string_view k, std::string_view) {
                            // acme \0 thread \0 "entry" \0 id
                            const std::string tail = std::string(1, '\0') + "entry" + '\0' + id;
                            if (family == "by_thread" && k.ends_with(tail))
                              out.emplace(k.substr(5, k.size() - tail.size() - 5));
                          },
                          "acme");
    return out;
  }

  std::unique_ptr<storage::graph_store> other_store(const std::string& suffix) {
    auto d = dir_.string() + "-" + suffix;
    std::filesystem::remove_all(d);
    extra_.push_back(d);
    auto s = storage::open_graph_store({d});
    EXPECT_TRUE(s) << s.error();
    return s ? std::move(*s) : nullptr;
  }

  static storage::apply_outcome apply(storage::graph_store& s, const schemas::inbound_message* m, std::int64_t offset,
                                      std::int32_t partition = 0) {
    storage::apply_outcome out{};
    auto e = s.apply({"engram-log", partition, offset, "cluster-a"}, m, &out);
    EXPECT_EQ(e, storage::errc::ok);
    return out;
  }

  std::filesystem::path dir_;
  std::vector<std::string> extra_;
  std::unique_ptr<storage::graph_store> store_;
};

TEST_F(GraphStoreTest, AppliedEventWritesMessageContactsThreadCountersAndOffsetTogether) {
  auto m = message("acme", "evt-1");
  EXPECT_EQ(apply(*store_, &m, 41), storage::apply_outcome::applied);

  auto msg = store_->get_message("acme", "evt-1");
  ASSERT_TRUE(msg);
  EXPECT_EQ(json::parse(*msg)["body"], "We extend the trial to March 20.");

  auto contact = store_->get_contact("acme", "sarah@acme.example");
  ASSERT_TRUE(contact);
  auto c = json::parse(*contact);
  EXPECT_EQ(c["name"], "Sarah Lee");
  EXPECT_EQ(c["contactId"], "c-17");
  EXPECT_EQ(c["address"], "sarah@acme.example");
  EXPECT_EQ(c["messages"], 1);  // from and cc of one message count once

  EXPECT_EQ(store_->thread_messages("acme", "thr-1"), std::vector<std::string>{"evt-1"});
  auto offsets = store_->offsets("engram-log");
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0].next_offset, 42);
  EXPECT_EQ(offsets[0].cluster_id, "cluster-a");
  auto stats = store_->stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].events, 1u);
  EXPECT_EQ(stats[0].contacts, 2u);  // Sarah and Bob
}

TEST_F(GraphStoreTest, RedeliveredEventIsANoOpBeyondTheOffset) {
  auto m = message("acme", "evt-1");
  apply(*store_, &m, 0);
  auto before = store_->digest();
  auto changed = m;
  changed.body = "a different body under the same eventId";
  EXPECT_EQ(apply(*store_, &changed, 7), storage::apply_outcome::duplicate);
  EXPECT_EQ(store_->digest(), before);
  EXPECT_EQ(store_->stats()[0].events, 1u);
  EXPECT_EQ(store_->offsets("engram-log")[0].next_offset, 8);
  EXPECT_EQ(store_->redelivery_counts().first, 1u);
  auto msg = store_->get_message("acme", "evt-1");
  ASSERT_TRUE(msg);
  EXPECT_EQ(json::parse(*msg)["body"], "We extend the trial to March 20.");
}

// storage.memory_mb: the memtables of every column family are charged to the one block cache
// (RocksDB's write buffer manager), so the cache's usage includes them as they grow.
TEST_F(GraphStoreTest, TheMemtablesAreChargedToTheOneBlockCache) {
  store_.reset();
  storage::open_options o;
  o.path = dir_.string();
  o.memory_mb = 8;
  auto opened = storage::open_graph_store(o);
  ASSERT_TRUE(opened) << opened.error();
  store_ = std::move(*opened);
  const auto before = store_->engine_stats();
  for (int i = 0; i < 200; ++i) {
    auto m = message("acme", "evt-" + std::to_string(i), "thr-" + std::to_string(i % 7));
    m.body = std::string(4000, static_cast<char>('a' + i % 26));
    apply(*store_, &m, i);
  }
  const auto after = store_->engine_stats();
  EXPECT_GT(after.at("memtable_bytes"), before.at("memtable_bytes") + (512u << 10)) << "200 messages of 4 KB";
  // The cache reserves in steps of 256 KiB as the memtables grow.
  EXPECT_GE(after.at("block_cache_bytes") + (1u << 20), after.at("memtable_bytes"));
  EXPECT_GT(after.at("block_cache_bytes"), 0u);
}

/// Polls the store's engine figures until `done` holds of them; false after a minute.
template <class Done>
bool engine_reaches(const storage::graph_store& s, Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < until) {
    if (done(s.engine_stats()))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST_F(GraphStoreTest, DeferredCompactionsWaitForTheirStartAndLoseNothing) {
  store_.reset();
  storage::open_options o;
  o.path = dir_.string();
  o.memory_mb = 8;  // memtables of 1 MiB: the messages below are flushed into more files than
                    // a compaction of the first level waits for (eight)
  o.defer_compactions = true;
  auto opened = storage::open_graph_store(o);
  ASSERT_TRUE(opened) << opened.error();
  store_ = std::move(*opened);
  for (int i = 0; i < 3000; ++i) {
    auto m = message("acme", "evt-" + std::to_string(i), "thr-" + std::to_string(i % 7));
    m.body = std::string(4000, static_cast<char>('a' + i % 26));
    apply(*store_, &m, i);
  }
  // Enough files for a compaction once the flushes end; none runs before the start.
  ASSERT_TRUE(engine_reaches(*store_, [](const auto& st) { return st.at("pending_compaction_bytes") > 0; }));
  EXPECT_EQ(store_->engine_stats().at("running_compactions"), 0u);
  EXPECT_GT(store_->engine_stats().at("pending_compaction_bytes"), 0u);
  const auto digest = store_->digest();
  ASSERT_EQ(store_->start_compactions(), storage::errc::ok);
  EXPECT_TRUE(engine_reaches(*store_, [](const auto& st) { return st.at("pending_compaction_bytes") == 0; }))
      << "compactions started";
  EXPECT_EQ(store_->start_compactions(), storage::errc::ok) << "a second start is no error";
  EXPECT_EQ(store_->digest(), digest);
  reopen();  // opened as tools open it: compactions start with the open
  EXPECT_EQ(store_->digest(), digest);
}

TEST_F(GraphStoreTest, EverythingSurvivesReopen) {
  auto m1 = message("acme", "evt-1");
  auto m2 = message("acme", "evt-2", "thr-2");
  apply(*store_, &m1, 0);
  apply(*store_, &m2, 1, 3);
  auto digest = store_->digest();
  reopen();
  EXPECT_EQ(store_->digest(), digest);
  EXPECT_EQ(store_->stats()[0].events, 2u);
  EXPECT_EQ(store_->offsets("engram-log")[3].next_offset, 2);
  EXPECT_EQ(apply(*store_, &m2, 2, 3), storage::apply_outcome::duplicate);
}

TEST_F(GraphStoreTest, AnAcceptedGapIsRecordedAndMovesTheOffsetOnlyWhenAsked) {
  auto m1 = message("acme", "evt-1");
  apply(*store_, &m1, 0, 2);
  const auto digest = store_->digest();
  // engram-log: the stored offset moves past the gap in the same batch.
  ASSERT_EQ(store_->record_gap({"engram-log", 2, 1, 463}, /*advance=*/true, "cluster-a"), storage::errc::ok);
  // inbound-messages (the sequencer's): recorded only.
  ASSERT_EQ(store_->record_gap({"inbound-messages", 0, 10, 20}, /*advance=*/false, {}), storage::errc::ok);
  EXPECT_EQ(store_->record_gap({"engram-log", 1, 5, 5}, true, "cluster-a"), storage::errc::invalid_argument);
  reopen();
  auto offsets = store_->offsets("engram-log");
  EXPECT_EQ(offsets[2].next_offset, 463);
  EXPECT_EQ(offsets[2].cluster_id, "cluster-a");
  EXPECT_TRUE(store_->offsets("inbound-messages").empty());
  auto gaps = store_->gaps();
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].topic, "engram-log");
  EXPECT_EQ(gaps[0].partition, 2);
  EXPECT_EQ(gaps[0].from, 1);
  EXPECT_EQ(gaps[0].to, 463);
  EXPECT_EQ(gaps[1].topic, "inbound-messages");
  EXPECT_EQ(gaps[1].from, 10);
  EXPECT_EQ(gaps[1].to, 20);
  // Physical, like the offsets: the digest of the knowledge is unchanged.
  EXPECT_EQ(store_->digest(), digest);
}

TEST_F(GraphStoreTest, UndecodableRecordOnlyAdvancesTheOffset) {
  auto before = store_->digest();
  EXPECT_EQ(apply(*store_, nullptr, 5), storage::apply_outcome::skipped);
  EXPECT_EQ(store_->digest(), before);
  EXPECT_EQ(store_->offsets("engram-log")[0].next_offset, 6);
  EXPECT_EQ(store_->redelivery_counts().second, 1u);
}

TEST_F(GraphStoreTest, ContactKeepsFirstNameAndCollectsAliases) {
  auto m1 = message("acme", "evt-1");
  auto m2 = message("acme", "evt-2");
  m2.from.name = "S. Lee";
  apply(*store_, &m1, 0);
  apply(*store_, &m2, 1);
  auto contact = store_->get_contact("acme", "SARAH@acme.example");
  ASSERT_TRUE(contact);
  auto c = json::parse(*contact);
  EXPECT_EQ(c["name"], "Sarah Lee");
  EXPECT_EQ(c["aliases"], json::array({"S. Lee"}));
  EXPECT_EQ(c["messages"], 2);
  EXPECT_EQ(store_->stats()[0].contacts, 2u);
}

TEST_F(GraphStoreTest, OrganisationsNeverShareData) {
  auto a = message("acme", "evt-1");
  auto b = message("northwind", "evt-1");  // same eventId, other tenant: a different event
  EXPECT_EQ(apply(*store_, &a, 0), storage::apply_outcome::applied);
  EXPECT_EQ(apply(*store_, &b, 1), storage::apply_outcome::applied);
  auto stats = store_->stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].organization_id, "acme");
  EXPECT_EQ(stats[1].organization_id, "northwind");
  auto out = store_->get_message("globex", "evt-1");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error(), storage::errc::not_found);
}

/// One event with one fact whose stemmed words are `words`; returns the entry's id.
std::string apply_words(storage::graph_store& s, const std::string& org, std::int64_t offset,
                        const std::string& words) {
  auto m = message(org, "evt-" + std::to_string(offset));
  schemas::extraction x;
  x.entries.emplace_back();
  x.entries[0].title = words;
  x.entries[0].content = words;
  x.entries[0].confidence = 0.8;
  x.entries[0].sig.words = words;
  storage::apply_outcome out{};
  EXPECT_EQ(s.apply({"engram-log", 0, offset, "c"}, &m, &x, nullptr, &out), storage::errc::ok);
  return schemas::entry_id(org, m.event_id, 0);
}

/// Forgets one entry of acme by a command at `offset`; the command's error, empty when none.
std::string forget_entry(storage::graph_store& s, const std::string& id, std::int64_t offset) {
  schemas::knowledge_command forget;
  forget.event_id = "forget-" + id;
  forget.organization_id = "acme";
  forget.op = schemas::command_op::forget;
  forget.what = "entry";
  forget.id = id;
  storage::command_result cr;
  storage::apply_outcome out{};
  EXPECT_EQ(s.apply_command({"engram-log", 0, offset, "c"}, forget, &cr, &out), storage::errc::ok);
  return cr.error;
}

TEST_F(GraphStoreTest, ASlotAndATitleListTheirNewestEntriesFirstAndForgetRemovedOnes) {
  // Applied out of time order; rows are read newest first, by the instant (an offset counts).
  auto apply_slot = [&](std::int64_t offset, const std::string& org, const std::string& sent_at,
                        const std::string& slot, const std::string& amount) {
    auto m = message(org, "evt-" + std::to_string(offset));
    m.sent_at = sent_at;
    schemas::extraction x;
    x.entries.emplace_back();
    x.entries[0].title = x.entries[0].content = "The budget of Project Falcon is " + amount;
    x.entries[0].subject = "Project Falcon";
    x.entries[0].slot = slot;
    x.entries[0].sig.key = "budget project falcon";
    x.entries[0].sig.amounts = {amount};
    x.entries[0].confidence = 0.8;
    storage::apply_outcome out{};
    EXPECT_EQ(store_->apply({"engram-log", 0, offset, "c"}, &m, &x, nullptr, &out), storage::errc::ok);
    return schemas::entry_id(org, m.event_id, 0);
  };
  const auto march = apply_slot(1, "acme", "2026-03-05T10:00:00Z", "budget", "$2M");
  const auto may = apply_slot(2, "acme", "2026-05-01T10:00:00Z", "budget", "$2M");
  const auto april = apply_slot(3, "acme", "2026-04-01T10:00:00Z", "budget", "$2M");
  // 03:00 UTC on May 1: before `may`, though its text sorts after it.
  const auto tokyo = apply_slot(4, "acme", "2026-05-01T12:00:00+09:00", "budget", "$2M");
  const auto june = apply_slot(5, "acme", "2026-06-01T10:00:00Z", "budget_owner", "$3M");  // another slot and value
  apply_slot(6, "northwind", "2026-06-01T10:00:00Z", "budget", "$2M");                     // another organisation
  const auto subject = schemas::normal_form("Project Falcon");
  using ids = std::vector<std::string>;
  EXPECT_EQ(store_->entries_with_slot("acme", subject, "budget", 10), (ids{may, tokyo, april, march}));
  EXPECT_EQ(store_->entries_with_slot("acme", subject, "budget", 2), (ids{may, tokyo}));
  EXPECT_TRUE(store_->entries_with_slot("acme", subject, "deadline", 10).empty());
  // A title lists only the entries with the values key asked for.
  schemas::signature two, three;
  two.amounts = {"$2M"};
  three.amounts = {"$3M"};
  const auto values_2m = knowledge::values_key(true, "The budget of Project Falcon is $2M", two);
  const auto values_3m = knowledge::values_key(true, "The budget of Project Falcon is $3M", three);
  auto titled = [&](std::uint64_t values, std::size_t limit) {
    return store_->entries_with_title("acme", schemas::entry_type::fact, "budget project falcon", values, limit);
  };
  EXPECT_EQ(titled(values_2m, 10), (ids{may, tokyo, april, march}));
  EXPECT_EQ(titled(values_2m, 2), (ids{may, tokyo}));
  EXPECT_EQ(titled(values_3m, 10), (ids{june}));

  std::int64_t offset = 7;
  for (const auto& id : {april, tokyo})
    ASSERT_EQ(forget_entry(*store_, id, offset++), "");
  EXPECT_EQ(store_->entries_with_slot("acme", subject, "budget", 10), (ids{may, march}));
  EXPECT_EQ(titled(values_2m, 10), (ids{may, march}));
  EXPECT_EQ(titled(values_3m, 10), (ids{june}));
}

/// "The budget of Project Falcon is <amount>" of `event` (its entries in order), with what
/// dedup and contradiction decided for each.
struct budget_event {
  schemas::inbound_message m;
  schemas::extraction x;
  std::vector<schemas::resolution> r;
  budget_event(const std::string& event, const std::string& sent_at) : m(message("acme", event)) {
    m.sent_at = sent_at;
  }
  std::string add(const std::string& amount, std::vector<std::string> supersedes = {}) {
    auto& en = x.entries.emplace_back();
    en.title = en.content = "The budget of Project Falcon is " + amount;
    en.subject = "Project Falcon";
    en.slot = "budget";
    en.sig.key = "budget project falcon";
    en.sig.amounts = {amount};
    en.confidence = 0.8;
    auto& res = r.emplace_back();
    for (const auto& old : supersedes) {
      res.outcome = schemas::save_outcome::superseded;
      res.relations.push_back({schemas::relation_type::supersedes, old, "same source restates the budget"});
      res.superseded.push_back(old);
    }
    return schemas::entry_id("acme", m.event_id, x.entries.size() - 1);
  }
};

TEST_F(GraphStoreTest, AnEntryMergedIntoManyTimesKeepsItsFirstAndLatestSourcesAndTheRestInRowsOfTheirOwn) {
  // 40 messages say the same; the 39 after the first are merged into its entry.
  const std::string id = schemas::entry_id("acme", "say-00", 0);
  for (int i = 0; i < 40; ++i) {
    char event[16], sent[32];
    std::snprintf(event, sizeof event, "say-%02d", i);
    std::snprintf(sent, sizeof sent, "2026-03-%02dT10:00:00Z", 1 + i / 2);
    auto m = message("acme", event, "thr-" + std::to_string(i % 3));
    m.sent_at = sent;
    schemas::extraction x;
    auto& en = x.entries.emplace_back();
    en.title = en.content = "The office is closed on Fridays";
    en.confidence = 0.5;
    std::vector<schemas::resolution> r(1);
    if (i > 0) {
      r[0].outcome = schemas::save_outcome::merged;
      r[0].merged_into = id;
      r[0].reason = "cosine 0.99";
    }
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply({"engram-log", 0, i + 1, "c"}, &m, &x, &r, &out), storage::errc::ok);
  }
  auto stored = [&] {
    knowledge::stored_entry e;
    auto raw = store_->get_entry("acme", id);
    EXPECT_TRUE(raw);
    EXPECT_FALSE(raw && knowledge::decode(*raw, e));
    return e;
  };
  auto moved_rows = [&] {
    std::vector<knowledge::source_ref> rows;
    std::string family;
    store_->visit_logical([&](std::string_view f) { family = f; },
                          [&](std::string_view, std::string_view v) {
                            if (family != "entry_sources")
                              return;
                            knowledge::source_ref src;
                            EXPECT_FALSE(knowledge::decode(v, src));
                            rows.push_back(src);
                          },
                          "acme");
    return rows;
  };
  auto events_of = [](const std::vector<knowledge::source_ref>& sources) {
    std::vector<std::string> out;
    for (const auto& s : sources)
      out.push_back(s.event_id);
    return out;
  };
  auto events = [](int from, int to) {
    std::vector<std::string> out;
    for (int i = from; i < to; ++i) {
      char event[16];
      std::snprintf(event, sizeof event, "say-%02d", i);
      out.push_back(event);
    }
    return out;
  };
  // The record: the first source and the 15 latest; the 24 between are rows, oldest first.
  auto e = stored();
  EXPECT_EQ(e.merges, 39);
  ASSERT_EQ(e.sources.size(), knowledge::kept_sources);
  EXPECT_EQ(e.sources_moved, 24u);
  auto kept = events(0, 1);
  for (const auto& ev : events(25, 40))
    kept.push_back(ev);
  EXPECT_EQ(events_of(e.sources), kept);
  EXPECT_EQ(events_of(moved_rows()), events(1, 25));
  EXPECT_EQ(moved_rows()[0].sent_at, "2026-03-01T10:00:00Z");
  EXPECT_EQ(knowledge::to_json(e).value("sourcesMoved", 0), 24);
  // moved_sources reads them a range at a time, by position among the moved.
  auto read_moved = [&](std::uint64_t first, std::size_t limit) {
    std::vector<knowledge::source_ref> out;
    auto got = store_->moved_sources("acme", id, first, limit);
    EXPECT_TRUE(got) << storage::to_string(got.error());
    for (const auto& raw : got ? *got : std::vector<std::string>{}) {
      knowledge::source_ref src;
      EXPECT_FALSE(knowledge::decode(raw, src));
      out.push_back(src);
    }
    return out;
  };
  EXPECT_EQ(events_of(read_moved(0, 100)), events(1, 25));
  EXPECT_EQ(events_of(read_moved(5, 3)), events(6, 9));
  EXPECT_EQ(events_of(read_moved(22, 10)), events(23, 25));
  EXPECT_TRUE(read_moved(24, 10).empty());
  EXPECT_TRUE(store_->moved_sources("globex", id, 0, 10)->empty());  // another organisation's: none

  // The same entry as layout 9 stored it (every source in the record, no rows) is upgraded at
  // open to what the merges wrote.
  const auto digest = store_->digest();
  const auto rows = moved_rows();
  store_.reset();
  {
    auto kv = storage::detail::open_rocks_kv({dir_.string()});
    ASSERT_TRUE(kv) << kv.error();
    using namespace storage::detail;
    auto whole = e;
    whole.sources.insert(whole.sources.begin() + 1, rows.begin(), rows.end());
    whole.sources_moved = 0;
    ASSERT_EQ(whole.sources.size(), 40u);
    kv_batch b;
    b.put(cf_entries, key("acme", id), knowledge::encode(whole));
    for (std::uint64_t n = 0; n < rows.size(); ++n)
      b.del(cf_entry_sources, key("acme", id, encode_u64(n)));
    b.put(cf_meta, meta_tag::layout_version, "9");
    ASSERT_EQ((*kv)->write(b), storage::errc::ok);
  }
  reopen();
  EXPECT_EQ(store_->digest(), digest);
  EXPECT_EQ(stored(), e);

  // A retention forget of the messages sent before March 6 marks every source that was one of
  // them, in the record and in the rows (say-00 … say-09).
  schemas::knowledge_command retain;
  retain.event_id = "retain-1";
  retain.organization_id = "acme";
  retain.op = schemas::command_op::forget;
  retain.what = schemas::retention_kind;
  retain.id = "2026-03-06T00:00:00Z";
  storage::command_result cr;
  storage::apply_outcome out{};
  ASSERT_EQ(store_->apply_command({"engram-log", 0, 41, "c"}, retain, &cr, &out), storage::errc::ok);
  ASSERT_EQ(cr.error, "");
  EXPECT_EQ(cr.forgotten["messages"], 10u);
  EXPECT_EQ(cr.forgotten["entriesMarked"], 1u);  // one entry, reached through three threads
  e = stored();
  EXPECT_NE(e.sources[0].source_id, "say-00");
  EXPECT_EQ(e.sources[0].source_id, e.source_id);
  EXPECT_EQ(e.sources[1].source_id, "say-25");
  const auto marked = moved_rows();
  ASSERT_EQ(marked.size(), 24u);
  for (std::size_t n = 0; n < marked.size(); ++n)
    EXPECT_EQ(marked[n].source_id == marked[n].event_id, n >= 9) << marked[n].event_id;

  // Forgetting the entry removes its rows, and its by_thread rows under each of the three
  // threads its messages came from.
  EXPECT_EQ(thread_rows_of(id), (std::set<std::string>{"thr-0", "thr-1", "thr-2"}));
  ASSERT_EQ(forget_entry(*store_, id, 42), "");
  EXPECT_TRUE(moved_rows().empty());
  EXPECT_TRUE(thread_rows_of(id).empty());
}

TEST_F(GraphStoreTest, RetentionDropsTheEntryRowsOfAThreadItEmptiesAndOfEntriesForgottenSince) {
  // e1 is read from a-1 (thread A) and merged from b-1 (thread B); b-2 (thread B, later) says
  // something else (e2).
  const std::string e1 = schemas::entry_id("acme", "a-1", 0), e2 = schemas::entry_id("acme", "b-2", 0);
  std::int64_t offset = 0;
  auto say = [&](const std::string& event, const std::string& thread, const std::string& sent, const std::string& text,
                 const std::string& merged_into) {
    auto m = message("acme", event, thread);
    m.sent_at = sent;
    schemas::extraction x;
    auto& en = x.entries.emplace_back();
    en.title = en.content = text;
    en.confidence = 0.5;
    std::vector<schemas::resolution> r(1);
    if (!merged_into.empty()) {
      r[0].outcome = schemas::save_outcome::merged;
      r[0].merged_into = merged_into;
    }
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply({"engram-log", 0, ++offset, "c"}, &m, &x, &r, &out), storage::errc::ok);
  };
  auto retain_before = [&](const std::string& cutoff) {
    schemas::knowledge_command retain;
    retain.event_id = "retain-" + cutoff;
    retain.organization_id = "acme";
    retain.op = schemas::command_op::forget;
    retain.what = schemas::retention_kind;
    retain.id = cutoff;
    storage::command_result cr;
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply_command({"engram-log", 0, ++offset, "c"}, retain, &cr, &out), storage::errc::ok);
    ASSERT_EQ(cr.error, "");
  };
  say("a-1", "A", "2026-03-01T10:00:00Z", "The office is closed on Fridays", "");
  say("b-1", "B", "2026-03-01T11:00:00Z", "The office is closed on Fridays", e1);
  say("b-2", "B", "2026-03-10T10:00:00Z", "The canteen opens at noon", "");
  EXPECT_EQ(thread_rows_of(e1), (std::set<std::string>{"A", "B"}));

  // Retention of March 1 empties thread A (its row goes) and leaves b-2 in B (its rows stay).
  retain_before("2026-03-02T00:00:00Z");
  EXPECT_EQ(thread_rows_of(e1), (std::set<std::string>{"B"}));
  EXPECT_EQ(thread_rows_of(e2), (std::set<std::string>{"B"}));

  // e1 forgotten now: neither of its messages is stored, so its row in B cannot be found; the
  // next retention that reads thread B drops it.
  ASSERT_EQ(forget_entry(*store_, e1, ++offset), "");
  EXPECT_EQ(thread_rows_of(e1), (std::set<std::string>{"B"}));
  retain_before("2026-03-11T00:00:00Z");
  EXPECT_TRUE(thread_rows_of(e1).empty());
  EXPECT_TRUE(thread_rows_of(e2).empty());     // B is empty now too
  EXPECT_TRUE(store_->get_entry("acme", e2));  // the entry itself stays
}

TEST_F(GraphStoreTest, OnlyEntriesNotSupersededAreListedForDedupAndContradiction) {
  using ids = std::vector<std::string>;
  const auto subject = schemas::normal_form("Project Falcon");
  auto by_slot = [&] { return store_->entries_with_slot("acme", subject, "budget", 10); };
  auto titled = [&](const std::string& amount) {
    schemas::signature sig;
    sig.amounts = {amount};
    const auto values = knowledge::values_key(true, "The budget of Project Falcon is " + amount, sig);
    return store_->entries_with_title("acme", schemas::entry_type::fact, "budget project falcon", values, 10);
  };
  auto apply_event = [&](budget_event& b, std::int64_t offset) {
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply({"engram-log", 0, offset, "c"}, &b.m, &b.x, &b.r, &out), storage::errc::ok);
  };
  budget_event first("evt-1", "2026-03-05T10:00:00Z");
  const auto march = first.add("$2M");
  apply_event(first, 1);
  EXPECT_EQ(by_slot(), (ids{march}));
  EXPECT_EQ(titled("$2M"), (ids{march}));

  // A later statement supersedes it: only the newer is listed.
  budget_event second("evt-2", "2026-05-01T10:00:00Z");
  const auto may = second.add("$3M", {march});
  apply_event(second, 2);
  EXPECT_EQ(by_slot(), (ids{may}));
  EXPECT_TRUE(titled("$2M").empty());
  EXPECT_EQ(titled("$3M"), (ids{may}));

  // Within one event: an entry superseded by the next one of the same event is never listed.
  budget_event third("evt-3", "2026-06-01T10:00:00Z");
  const auto june = third.add("$4M", {may});
  const auto june_fix = third.add("$5M", {june});
  apply_event(third, 3);
  EXPECT_EQ(by_slot(), (ids{june_fix}));
  EXPECT_TRUE(titled("$3M").empty());
  EXPECT_TRUE(titled("$4M").empty());
  EXPECT_EQ(titled("$5M"), (ids{june_fix}));

  // Forgetting the newest makes the one it superseded active again: listed again, under the
  // key it had; and it stays listed after a reopen (rows, not memory).
  ASSERT_EQ(forget_entry(*store_, june_fix, 4), "");
  reopen();
  ASSERT_EQ(knowledge::entry_json(*store_->get_entry("acme", june))["status"], "active");
  EXPECT_EQ(by_slot(), (ids{june}));
  EXPECT_EQ(titled("$4M"), (ids{june}));
  EXPECT_TRUE(titled("$5M").empty());
  EXPECT_TRUE(titled("$3M").empty());  // `may` stays superseded by `june`
}

TEST_F(GraphStoreTest, ASlotRestatedManyTimesListsWhatAFreshOpenListsAtEveryStep) {
  // The store holds the row counts of the groups it read (the counts stop a read at the last
  // row): along restatements, forgets, a second live entry and another organisation, its
  // lists stay those of a store opened afresh, which holds none.
  using ids = std::vector<std::string>;
  const auto subject = schemas::normal_form("Project Falcon");
  auto lists = [&](storage::graph_store& s) {
    std::vector<ids> out{s.entries_with_slot("acme", subject, "budget", 10),
                         s.entries_with_slot("acme", subject, "budget", 1)};
    for (const auto* amount : {"$1M", "$2M", "$3M"}) {
      schemas::signature sig;
      sig.amounts = {amount};
      const auto values = knowledge::values_key(true, std::string("The budget of Project Falcon is ") + amount, sig);
      out.push_back(s.entries_with_title("acme", schemas::entry_type::fact, "budget project falcon", values, 10));
    }
    return out;
  };
  auto fresh_lists = [&] {
    storage::open_options ro{dir_.string()};
    ro.read_only = true;
    auto fresh = storage::open_graph_store(ro);
    EXPECT_TRUE(fresh) << fresh.error();
    return fresh ? lists(**fresh) : std::vector<ids>{};
  };
  const char* amounts[] = {"$1M", "$2M", "$3M"};
  std::string newest, kept;
  std::int64_t offset = 1;
  for (int i = 0; i < 60; ++i) {
    char event[16], sent[32];
    std::snprintf(event, sizeof event, "evt-%02d", i);
    std::snprintf(sent, sizeof sent, "2026-03-%02dT%02d:00:00Z", 1 + i / 20, i % 20);
    budget_event b(event, sent);
    // Each restates the budget, superseding the one before; every 7th is a second statement
    // that stays (nothing supersedes it), every 11th forgets the newest.
    const auto id = b.add(amounts[i % 3],
                          newest.empty() || i % 7 == 3 ? std::vector<std::string>{} : std::vector<std::string>{newest});
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply({"engram-log", 0, offset++, "c"}, &b.m, &b.x, &b.r, &out), storage::errc::ok);
    (i % 7 == 3 ? kept : newest) = id;
    if (i % 11 == 10) {
      ASSERT_EQ(forget_entry(*store_, newest, offset++), "");
      newest.clear();
    }
    if (i % 4 == 0 || i % 11 == 10) {
      const auto warm = lists(*store_);
      ASSERT_EQ(warm, fresh_lists()) << "after event " << i;
      EXPECT_FALSE(warm[0].empty());
    }
  }
  EXPECT_EQ(lists(*store_), fresh_lists());
}

TEST_F(GraphStoreTest, WatchersAreToldOfEveryEntryABatchWritesOrRemovesWhileTheirHandleLives) {
  using told = std::vector<std::pair<std::vector<std::string>, bool>>;
  told seen;
  auto handle = store_->watch_entries([&](const storage::graph_store::entries_written& w) {
    EXPECT_EQ(w.organization_id, "acme");
    seen.push_back({{w.ids.begin(), w.ids.end()}, w.all});
  });
  budget_event first("evt-1", "2026-03-01T10:00:00Z");
  const auto a = first.add("$1M");
  ASSERT_EQ(store_->apply({"engram-log", 0, 1, "c"}, &first.m, &first.x, &first.r, nullptr), storage::errc::ok);
  EXPECT_EQ(seen, (told{{{a}, false}}));
  // A restatement writes the new entry and the one it supersedes (its status).
  budget_event second("evt-2", "2026-03-02T10:00:00Z");
  const auto b = second.add("$2M", {a});
  ASSERT_EQ(store_->apply({"engram-log", 0, 2, "c"}, &second.m, &second.x, &second.r, nullptr), storage::errc::ok);
  ASSERT_EQ(seen.size(), 2u);
  auto written = seen[1].first;
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, (std::vector<std::string>{std::min(a, b), std::max(a, b)}));
  ASSERT_EQ(forget_entry(*store_, a, 3), "");
  ASSERT_GE(seen.size(), 3u);
  EXPECT_TRUE(std::count(seen[2].first.begin(), seen[2].first.end(), a) == 1 || seen[2].second);
  // Nothing about entries (a redelivered event): nothing told. The handle gone: nothing either.
  const auto before = seen.size();
  ASSERT_EQ(store_->apply({"engram-log", 0, 2, "c"}, &second.m, &second.x, &second.r, nullptr), storage::errc::ok);
  EXPECT_EQ(seen.size(), before);
  handle.reset();
  budget_event third("evt-3", "2026-03-03T10:00:00Z");
  third.add("$3M");
  ASSERT_EQ(store_->apply({"engram-log", 0, 4, "c"}, &third.m, &third.x, &third.r, nullptr), storage::errc::ok);
  EXPECT_EQ(seen.size(), before);
}

TEST(GroupCounts, KnownGroupsMoveByTheirRowsAndAreForgottenWithTheirOrganisationOrPastCapacity) {
  using namespace storage::detail;
  const auto slot = key("acme", "falcon", "budget", "");
  EXPECT_EQ(group_of(cf_by_slot, key("acme", "falcon", "budget", "2026-03-05T10:00:00.000Z", "e-1")), slot);
  EXPECT_EQ(group_of(cf_titles, key("acme", "fact", "budget falcon", "00ff", "2026", "e-1")),
            key("acme", "fact", "budget falcon", "00ff", ""));
  EXPECT_TRUE(group_of(cf_entries, key("acme", "e-1")).empty());
  group_counts counts(3);
  EXPECT_FALSE(counts.find(cf_by_slot, slot));
  counts.apply({{cf_by_slot, slot, 1}});  // not known: nothing to move
  EXPECT_FALSE(counts.find(cf_by_slot, slot));
  counts.remember(cf_by_slot, slot, 1);
  EXPECT_FALSE(counts.find(cf_titles, slot));  // another family's group
  counts.apply({{cf_by_slot, slot, 1}, {cf_by_slot, slot, -1}, {cf_by_slot, slot, 1}});
  EXPECT_EQ(counts.find(cf_by_slot, slot), 2u);
  counts.apply({{cf_by_slot, slot, -1}, {cf_by_slot, slot, -1}, {cf_by_slot, slot, -1}});
  EXPECT_FALSE(counts.find(cf_by_slot, slot));  // below zero: wrong, so dropped
  const auto other = key("acme-2", "falcon", "budget", "");
  counts.remember(cf_by_slot, slot, 4);
  counts.remember(cf_by_slot, other, 5);
  counts.drop_organization("acme");
  EXPECT_FALSE(counts.find(cf_by_slot, slot));
  EXPECT_EQ(counts.find(cf_by_slot, other), 5u);  // "acme-2" is another organisation
  counts.remember(cf_by_slot, key("a", "b", "c", ""), 1);
  counts.remember(cf_by_slot, key("a", "b", "d", ""), 1);
  EXPECT_EQ(counts.size(), 3u);
  counts.remember(cf_by_slot, key("a", "b", "e", ""), 1);  // past capacity: starts again
  EXPECT_EQ(counts.size(), 1u);
}

TEST_F(GraphStoreTest, AStoreOfLayout8LosesItsSupersededEntriesCandidateRowsAtOpen) {
  budget_event first("evt-1", "2026-03-05T10:00:00Z");
  const auto march = first.add("$2M");
  storage::apply_outcome out{};
  ASSERT_EQ(store_->apply({"engram-log", 0, 1, "c"}, &first.m, &first.x, &first.r, &out), storage::errc::ok);
  budget_event second("evt-2", "2026-05-01T10:00:00Z");
  const auto may = second.add("$3M", {march});
  ASSERT_EQ(store_->apply({"engram-log", 0, 2, "c"}, &second.m, &second.x, &second.r, &out), storage::errc::ok);
  const auto digest = store_->digest();
  store_.reset();
  {
    // What layout 8 wrote: the superseded entry's rows kept.
    auto kv = storage::detail::open_rocks_kv({dir_.string()});
    ASSERT_TRUE(kv) << kv.error();
    using namespace storage::detail;
    schemas::signature sig;
    sig.amounts = {"$2M"};
    const auto values = knowledge::values_key(true, "The budget of Project Falcon is $2M", sig);
    kv_batch b;
    b.put(cf_titles,
          key("acme", "fact", "budget project falcon", knowledge::values_key_hex(values),
              time_key("2026-03-05T10:00:00Z"), march),
          "");
    b.put(cf_by_slot,
          key("acme", schemas::normal_form("Project Falcon"), "budget", time_key("2026-03-05T10:00:00Z"), march), "");
    b.put(cf_meta, meta_tag::layout_version, "8");
    ASSERT_EQ((*kv)->write(b), storage::errc::ok);
  }
  reopen();
  EXPECT_EQ(store_->entries_with_slot("acme", schemas::normal_form("Project Falcon"), "budget", 10),
            std::vector<std::string>{may});
  EXPECT_EQ(store_->digest(), digest);  // the rows a store of layout 9 has, no more
  store_.reset();
  {
    auto kv = storage::detail::open_rocks_kv({dir_.string()});
    ASSERT_TRUE(kv) << kv.error();
    EXPECT_EQ(*(*kv)->get(storage::detail::cf_meta, storage::detail::meta_tag::layout_version), "10");
    // A layout older than 8 has no upgrade: refused, with the way out named.
    storage::detail::kv_batch b;
    b.put(storage::detail::cf_meta, storage::detail::meta_tag::layout_version, "7");
    ASSERT_EQ((*kv)->write(b), storage::errc::ok);
  }
  auto refused = storage::open_graph_store({dir_.string()});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("engramctl replay"), std::string::npos) << refused.error();
  {
    // An upgrade that cannot read an entry says so; it is not called a layout mismatch.
    auto kv = storage::detail::open_rocks_kv({dir_.string()});
    ASSERT_TRUE(kv) << kv.error();
    storage::detail::kv_batch b;
    b.put(storage::detail::cf_meta, storage::detail::meta_tag::layout_version, "8");
    b.put(storage::detail::cf_entries, storage::detail::key("acme", "e-broken"), "not an entry record");
    ASSERT_EQ((*kv)->write(b), storage::errc::ok);
  }
  auto broken = storage::open_graph_store({dir_.string()});
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().find("cannot read or upgrade its layout (corruption)"), std::string::npos) << broken.error();
}

TEST_F(GraphStoreTest, EntriesAreReadManyAtOnceInTheOrderAskedWithinTheirOrganisation) {
  std::vector<std::string> ids;
  for (std::int64_t i = 0; i < 5; ++i)
    ids.push_back(apply_words(*store_, "acme", i, "statement " + std::to_string(i)));
  const auto elsewhere = apply_words(*store_, "northwind", 9, "statement elsewhere");
  // Unsorted, one missing, one of another organisation.
  const std::vector<std::string> asked{ids[3], "acme-missing", ids[0], elsewhere, ids[4]};
  const auto got = store_->get_entries("acme", asked);
  ASSERT_EQ(got.size(), asked.size());
  for (std::size_t i : {0u, 2u, 4u}) {
    ASSERT_TRUE(got[i]) << asked[i];
    EXPECT_EQ(*got[i], *store_->get_entry("acme", asked[i])) << asked[i];
  }
  EXPECT_FALSE(got[1]);
  EXPECT_FALSE(got[3]) << "another organisation's entry";
  EXPECT_TRUE(store_->get_entries("acme", {}).empty());
  EXPECT_FALSE(store_->get_entries("northwind", std::vector<std::string>{ids[1]}).at(0));
}

TEST_F(GraphStoreTest, FullTextRanksByBm25OverEveryPostingAndSurvivesReopen) {
  // A third of 2,100 entries share "renew" (a common term); a few carry rarer words.
  std::int64_t offset = 0;
  for (int i = 0; i < 2100; ++i)
    apply_words(*store_, "acme", offset++,
                (i % 3 == 0 ? "renew" : "lapse") + std::string(" filler") + std::to_string(i % 7) + " word");
  const auto both = apply_words(*store_, "acme", offset++, "renew contract");
  const auto rare_only = apply_words(*store_, "acme", offset++, "contract contract signatur");
  const auto other_org = apply_words(*store_, "northwind", offset++, "renew contract");

  // BM25 by hand: docs 2102, avgdl (2100*3 + 2 + 3) / 2102.
  const double docs = 2102, avgdl = (2100.0 * 3 + 2 + 3) / docs, k1 = 1.2, b = 0.75;
  auto part = [&](double df, double f, double dl) {
    return std::log(1 + (docs - df + 0.5) / (df + 0.5)) * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl));
  };
  auto check = [&] {
    auto hits = store_->search_text("acme", {"renew", "contract"}, 10);
    ASSERT_EQ(hits.size(), 10u);          // every posting of both terms is scored
    EXPECT_EQ(hits[0].first, rare_only);  // tf 2 of the rare term beats one rare and one common match
    EXPECT_EQ(hits[1].first, both);
    EXPECT_NEAR(hits[0].second, part(2, 2, 3), 1e-9);
    EXPECT_NEAR(hits[1].second, part(2, 1, 2) + part(701, 1, 2), 1e-9);
    for (std::size_t i = 2; i < hits.size(); ++i) {
      EXPECT_NEAR(hits[i].second, part(701, 1, 3), 1e-9);  // "renew" alone, three words
      if (i > 2) {
        EXPECT_LT(hits[i - 1].first, hits[i].first) << "equal scores rank by id";
      }
    }
    hits = store_->search_text("acme", {"renew"}, 5);
    ASSERT_EQ(hits.size(), 5u);
    EXPECT_EQ(hits[0].first, both);  // the shortest document with the term
    EXPECT_TRUE(store_->search_text("acme", {"unknown", "words"}, 5).empty());
    for (const auto& [id, score] : store_->search_text("northwind", {"renew", "contract", "signatur"}, 10))
      EXPECT_EQ(id, other_org);
    EXPECT_EQ(store_->search_text("northwind", {"renew", "contract"}, 10).size(), 1u);
  };
  check();
  // The postings are held in memory, derived from the text column family: a reopened store
  // reads them back and ranks alike.
  reopen();
  check();
}

TEST(TextIndex, RemovedEntriesLeaveTheirTermsAndTheTotals) {
  storage::detail::text_index idx;
  idx.add("acme", "e1", storage::detail::index_words("renew contract"));
  idx.add("acme", "e2", storage::detail::index_words("renew renew"));
  idx.add("acme", "e3", storage::detail::index_words("contract signed today"));
  EXPECT_EQ(idx.postings(), 6u);
  idx.remove("acme", "e1", storage::detail::index_words("renew contract"));
  EXPECT_EQ(idx.postings(), 4u);
  auto hits = idx.search("acme", {"renew", "contract"}, 10);
  ASSERT_EQ(hits.size(), 2u);
  // Two documents left, average length 2.5: e2 (renew, tf 2, 2 words) beats e3 (3 words).
  EXPECT_EQ(hits[0].first, "e2");
  const double docs = 2, avgdl = 2.5, idf = std::log(1 + (docs - 1 + 0.5) / (1 + 0.5));
  EXPECT_NEAR(hits[0].second, idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 2 / avgdl)), 1e-12);
  EXPECT_NEAR(hits[1].second, idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / avgdl)), 1e-12);
  idx.remove("acme", "e1", storage::detail::index_words("renew contract"));  // twice: no-op
  idx.remove("acme", "e2", storage::detail::index_words("renew renew"));
  EXPECT_TRUE(idx.search("acme", {"renew"}, 10).empty());
  EXPECT_TRUE(idx.search("northwind", {"contract"}, 10).empty());
}

// search() answers as BM25 by hand over every live document does: the same ids, order and
// scores, ties by id, after removals, for any limit, over a Zipf-like vocabulary (very common
// terms and rare ones) where a third of the documents copy one of the first twenty (ties at
// the k-th score, as templated mail has). The search sets documents aside once the terms
// left cannot lift them to the k-th score; it did so in about a third of these searches.
// With small chunks and a sorted run sorted again every few dozen additions, the same
// searches walk the sorted run's chunks, passing over those that cannot hold a better
// document, and answer the same; then again after the index is read back from a snapshot.
void ranks_as_bm25_by_hand(storage::detail::text_index::layout layout, bool through_snapshot);
::testing::AssertionResult through_a_snapshot(const storage::detail::text_index& from, storage::detail::text_index& to,
                                              const std::string& name);

TEST(TextIndex, RanksAsBm25ByHandAfterRemovalsForAnyLimit) { ranks_as_bm25_by_hand({}, false); }

TEST(TextIndex, RanksAsBm25ByHandInSmallChunksOfASortedRun) {
  ranks_as_bm25_by_hand({.chunk_bits = 4, .min_added = 64}, false);
  ranks_as_bm25_by_hand({.chunk_bits = 2, .min_added = 200}, true);
}

void ranks_as_bm25_by_hand(storage::detail::text_index::layout layout, bool through_snapshot) {
  std::mt19937 rng(41);
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 300; ++i)
    vocabulary.push_back("w" + std::to_string(i));
  auto word = [&] {  // P(rank r) ~ 1/(r+1)
    std::uniform_real_distribution<double> u(0, std::log(301.0));
    return vocabulary[std::min<std::size_t>(299, static_cast<std::size_t>(std::exp(u(rng))) - 1)];
  };
  storage::detail::text_index built(layout);
  std::map<std::string, storage::detail::text_doc> live;
  std::uniform_int_distribution<int> words(1, 14);
  std::vector<storage::detail::text_doc> first;
  for (int d = 0; d < 3000; ++d) {
    std::map<std::string, std::uint32_t> tf;
    storage::detail::text_doc doc;
    doc.length = static_cast<std::uint32_t>(words(rng));
    for (std::uint32_t w = 0; w < doc.length; ++w)
      ++tf[word()];
    doc.tf.assign(tf.begin(), tf.end());
    if (d % 97 == 5) {  // now and then a word 40 times: its count kept beside the list
      doc.tf.emplace_back("w" + std::to_string(d % 7), 40);
      std::sort(doc.tf.begin(), doc.tf.end());
      doc.tf.erase(
          std::unique(doc.tf.begin(), doc.tf.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
          doc.tf.end());
      doc.length += 40;
    }
    if (first.size() < 20)
      first.push_back(doc);
    else if (d % 3 == 2)
      doc = first[rng() % first.size()];
    const auto id = "e" + std::to_string(100000 + (d * 7919) % 3000);  // ids not in doc order
    built.add("acme", id, doc);
    live[id] = doc;
    if (d % 10 == 9) {  // every tenth, an earlier one goes
      auto gone = std::next(live.begin(), static_cast<std::ptrdiff_t>(rng() % live.size()));
      built.remove("acme", gone->first, gone->second);
      live.erase(gone);
    }
  }
  // Read back twice: the first read numbers the documents in the order of their ids, and
  // the second reads them so numbered, with no removed document left (kept as they come).
  storage::detail::text_index back(layout), again(layout);
  if (through_snapshot) {
    ASSERT_TRUE(through_a_snapshot(built, back, "by-hand"));
    ASSERT_TRUE(through_a_snapshot(back, again, "by-hand-again"));
  }
  const auto& idx = through_snapshot ? again : built;
  // BM25 by hand over every live document, each score summed rarest term first.
  std::size_t dropped = 0;
  auto reference = [&](const std::vector<std::string>& query, std::size_t limit) {
    std::map<std::string, std::size_t> df;
    double total = 0;
    for (const auto& [id, doc] : live) {
      total += doc.length;
      for (const auto& [t, f] : doc.tf)
        ++df[t];
    }
    std::vector<std::string> order;
    for (const auto& t : std::set<std::string>(query.begin(), query.end()))
      if (df.count(t))
        order.push_back(t);
    std::sort(order.begin(), order.end(),
              [&](const std::string& x, const std::string& y) { return df[x] != df[y] ? df[x] < df[y] : x < y; });
    // A term in more than half of the documents only when every term found is one.
    const auto common = [&](const std::string& t) { return 2 * df[t] > live.size(); };
    if (!std::all_of(order.begin(), order.end(), common))
      dropped += std::erase_if(order, common);
    const double docs = static_cast<double>(live.size()), avgdl = total / docs, k1 = 1.2, b = 0.75;
    std::vector<std::pair<std::string, double>> scored;
    for (const auto& [id, doc] : live) {
      double score = 0;
      bool any = false;
      for (const auto& t : order)
        for (const auto& [term, f] : doc.tf)
          if (term == t) {
            const double idf = std::log(1.0 + (docs - double(df[t]) + 0.5) / (double(df[t]) + 0.5));
            score += idf * (double(f) * (k1 + 1) / (double(f) + k1 * (1 - b + b * double(doc.length) / avgdl)));
            any = true;
          }
      if (any)
        scored.emplace_back(id, score);
    }
    std::sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    if (scored.size() > limit)
      scored.resize(limit);
    return scored;
  };
  std::size_t compared = 0;
  for (int q = 0; q < 300; ++q) {
    std::vector<std::string> query;
    for (int n = 1 + q % 8; n > 0; --n)
      query.push_back(q % 3 == 0 ? vocabulary[rng() % 300] : word());
    for (std::size_t limit : {1u, 5u, 40u, 100u}) {
      const auto want = reference(query, limit);
      const auto got = idx.search("acme", query, limit);
      ASSERT_EQ(got.size(), want.size()) << "query " << q << " limit " << limit;
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].first, want[i].first) << "query " << q << " limit " << limit << " rank " << i;
        EXPECT_EQ(got[i].second, want[i].second) << "query " << q << " limit " << limit << " rank " << i;  // bits
      }
      compared += want.size();
    }
  }
  EXPECT_GT(compared, 30000u);
  EXPECT_GT(dropped, 100u) << "the commonest terms were left out of some searches";
  const auto chunks = idx.chunks_searched();
  if (layout.min_added < 3000) {
    std::size_t held = 0;
    for (const auto& [id, doc] : live)
      held += doc.tf.size();
    EXPECT_LT(idx.postings(), held * 4 / 5) << "copies of a document in the sorted run hold no postings of their own";
    EXPECT_GT(chunks.walked, 1000u) << "the searches walked the sorted run";
    EXPECT_GT(chunks.passed, chunks.walked / 4) << "and passed over many of its chunks";
  } else {
    EXPECT_EQ(chunks.walked + chunks.passed, 0u) << "3,000 additions, none sorted";
  }
}

// In a sorted run, a chunk whose best can only tie the k-th score is passed over only when
// the k-th's id is below the chunk's: a document added after the run with a lower id than
// the run's ties keeps its place, and one with a higher id gives it up to the run's first.
// The same when the tied documents are equal to BM25 (echoes of the first: one class scored
// once) as when each holds a word of its own that is not searched (64 documents scored).
TEST(TextIndex, ATieInASortedRunRanksByIdWhicheverRunItIsIn) {
  using namespace storage::detail;
  std::vector<std::string> terms;
  for (const auto& [term, _] : index_words("renewal quote").tf)
    terms.push_back(term);
  auto ranked = [&](const text_index& idx, std::size_t k) {
    std::vector<std::string> out;
    for (const auto& [id, score] : idx.search("acme", terms, k))
      out.push_back(id);
    return out;
  };
  for (const bool equal : {true, false}) {
    // A word of its own (letters only: words with digits are not indexed), or none.
    auto doc = [equal](int i) {
      return index_words(equal ? "renewal quote plan"
                               : "renewal quote w" + std::string(1, char('a' + i / 26)) + char('a' + i % 26));
    };
    for (const std::string added : {"a00", "b07x", "c00"}) {
      const auto how = std::string(equal ? "equal" : "distinct") + ", added " + added;
      text_index idx({.chunk_bits = 2, .min_added = 1000});
      for (int i = 63; i >= 0; --i)  // added in reverse order of their ids
        idx.add("acme", "b" + std::string(i < 10 ? "0" : "") + std::to_string(i), doc(i));
      idx.add("acme", "other", index_words("invoice paid"));
      text_index sorted({.chunk_bits = 2, .min_added = 1000});
      ASSERT_TRUE(through_a_snapshot(idx, sorted, "tie-" + added));
      sorted.add("acme", added, doc(64));  // after the sorted run
      std::vector<std::string> all{added};
      for (int i = 0; i < 64; ++i)
        all.push_back("b" + std::string(i < 10 ? "0" : "") + std::to_string(i));
      std::sort(all.begin(), all.end());
      for (const std::size_t k : {1u, 2u, 9u, 30u, 70u})
        EXPECT_EQ(
            ranked(sorted, k),
            std::vector<std::string>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(k, all.size()))))
            << how << ", the best " << k;
      const auto chunks = sorted.chunks_searched();
      if (equal)
        EXPECT_EQ(chunks.walked + chunks.passed, 5u)
            << how << ": one chunk holds the class's postings, met once a search";
      else
        EXPECT_GT(chunks.passed, 0u) << how << ": the tied chunks after the k-th were passed over";
    }
  }
}

// Echoes through removals: the first of a class removed while its echoes live, an echo
// removed, a copy added after the run, a whole class removed: each search answers as an
// index built from the live documents alone (ids and score bits), before and after a
// snapshot, in a run searched by chunks and in one too short for them; the document frequency
// counts the echoes (the idf of a term of the class is the live count's), and a class's
// postings go with its last live document.
void echoes_through_removals(storage::detail::text_index::layout layout);

TEST(TextIndex, RemovingTheFirstOfAClassOrAnEchoAnswersAsAnIndexOfTheLiveDocuments) {
  echoes_through_removals({.chunk_bits = 2, .min_added = 1000});  // 30 chunks: walked by chunk
  echoes_through_removals({.chunk_bits = 8, .min_added = 1000});  // under 4 chunks: term at a time
}

void echoes_through_removals(storage::detail::text_index::layout layout) {
  using namespace storage::detail;
  const auto copy = index_words("renewal quote signed"), other = index_words("renewal invoice paid late");
  std::map<std::string, text_doc> live;
  auto id = [](int i) { return "b" + std::string(i < 10 ? "00" : i < 100 ? "0" : "") + std::to_string(i); };
  text_index idx(layout);
  for (int i = 0; i < 120; ++i)
    live[id(i)] = i % 3 == 2 ? other : copy;
  for (const auto& [k, doc] : live)
    idx.add("acme", k, doc);
  text_index sorted(layout);
  ASSERT_TRUE(through_a_snapshot(idx, sorted, "echoes-sorted"));  // read: the run numbered, echoes found
  const auto quote = index_words("quote").tf.front().first, renewal = index_words("renewal").tf.front().first,
             paid = index_words("paid").tf.front().first;
  auto same_as_live = [&](const text_index& got, const std::string& when) {
    text_index want(layout);
    for (const auto& [k, doc] : live)
      want.add("acme", k, doc);
    for (const auto& q : std::vector<std::vector<std::string>>{{quote}, {renewal}, {paid}, {quote, renewal, paid}})
      for (const std::size_t k : {1u, 3u, 50u, 200u})
        EXPECT_EQ(got.search("acme", q, k), want.search("acme", q, k)) << when << ", " << q.size() << " terms, " << k;
  };
  same_as_live(sorted, "sorted");
  EXPECT_EQ(sorted.postings(), copy.tf.size() + other.tf.size()) << "each class's postings held once";
  for (const int gone : {0, 1, 4, 119}) {  // the first of each class, then echoes
    sorted.remove("acme", id(gone), live.at(id(gone)));
    live.erase(id(gone));
    same_as_live(sorted, "without " + id(gone));
  }
  sorted.add("acme", "a000", copy);  // after the run, before every echo by id
  live["a000"] = copy;
  same_as_live(sorted, "a copy added after the run");
  const auto hits = sorted.search("acme", {quote}, 1);
  ASSERT_EQ(hits.size(), 1u);
  const double docs = double(live.size()), df = 80 - 3 + 1;  // copies of `copy`: 80, three removed, one added
  const double idf = std::log(1 + (docs - df + 0.5) / (df + 0.5));
  double total = 0;
  for (const auto& [k, doc] : live)
    total += doc.length;
  EXPECT_NEAR(hits[0].second, idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / (total / docs))), 1e-12);
  for (int i = 2; i < 119; i += 3) {  // the rest of `other`'s class
    sorted.remove("acme", id(i), other);
    live.erase(id(i));
  }
  same_as_live(sorted, "without the class of other");
  EXPECT_TRUE(sorted.search("acme", {paid}, 10).empty());
  EXPECT_EQ(sorted.postings(), 2 * copy.tf.size()) << "the class's postings went with its last document";
  text_index again(layout);
  ASSERT_TRUE(through_a_snapshot(sorted, again, "echoes-again"));  // removed ones dropped, numbered anew
  same_as_live(again, "read back");
}

// A snapshot whose documents are not in the order of their ids (as one written before the
// sorted run was) is numbered again when read, and says so, so that the store writes it
// again; one written after that reads in order.
TEST(TextIndex, ASnapshotReadOutOfOrderSaysSoAndOneWrittenAfterReadsInOrder) {
  using namespace storage::detail;
  const text_index::layout layout{.chunk_bits = 2, .min_added = 100};
  text_index idx({.chunk_bits = 2, .min_added = 1000});  // 240 documents as added, none sorted
  for (int d = 0; d < 240; ++d)
    idx.add("acme", "e" + std::to_string((d * 7919) % 1000), index_words("renew w" + std::to_string(d % 9)));
  text_index first(layout), second(layout);
  ASSERT_TRUE(through_a_snapshot(idx, first, "out-of-order"));
  EXPECT_TRUE(first.read_sorted_again());
  ASSERT_TRUE(through_a_snapshot(first, second, "in-order"));
  EXPECT_FALSE(second.read_sorted_again());
  const auto renew = index_words("renew").tf.front().first;
  EXPECT_EQ(second.search("acme", {renew}, 50), idx.search("acme", {renew}, 50));
}

// Searches while the writer adds and removes documents and sorts the run again (each time
// the added pass a quarter of it) answer from one numbering or the other, never a mix: every
// hit holds a term searched, with a positive score, best first, ties by id.
TEST(TextIndex, SearchesWhileTheRunIsSortedAgainAnswerFromOneNumbering) {
  using namespace storage::detail;
  text_index idx({.chunk_bits = 2, .min_added = 16});
  auto text_of = [](int d) {
    return "w" + std::to_string(d % 13) + " w" + std::to_string(d % 5) + " x" + std::to_string(d);
  };
  int next = 0;
  auto add_one = [&] {
    idx.add("acme", "e" + std::to_string(next), index_words(text_of(next)));
    if (next % 10 == 9)
      idx.remove("acme", "e" + std::to_string(next - 5), index_words(text_of(next - 5)));
    ++next;
  };
  while (next < 200)  // a sorted run before the searches start
    add_one();
  std::atomic<bool> done{false};
  std::thread writer([&] {
    while (!done)
      add_one();
  });
  struct stop_writer {  // also when an assertion returns early
    std::atomic<bool>& done;
    std::thread& writer;
    ~stop_writer() {
      done = true;
      writer.join();
    }
  } stop{done, writer};
  const auto w3 = index_words("w3").tf.front().first, w1 = index_words("w1").tf.front().first;
  std::size_t hits = 0;
  for (int search = 0; search < 500; ++search) {
    const auto got = idx.search("acme", {w3, w1}, 20);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_GT(got[i].second, 0.0);
      if (i > 0) {
        ASSERT_GE(got[i - 1].second, got[i].second);
        if (got[i - 1].second == got[i].second)
          ASSERT_LT(got[i - 1].first, got[i].first);
      }
      const int d = std::stoi(got[i].first.substr(1));
      const auto holds = [&](int w) { return d % 13 == w || d % 5 == w; };
      ASSERT_TRUE(holds(3) || holds(1)) << got[i].first << " holds neither term";
    }
    hits += got.size();
  }
  EXPECT_EQ(hits, 500u * 20u);
  EXPECT_GT(idx.chunks_searched().walked, 0u) << "the searches walked a sorted run";
}

// A term in more than half of the documents (the organisation's own stop word) is searched
// only when every term found is one: beside a rarer term it adds nothing to any score, and
// documents that hold it alone are not found.
TEST(TextIndex, ATermInMoreThanHalfOfTheDocumentsIsSearchedOnlyWhenEveryTermIs) {
  storage::detail::text_index idx;
  idx.add("acme", "e1", storage::detail::index_words("renew contract"));
  idx.add("acme", "e2", storage::detail::index_words("renew policy"));
  idx.add("acme", "e3", storage::detail::index_words("renew invoice"));
  idx.add("acme", "e4", storage::detail::index_words("contract signed"));
  // renew: 3 of 4 documents; contract: 2 of 4, not more than half.
  auto hits = idx.search("acme", {"renew", "contract"}, 10);
  ASSERT_EQ(hits.size(), 2u);
  const double idf = std::log(1 + (4 - 2 + 0.5) / (2 + 0.5));
  for (const auto& [id, score] : hits) {
    EXPECT_TRUE(id == "e1" || id == "e4") << id;
    EXPECT_NEAR(score, idf * 2.2 / (1 + 1.2), 1e-12) << "contract's weight alone, both of average length";
  }
  EXPECT_EQ(hits[0].first, "e1") << "equal scores rank by id";
  hits = idx.search("acme", {"renew", "nowhere"}, 10);
  EXPECT_EQ(hits.size(), 3u) << "a term not found does not make renew the less common";
  hits = idx.search("acme", {"renew"}, 10);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_GT(hits[0].second, 0.0);
  idx.remove("acme", "e2", storage::detail::index_words("renew policy"));
  idx.remove("acme", "e3", storage::detail::index_words("renew invoice"));
  idx.add("acme", "e5", storage::detail::index_words("invoice paid"));
  idx.add("acme", "e6", storage::detail::index_words("policy review"));
  // renew is now in 1 of 4 documents: searched beside contract again.
  hits = idx.search("acme", {"renew", "contract"}, 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].first, "e1") << "renew and contract beat contract alone";
}

/// Writes `from` to a snapshot file and reads it into `to`; what failed, as a test failure.
::testing::AssertionResult through_a_snapshot(const storage::detail::text_index& from, storage::detail::text_index& to,
                                              const std::string& name) {
  using namespace storage::detail;
  const auto path = (std::filesystem::temp_directory_path() /
                     ("engram-text-index-" + name + "-" + std::to_string(::getpid()) + ".bin"))
                        .string();
  snapshot_out out(path);
  from.write(out);
  const auto sum = out.install();
  if (!sum)
    return ::testing::AssertionFailure() << sum.error();
  auto in = snapshot_in::open(path, *sum);
  std::filesystem::remove(path);
  if (!in)
    return ::testing::AssertionFailure() << in.error();
  if (!to.read(*in))
    return ::testing::AssertionFailure() << "the snapshot does not read back";
  return ::testing::AssertionSuccess();
}

// Equal scores rank by id, bytewise: ids whose first eight bytes differ, ids that share
// them, ids shorter than eight bytes and bytes above 0x7f, in memory and after a snapshot.
TEST(TextIndex, TiesRankByIdBytewiseWhateverTheirLengthOrFirstBytes) {
  using namespace storage::detail;
  const std::vector<std::string> ids{"p-000000017-b", "p-000000017-a", "p-00000001", "e", "e-\xff",
                                     "e-\x7f",        "p-000000017",   "ab",         "a"};
  text_index idx;
  for (const auto& id : ids)
    idx.add("acme", id, index_words("renewal quote"));
  idx.add("acme", "other", index_words("invoice paid"));
  std::vector<std::string> terms;  // as the index spells them
  for (const auto& [term, _] : index_words("renewal quote").tf)
    terms.push_back(term);
  auto sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  auto ranked = [](const std::vector<std::pair<std::string, double>>& hits) {
    std::vector<std::string> out;
    for (const auto& [id, score] : hits) {
      EXPECT_EQ(score, hits.front().second) << id << ": every document ties";
      out.push_back(id);
    }
    return out;
  };
  EXPECT_EQ(ranked(idx.search("acme", terms, 20)), sorted);
  for (std::size_t k = 1; k <= sorted.size(); ++k)
    EXPECT_EQ(ranked(idx.search("acme", terms, k)),
              std::vector<std::string>(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k)))
        << "the best " << k;
  text_index back;
  ASSERT_TRUE(through_a_snapshot(idx, back, "ties"));
  EXPECT_EQ(ranked(back.search("acme", terms, 4)), std::vector<std::string>(sorted.begin(), sorted.begin() + 4));
}

// A posting keeps a count below 32 in place and a larger one beside its list: both are
// scored, written to a snapshot and read back, and removed, as counts are.
TEST(TextIndex, CountsOver31AreKeptExactlyThroughASnapshotAndARemoval) {
  using namespace storage::detail;
  auto doc_of = [](std::uint32_t renews, std::uint32_t length) {
    text_doc d;
    d.tf = {{"renew", renews}};
    if (length > renews)
      d.tf.emplace_back("contract", length - renews);
    d.length = length;
    return d;
  };
  text_index idx;
  idx.add("acme", "e31", doc_of(31, 80));
  idx.add("acme", "e32", doc_of(32, 80));
  idx.add("acme", "e500", doc_of(500, 600));
  idx.add("acme", "e1", doc_of(1, 2));
  const auto before = idx.search("acme", {"renew"}, 10);
  ASSERT_EQ(before.size(), 4u);
  // Scores grow with the count at a given length: e32 above e31, both 80 words long.
  auto score = [](const std::vector<std::pair<std::string, double>>& hits, const std::string& id) {
    for (const auto& [h, s] : hits)
      if (h == id)
        return s;
    return -1.0;
  };
  EXPECT_GT(score(before, "e32"), score(before, "e31"));
  text_index back;
  ASSERT_TRUE(through_a_snapshot(idx, back, "counts"));
  EXPECT_EQ(back.search("acme", {"renew"}, 10), before);  // same ids, order and bits
  back.remove("acme", "e500", doc_of(500, 600));
  back.remove("acme", "e32", doc_of(32, 80));
  const auto after = back.search("acme", {"renew"}, 10);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].first, "e31");
  back.add("acme", "e40", doc_of(40, 80));
  EXPECT_GT(score(back.search("acme", {"renew"}, 10), "e40"), score(back.search("acme", {"renew"}, 10), "e31"));
}

// Searches on several threads at once, of two organisations of different sizes, each borrow
// their own sums from the shared pool and answer as one search alone does.
TEST(TextIndex, SearchesOnSeveralThreadsAtOnceAnswerAsAlone) {
  std::mt19937 rng(7);
  storage::detail::text_index idx;
  for (const auto& [org, docs] : {std::pair{"acme", 4000}, std::pair{"northwind", 700}})
    for (int d = 0; d < docs; ++d) {
      std::string text;
      for (int w = 0; w < 1 + d % 9; ++w)
        text += "w" + std::to_string(rng() % (w == 0 ? 400 : 12)) + " ";
      idx.add(org, std::string(org) + "-" + std::to_string(d), storage::detail::index_words(text));
    }
  std::vector<std::pair<std::string, std::vector<std::string>>> queries;
  for (int q = 0; q < 200; ++q)
    queries.push_back(
        {q % 3 ? "acme" : "northwind",
         {"w" + std::to_string(rng() % 400), "w" + std::to_string(rng() % 12), "w" + std::to_string(q % 12)}});
  std::vector<std::vector<std::pair<std::string, double>>> alone;
  for (const auto& [org, terms] : queries)
    alone.push_back(idx.search(org, terms, 20));
  std::vector<std::vector<std::vector<std::pair<std::string, double>>>> together(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < together.size(); ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < queries.size(); ++i) {
        const auto& [org, terms] = queries[(i + t * 50) % queries.size()];
        together[t].push_back(idx.search(org, terms, 20));
      }
    });
  for (auto& th : threads)
    th.join();
  for (std::size_t t = 0; t < together.size(); ++t)
    for (std::size_t i = 0; i < queries.size(); ++i)
      ASSERT_EQ(together[t][i], alone[(i + t * 50) % queries.size()]) << "thread " << t << " query " << i;
}

TEST_F(GraphStoreTest, DigestIgnoresOffsetsClusterAndRedeliveryButNotContent) {
  auto m1 = message("acme", "evt-1");
  auto m2 = message("acme", "evt-2");
  apply(*store_, &m1, 0);
  apply(*store_, &m2, 1);

  auto other = other_store("b");
  storage::apply_outcome out{};
  ASSERT_EQ(other->apply({"engram-log", 2, 100, "cluster-b"}, &m1, &out), storage::errc::ok);
  ASSERT_EQ(other->apply({"engram-log", 2, 101, "cluster-b"}, nullptr, &out), storage::errc::ok);
  ASSERT_EQ(other->apply({"engram-log", 2, 102, "cluster-b"}, &m1, &out), storage::errc::ok);
  ASSERT_EQ(other->apply({"engram-log", 2, 103, "cluster-b"}, &m2, &out), storage::errc::ok);
  EXPECT_EQ(other->digest(), store_->digest());

  auto third = other_store("c");
  auto m2b = m2;
  m2b.subject = "Trial extension (2)";
  ASSERT_EQ(third->apply({"engram-log", 0, 0, "cluster-a"}, &m1, &out), storage::errc::ok);
  ASSERT_EQ(third->apply({"engram-log", 0, 1, "cluster-a"}, &m2b, &out), storage::errc::ok);
  EXPECT_NE(third->digest(), store_->digest());
  EXPECT_EQ(store_->digest().size(), 64u);
}

TEST_F(GraphStoreTest, ReadOnlyStoreRefusesWritesAndChangesNothing) {
  auto m1 = message("acme", "evt-1");
  apply(*store_, &m1, 0);
  auto digest = store_->digest();
  auto opened = storage::open_graph_store({dir_.string(), /*read_only=*/true});
  ASSERT_TRUE(opened) << opened.error();
  auto& ro = *opened;
  auto m2 = message("acme", "evt-2");
  storage::apply_outcome out{};
  EXPECT_NE(ro->apply({"engram-log", 0, 1, "cluster-a"}, &m2, &out), storage::errc::ok);
  EXPECT_EQ(ro->digest(), digest);
  EXPECT_EQ(ro->offsets("engram-log")[0].next_offset, 1);
}

TEST_F(GraphStoreTest, MissingParentDirectoriesAreCreated) {
  auto nested = dir_.string() + "-nested/a/b";
  extra_.push_back(dir_.string() + "-nested");
  auto s = storage::open_graph_store({nested});
  ASSERT_TRUE(s) << s.error();
  auto m = message("acme", "evt-1");
  EXPECT_EQ(apply(**s, &m, 0), storage::apply_outcome::applied);
}

TEST_F(GraphStoreTest, OpeningANonDirectoryFailsWithAClearError) {
  auto s = storage::open_graph_store({"/proc/version/x"});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("cannot open store at '/proc/version/x'"), std::string::npos) << s.error();
}

}  // namespace

namespace {

/// A message from `sent_at` stating `predicate` between two named things (one statement).
schemas::extraction relation_extraction(const std::string& subject, schemas::entity_kind object_kind,
                                        const std::string& object, const std::string& predicate, bool ended,
                                        const std::string& role = "") {
  schemas::extraction x;
  x.mentions.push_back({schemas::entity_kind::person, subject, subject, {}, {}, {}, {}, {}});
  x.mentions.push_back({object_kind, object, object, {}, {}, {}, {}, {}});
  x.entries.emplace_back();
  x.entries[0].type = schemas::entry_type::relationship;
  x.entries[0].title = x.entries[0].content = subject + " " + predicate + " " + object;
  x.entries[0].confidence = 0.8;
  x.entries[0].mentions = {0, 1};
  x.relations.push_back({0, 1, predicate, 0.8, 0, ended, role});
  return x;
}

}  // namespace

// Relations between entities are edges of the entity graph, with their evidence, and
// bi-temporal: an end closes the edge (validTo) without deleting it; stating it again
// opens it again from the new message.
TEST_F(GraphStoreTest, ExtractedRelationsAreEdgesThatAnEndClosesAndALaterStatementReopens) {
  auto apply_at = [&](const std::string& id, const std::string& sent_at, std::int64_t offset,
                      const schemas::extraction& x) {
    auto m = message("acme", id);
    m.sent_at = sent_at;
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply({"engram-log", 0, offset, "c"}, &m, &x, nullptr, &out), storage::errc::ok);
  };
  apply_at("m1", "2026-01-10T09:00:00Z", 0,
           relation_extraction("Mei Chen", schemas::entity_kind::organization, "Contoso", "works_at", false, "CTO"));
  const auto mei = store_->entity_id("acme", "Mei Chen"), contoso = store_->entity_id("acme", "Contoso");
  ASSERT_FALSE(mei.empty());
  ASSERT_FALSE(contoso.empty());
  auto edges = store_->entity_edges("acme", mei, true);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].label, "works_at");
  EXPECT_EQ(edges[0].to_id, contoso);
  EXPECT_DOUBLE_EQ(edges[0].weight, 0.8);
  EXPECT_EQ(edges[0].attributes.at("validFrom"), "2026-01-10T09:00:00Z");
  EXPECT_EQ(edges[0].attributes.at("role"), "CTO");
  EXPECT_EQ(edges[0].attributes.at("message"), "m1");
  EXPECT_EQ(edges[0].attributes.at("entry"), schemas::entry_id("acme", "m1", 0));
  EXPECT_EQ(edges[0].attributes.at("source"), "extracted");
  EXPECT_FALSE(edges[0].attributes.count("validTo"));
  // The walk index sees it too, from both ends.
  ASSERT_EQ(store_->entity_neighbours("acme", contoso, false, true).size(), 1u);

  apply_at("m2", "2026-05-02T09:00:00Z", 1,
           relation_extraction("Mei Chen", schemas::entity_kind::organization, "Contoso", "works_at", true));
  edges = store_->entity_edges("acme", mei, true);
  ASSERT_EQ(edges.size(), 1u) << "an end keeps the edge";
  EXPECT_EQ(edges[0].attributes.at("validFrom"), "2026-01-10T09:00:00Z");
  EXPECT_EQ(edges[0].attributes.at("validTo"), "2026-05-02T09:00:00Z");
  EXPECT_EQ(edges[0].attributes.at("message"), "m1") << "the first statement stays the evidence";

  apply_at("m3", "2026-09-01T09:00:00Z", 2,
           relation_extraction("Mei Chen", schemas::entity_kind::organization, "Contoso", "works_at", false));
  edges = store_->entity_edges("acme", mei, true);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].attributes.at("validFrom"), "2026-09-01T09:00:00Z");
  EXPECT_FALSE(edges[0].attributes.count("validTo"));

  // A technology is an entity of its type, in the entity tools' id space.
  apply_at("m4", "2026-09-02T09:00:00Z", 3,
           relation_extraction("Mei Chen", schemas::entity_kind::technology, "Snowflake", "uses", false));
  const auto snowflake = store_->entity_id("acme", "Snowflake");
  EXPECT_EQ(snowflake, "entity:snowflake");
  std::string name, type;
  ASSERT_TRUE(store_->entity_name("acme", snowflake, &name, &type));
  EXPECT_EQ(type, "technology");
  // Another organisation sees none of it.
  EXPECT_TRUE(store_->entity_id("globex", "Snowflake").empty());
}

/// search_nodes narrows its scan by the entities' 3-byte sequences: every entity holding a
/// needle in its lower-case name, type or observations is visited (after added and deleted
/// observations, a deleted entity, and a reopen that rebuilds the index), and a needle only
/// one entity holds visits that one alone. The memory tools then show the matches from
/// memory too (entity_cards).
TEST_F(GraphStoreTest, ASubstringScanVisitsEveryEntityThatHoldsTheNeedleAndCardsShowThem) {
  const std::vector<std::string> words = {"alpha", "beta", "Gamma", "delta", "status active", "dormant", "née", "x"};
  std::uint32_t seed = 7;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) % 1000; };
  schemas::entity_command add;
  add.event_id = "add";
  add.organization_id = "acme";
  for (int i = 0; i < 120; ++i) {
    std::vector<std::string> obs;
    for (int k = 0; k < 3; ++k)
      obs.push_back(words[next() % words.size()] + " " + std::to_string(next()));
    add.entities.push_back({"Ent-" + std::to_string(1000 + i), "Kind" + std::to_string(i % 7), {}, obs});
  }
  std::int64_t offset = 0;
  auto run = [&](schemas::entity_command c) {
    storage::entity_result r;
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply_entity_command({"engram-log", 0, offset++, "cluster-a"}, c, &r, &out), storage::errc::ok);
  };
  run(add);
  schemas::entity_command more;
  more.op = schemas::entity_op::add_observations;
  more.event_id = "more";
  more.organization_id = "acme";
  more.observations = {{"Ent-1003", {"Zebra crossing"}}, {"Ent-1004", {"quokka"}}};
  run(more);
  schemas::entity_command fewer = more;
  fewer.op = schemas::entity_op::delete_observations;
  fewer.event_id = "fewer";
  fewer.observations = {{"Ent-1004", {"quokka"}}};
  run(fewer);
  schemas::entity_command gone;
  gone.op = schemas::entity_op::delete_entities;
  gone.event_id = "gone";
  gone.organization_id = "acme";
  gone.names = {"Ent-1005"};
  run(gone);

  auto holders = [&](std::string_view needle) {
    std::set<std::string> out;
    store_->scan_entities("acme", [&](const storage::entity_summary& e) {
      if (e.name_lc.find(needle) != std::string_view::npos || e.type_lc.find(needle) != std::string_view::npos ||
          e.observations_lc.find(needle) != std::string_view::npos)
        out.insert(std::string(e.name));
    });
    return out;
  };
  auto visited = [&](std::string_view needle) {
    std::set<std::string> out;
    store_->scan_entities_containing("acme", needle, [&](const storage::entity_summary& e) {
      EXPECT_TRUE(out.insert(std::string(e.name)).second) << "visited twice: " << e.name;
    });
    return out;
  };
  auto check = [&] {
    for (std::string needle : {"alpha", "status act", "ent-10", "kind3", "née", "a", "ta", "zebra crossing", "quokka",
                               "ent-1005", "nothing", "1\nd"}) {
      const auto want = holders(needle), got = visited(needle);
      EXPECT_TRUE(std::includes(got.begin(), got.end(), want.begin(), want.end())) << needle;
      EXPECT_FALSE(got.count("Ent-1005")) << needle << ": a deleted entity";
    }
    EXPECT_EQ(visited("zebra crossing"), (std::set<std::string>{"Ent-1003"}));
    EXPECT_EQ(visited("quokka"), std::set<std::string>{});
    EXPECT_EQ(visited("ent-1011"), (std::set<std::string>{"Ent-1011"}));
    EXPECT_EQ(visited("ta").size(), 119u);  // shorter than 3 bytes: every entity
    EXPECT_EQ(visited("kind3"), holders("kind3"));
  };
  check();
  reopen();
  check();

  // Cards: an entity's edges with the other end's name, from memory; an entity related to
  // itself can be deleted, and its edges go with it.
  schemas::entity_command relate;
  relate.op = schemas::entity_op::relate;
  relate.event_id = "relate";
  relate.organization_id = "acme";
  relate.relations = {{"Ent-1006", "Ent-1006", "knows"}, {"Ent-1006", "Ent-1007", "knows"}};
  run(relate);
  const auto id6 = store_->entity_id("acme", "Ent-1006"), id7 = store_->entity_id("acme", "Ent-1007");
  auto cards = store_->entity_cards("acme", {id7, "no-such-id", id6}, true);
  ASSERT_EQ(cards.size(), 2u);
  EXPECT_EQ(cards[0].name, "Ent-1007");
  EXPECT_EQ(cards[0].type, "Kind0");
  ASSERT_EQ(cards[0].edges.size(), 1u);
  EXPECT_EQ(cards[0].edges[0].other_name, "Ent-1006");
  EXPECT_FALSE(cards[0].edges[0].outgoing);
  EXPECT_EQ(cards[1].edges.size(), 3u);  // to itself (out and in), to Ent-1007
  EXPECT_EQ(store_->entity_cards("acme", {id6}, false)[0].edges.size(), 2u);
  // The index's bytes are on /metrics (engram_memory_bytes{part="entities"}): ~120 entities
  // with three observations each hold some KB, and fewer after a delete.
  const auto held = store_->memory_stats().at("entities");
  EXPECT_GT(held, 120u * 300);
  gone.event_id = "gone-again";
  gone.names = {"Ent-1006"};
  run(gone);
  EXPECT_LT(store_->memory_stats().at("entities"), held);
  cards = store_->entity_cards("acme", {id7, id6}, true);
  ASSERT_EQ(cards.size(), 1u);
  EXPECT_TRUE(cards[0].edges.empty());
  EXPECT_EQ(cards[0].observations.size(), 3u);
}

namespace {

/// An event with one fact and one passage (its words and a vector drawn from `seed`).
void apply_with_passage(storage::graph_store& s, const std::string& org, std::int64_t offset, const std::string& words,
                        std::uint32_t seed) {
  auto m = message(org, "evt-" + std::to_string(offset));
  schemas::extraction x;
  x.entries.emplace_back();
  x.entries[0].title = x.entries[0].content = x.entries[0].sig.words = words;
  x.entries[0].confidence = 0.8;
  x.passages.emplace_back();
  x.passages[0].text = x.passages[0].words = words;
  std::mt19937 gen(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(32);
  for (auto& f : v)
    f = d(gen);
  x.passages[0].embedding = schemas::quantise(v);
  storage::apply_outcome out{};
  ASSERT_EQ(s.apply({"engram-log", 0, offset, "c"}, &m, &x, nullptr, &out), storage::errc::ok);
}

/// What a recall reads of the in-memory indexes, for a few queries in two organisations.
std::string answers(const storage::graph_store& s) {
  json out = json::array();
  for (const char* org : {"acme", "northwind"})
    for (const auto& words : std::vector<std::vector<std::string>>{{"renew"}, {"contract", "filler3"}, {"word2"}}) {
      out.push_back(s.search_text(org, words, 8));
      out.push_back(s.search_passages(org, words, 8));
    }
  std::mt19937 gen(99);
  std::normal_distribution<float> d;
  for (int q = 0; q < 5; ++q) {
    std::vector<float> v(32);
    for (auto& f : v)
      f = d(gen);
    out.push_back(s.nearest_passages("acme", schemas::quantise(v), 6));
  }
  const auto [passages, vectors] = s.passage_counts();
  out.push_back({passages, vectors});
  return out.dump();
}

}  // namespace

TEST_F(GraphStoreTest, APassageIsFoundByItsVectorAsSoonAsItsBatchIsApplied) {
  // The passages' HNSW inserts run off the writer's thread; a read waits for those of the
  // batches applied before it, so it answers as if the writer had inserted them itself.
  std::set<std::string> found;
  for (std::int64_t i = 0; i < 300; ++i) {
    apply_with_passage(*store_, "acme", i, "words of passage " + std::to_string(i), static_cast<std::uint32_t>(i));
    std::mt19937 gen(static_cast<std::uint32_t>(i));  // the vector apply_with_passage drew
    std::normal_distribution<float> d;
    std::vector<float> v(32);
    for (auto& f : v)
      f = d(gen);
    const auto hits = store_->nearest_passages("acme", schemas::quantise(v), 1);
    ASSERT_EQ(hits.size(), 1u) << i;
    EXPECT_GT(hits[0].second, 0.999f) << i;
    EXPECT_TRUE(found.insert(hits[0].first).second) << i << ": an earlier passage answered";
    ASSERT_EQ(store_->passage_counts(), std::make_pair(std::size_t(i + 1), std::size_t(i + 1)));
  }
}

class IndexSnapshotTest : public GraphStoreTest {
protected:
  void fill(std::int64_t from, std::int64_t to) {
    for (std::int64_t i = from; i < to; ++i)
      apply_with_passage(*store_, i % 5 ? "acme" : "northwind", i,
                         "renew filler" + std::to_string(i % 7) + " word" + std::to_string(i % 3),
                         static_cast<std::uint32_t>(i));
  }
  /// The answers of a store opened on a copy of this one's rows with no snapshot: a rebuild.
  std::string rebuilt_answers() {
    const auto copy = dir_.string() + "-rebuilt";
    extra_.push_back(copy);
    std::filesystem::remove_all(copy);
    std::filesystem::copy(dir_, copy, std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(copy + "/indexes");
    storage::open_options o;
    o.path = copy;
    auto s = storage::open_graph_store(o);
    EXPECT_TRUE(s) << s.error();
    EXPECT_FALSE((*s)->indexes_origin().from_snapshot);
    return answers(**s);
  }
};

TEST_F(IndexSnapshotTest, IndexesSavedAtAStopAreLoadedAtTheNextOpenAndAnswerAsTheStoreDid) {
  EXPECT_FALSE(store_->indexes_origin().from_snapshot);
  fill(0, 300);
  const auto live = answers(*store_);
  ASSERT_TRUE(store_->save_indexes());
  reopen();
  EXPECT_TRUE(store_->indexes_origin().from_snapshot) << store_->indexes_origin().why_rebuilt;
  EXPECT_EQ(answers(*store_), live);
  // Opened again without a write in between (as after a kill -9 with nothing applied): the
  // mark still names what the store holds.
  reopen();
  EXPECT_TRUE(store_->indexes_origin().from_snapshot);
  EXPECT_EQ(answers(*store_), live);
  store_.reset();
  EXPECT_EQ(rebuilt_answers(), live);
}

TEST_F(IndexSnapshotTest, BatchesAfterASaveAreJournaledAndAnOpenAfterAKillAppliesThemToTheSnapshot) {
  fill(0, 100);
  ASSERT_TRUE(store_->save_indexes());
  fill(100, 130);  // batches after the save: postings and passage vectors added
  const auto removed = schemas::entry_id("acme", "evt-101", 0);
  ASSERT_TRUE(store_->search_text("acme", {"filler3"}, 200).size() > 0);
  EXPECT_EQ(forget_entry(*store_, removed, 1000), "");  // postings removed
  ASSERT_EQ(store_->drop_held("northwind"), storage::errc::ok);
  fill(130, 160);  // northwind again after its drop
  EXPECT_TRUE(store_->indexes_current());
  EXPECT_TRUE(store_->since_snapshot("northwind").dropped);
  EXPECT_FALSE(store_->since_snapshot("acme").dropped);
  const auto live = answers(*store_);
  for (const auto& [id, score] : store_->search_text("acme", {"filler3"}, 200))
    EXPECT_NE(id, removed);

  reopen();  // the process dies without a save: no mark written since, the journal stands
  ASSERT_TRUE(store_->indexes_origin().from_snapshot) << store_->indexes_origin().why_rebuilt;
  // One row a batch that changed the indexes: acme's 48 events and its forget, northwind's
  // drop and its 6 events after it (its 6 before went with the drop).
  EXPECT_EQ(store_->indexes_origin().journal_rows, 48u + 1 + 1 + 6);
  EXPECT_EQ(answers(*store_), live);
  EXPECT_TRUE(store_->since_snapshot("northwind").dropped) << "the journal's drop is reported after the open";
  EXPECT_TRUE(store_->indexes_current());

  fill(160, 170);  // a second life, killed too: its rows follow the first life's
  const auto later = answers(*store_);
  EXPECT_NE(later, live);
  reopen();
  ASSERT_TRUE(store_->indexes_origin().from_snapshot) << store_->indexes_origin().why_rebuilt;
  EXPECT_EQ(answers(*store_), later);

  ASSERT_TRUE(store_->save_indexes());  // a save deletes the journal with the old mark
  reopen();
  ASSERT_TRUE(store_->indexes_origin().from_snapshot);
  EXPECT_EQ(store_->indexes_origin().journal_rows, 0u);
  EXPECT_FALSE(store_->since_snapshot("northwind").dropped);
  EXPECT_EQ(answers(*store_), later);
  store_.reset();
  EXPECT_EQ(rebuilt_answers(), later);
}

TEST_F(IndexSnapshotTest, AJournalRowThatDoesNotHoldTogetherIsRebuiltFromTheRowsAndTheMarkGoes) {
  fill(0, 60);
  ASSERT_TRUE(store_->save_indexes());
  fill(60, 80);
  const auto live = answers(*store_);
  store_.reset();
  {  // one journal row cut short, as no batch writes it
    auto kv = storage::detail::open_rocks_kv({dir_.string()});
    ASSERT_TRUE(kv) << kv.error();
    using namespace storage::detail;
    auto it = (*kv)->iterate(cf_meta);
    const auto prefix = key(meta_tag::index_journal, "");
    it->seek(prefix);
    ASSERT_TRUE(it->valid() && it->key().starts_with(prefix));
    kv_batch b;
    b.put(cf_meta, it->key(), it->value().substr(0, it->value().size() - 1));
    ASSERT_EQ((*kv)->write(b), storage::errc::ok);
  }
  reopen();
  EXPECT_FALSE(store_->indexes_origin().from_snapshot);
  EXPECT_NE(store_->indexes_origin().why_rebuilt.find("journal row"), std::string::npos)
      << store_->indexes_origin().why_rebuilt;
  EXPECT_EQ(answers(*store_), live);
  EXPECT_FALSE(store_->indexes_current()) << "the mark that named it is gone";
  fill(80, 90);
  const auto after = answers(*store_);
  reopen();
  EXPECT_FALSE(store_->indexes_origin().from_snapshot);
  EXPECT_EQ(answers(*store_), after);
}

TEST_F(IndexSnapshotTest, ACheckpointSavesAfterEveryNBatchesAndAFailedOneWaitsNMoreBeforeTryingAgain) {
  int tried = 0;
  bool fail_first = true;
  auto first = [&]() -> engram::result<void> {
    ++tried;
    if (fail_first)
      return engram::fail("dedup's snapshot not written");
    return {};
  };
  fill(0, 9);
  auto r = store_->checkpoint_indexes(10, first);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r) << "9 batches: not due";
  fill(9, 10);
  r = store_->checkpoint_indexes(10, first);
  EXPECT_FALSE(r) << "due, and the other snapshot failed";
  EXPECT_EQ(tried, 1);
  EXPECT_FALSE(store_->indexes_current()) << "nothing of the store's written after the other's failure";
  fill(10, 15);
  r = store_->checkpoint_indexes(10, first);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r) << "a failure waits 10 more batches, not one";
  EXPECT_EQ(tried, 1);
  fail_first = false;
  fill(15, 20);
  r = store_->checkpoint_indexes(10, first);
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
  EXPECT_EQ(tried, 2);
  EXPECT_TRUE(store_->indexes_current());
  const auto live = answers(*store_);
  fill(20, 25);
  r = store_->checkpoint_indexes(10, first);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r) << "the count starts again at the save";
  const auto later = answers(*store_);
  reopen();  // a kill: the checkpoint's snapshot and 5 journal rows
  ASSERT_TRUE(store_->indexes_origin().from_snapshot) << store_->indexes_origin().why_rebuilt;
  EXPECT_EQ(store_->indexes_origin().journal_rows, 5u);
  EXPECT_EQ(answers(*store_), later);
  EXPECT_NE(later, live);
}

TEST_F(IndexSnapshotTest, ASnapshotThatIsNotWhatItsMarkNamesIsRebuiltNeverServed) {
  fill(0, 200);
  const auto live = answers(*store_);
  ASSERT_TRUE(store_->save_indexes());
  store_.reset();
  const auto main = dir_ / "indexes" / "indexes.bin";
  auto flip = [](const std::filesystem::path& p, std::uintmax_t at) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x5a));
  };
  flip(main, std::filesystem::file_size(main) / 2);
  reopen();
  EXPECT_FALSE(store_->indexes_origin().from_snapshot);
  EXPECT_NE(store_->indexes_origin().why_rebuilt.find("checksum"), std::string::npos)
      << store_->indexes_origin().why_rebuilt;
  EXPECT_EQ(answers(*store_), live);

  // A passage vector file changed under a good main file.
  ASSERT_TRUE(store_->save_indexes());
  store_.reset();
  std::filesystem::path hnsw;
  for (const auto& f : std::filesystem::directory_iterator(dir_ / "indexes"))
    if (f.path().string().ends_with(".passages.hnsw"))
      hnsw = f.path();
  ASSERT_FALSE(hnsw.empty());
  flip(hnsw, std::filesystem::file_size(hnsw) - 3);
  reopen();
  EXPECT_FALSE(store_->indexes_origin().from_snapshot);
  EXPECT_NE(store_->indexes_origin().why_rebuilt.find(".passages.hnsw"), std::string::npos)
      << store_->indexes_origin().why_rebuilt;
  EXPECT_EQ(answers(*store_), live);
}

TEST_F(IndexSnapshotTest, ADroppedOrganisationLeavesNoFileAndTheLoadedStoreDoesNotHoldIt) {
  fill(0, 100);
  ASSERT_TRUE(store_->save_indexes());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ / "indexes"), {}), 2 * 2 + 1)
      << "two organisations' vector files with their checksums, and indexes.bin";
  ASSERT_EQ(store_->drop_held("northwind"), storage::errc::ok);
  const auto live = answers(*store_);
  ASSERT_TRUE(store_->save_indexes());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ / "indexes"), {}), 2 + 1);
  reopen();
  EXPECT_TRUE(store_->indexes_origin().from_snapshot);
  EXPECT_EQ(answers(*store_), live);
  EXPECT_TRUE(store_->search_passages("northwind", {"renew"}, 8).empty());
}
