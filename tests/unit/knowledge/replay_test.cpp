// Dedup and contradiction decide the same way whenever the same events are applied in the
// same order: two runs of one stream give one digest, and so does a run interrupted by a
// restart (index loaded from its snapshot, or rebuilt from the vectors column family).
// The stream: the demo stream plus the labelled pairs and contradiction cases as messages,
// so merges, links, supersedes and contradicts all happen.

#include "reading/extract.hpp"
#include "reading/read.hpp"
#include "actors/store/store_router.hpp"
#include "actors/store/store_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <caf/all.hpp>

#include <filesystem>
#include <future>
#include <map>
#include <tuple>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace engram;

namespace {

using json = nlohmann::json;

class ReplayTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    auto loaded = embedding::use_lite_int8_embedder::load(ENGRAM_MODEL_PATH);  // what engramd runs
    ASSERT_TRUE(loaded) << loaded.error();
    model_ = loaded->release();
    stream_ = new std::vector<actors::log_record>(build_stream());
  }
  static void TearDownTestSuite() {
    delete model_;
    delete stream_;
    delete one_run_;
  }

  /// The digest of the whole stream applied in one run to a store of its own, computed once
  /// per suite: what an interrupted run must end at.
  const std::string& one_run_digest() {
    if (!one_run_) {
      auto full = open(dir("full"), "");
      apply(*full, 0, stream_->size());
      one_run_ = new std::string(full->store->digest());
    }
    return *one_run_;
  }

  /// Every event of the stream, extracted and embedded once (what the extractor stage does).
  static std::vector<actors::log_record> build_stream() {
    std::vector<std::string> lines;
    std::ifstream demo(ENGRAM_SOURCE_DIR "/tools/samples/demo-stream.jsonl");
    for (std::string line; std::getline(demo, line);)
      if (!line.empty())
        lines.push_back(line);
    int n = 0;
    auto message = [&](const std::string& org, const std::string& from, const std::string& text) {
      char sent[32];
      std::snprintf(sent, sizeof sent, "2026-04-%02dT%02d:%02d:00Z", 1 + n / 600, (n / 60) % 10 + 8, n % 60);
      ++n;
      return json{
          {"eventId", "gen-" + std::to_string(n)}, {"organizationId", org}, {"sourceType", "email"}, {"sentAt", sent},
          {"from", {{"address", from}}},           {"subject", "update"},   {"body", text}}
          .dump();
    };
    std::ifstream pairs(ENGRAM_SOURCE_DIR "/tests/data/dedup/pairs.jsonl");
    for (std::string line; std::getline(pairs, line);) {
      auto p = json::parse(line);
      lines.push_back(message("acme", "sarah@acme.example", p["a"]));
      lines.push_back(message("acme", "sarah@acme.example", p["b"]));
    }
    std::ifstream cases(ENGRAM_SOURCE_DIR "/tests/data/contradiction/cases.jsonl");
    for (std::string line; std::getline(cases, line);) {
      auto c = json::parse(line);
      lines.push_back(message("acme", c["older"]["from"], c["older"]["text"]));
      lines.push_back(message("acme", c["newer"]["from"], c["newer"]["text"]));
    }
    std::vector<actors::log_record> out;
    reading::validator_options vo;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      schemas::extracted_message m;
      EXPECT_FALSE(schemas::decode(lines[i], {}, m.message)) << lines[i];
      m.knowledge = reading::extract_validated(m.message, vo);
      schemas::extraction* xs[] = {&m.knowledge};
      auto embedded = reading::embed_entries(*model_, xs);
      EXPECT_TRUE(embedded) << embedded.error();
      actors::log_record rec;
      rec.position = {"engram-log", 0, static_cast<std::int64_t>(i), "test"};
      rec.payload = std::move(m);
      out.push_back(std::move(rec));
    }
    return out;
  }

  std::string dir(const std::string& name) {
    auto d = std::filesystem::temp_directory_path() / ("engram-replay-" + std::to_string(::getpid()) + "-" + name);
    dirs_.push_back(d.string());
    return d.string();
  }
  void TearDown() override {
    for (const auto& d : dirs_)
      std::filesystem::remove_all(d);
  }

  struct run {
    std::shared_ptr<storage::graph_store> store;
    actors::resolver resolve;
    std::map<std::string, std::size_t> outcomes;
  };

  /// The store's actors as engramd spawns them on `r`'s store: `n` appliers, behind the
  /// router when there are several; stopped when it goes.
  struct store_actors {
    std::shared_ptr<actors::resolver> resolve;
    services::metrics counters;
    actors::ingest_status status;
    std::vector<actors::stage_actor> appliers;
    actors::stage_actor front;
    store_actors(caf::actor_system& sys, run& r, std::size_t n)
        : resolve(std::make_shared<actors::resolver>(std::move(r.resolve))) {
      for (std::size_t i = 0; i < n; ++i)
        appliers.push_back(sys.spawn<caf::detached>(actors::store_writer, r.store, resolve, &counters, &status, nullptr,
                                                    "store-applier-" + std::to_string(i)));
      front = n == 1 ? appliers[0] : sys.spawn(actors::store_router, appliers, &counters);
    }
    ~store_actors() {
      caf::anon_send_exit(front, caf::exit_reason::user_shutdown);
      for (auto& a : appliers)
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
  };

  /// Puts acme's records on partition 0 and northwind's on partition 1, offsets in stream
  /// order; returns each partition's next offset.
  static std::map<std::int32_t, std::int64_t> on_two_partitions(std::vector<actors::log_record>& records) {
    std::map<std::int32_t, std::int64_t> next;
    for (auto& rec : records) {
      rec.position.partition = schemas::organization_of(*rec.payload) == "acme" ? 0 : 1;
      rec.position.offset = next[rec.position.partition]++;
    }
    return next;
  }

  static std::map<std::int32_t, std::int64_t> offsets_of(const storage::graph_store& store) {
    std::map<std::int32_t, std::int64_t> o;
    for (const auto& [partition, at] : store.offsets("engram-log"))
      o[partition] = at.next_offset;
    return o;
  }

  /// Opens (or reopens) a store and its resolver, loading index snapshots from `snapshots`.
  static std::unique_ptr<run> open(const std::string& path, const std::string& snapshots,
                                   std::size_t facts_cached = dedup::dedup_options{}.facts_cached) {
    auto r = std::make_unique<run>();
    auto opened = storage::open_graph_store({path});
    EXPECT_TRUE(opened) << opened.error();
    if (opened)
      r->store = std::move(*opened);
    dedup::dedup_options d;
    d.facts_cached = facts_cached;
    r->resolve.dedup = std::make_unique<dedup::deduplicator>(r->store, d);
    r->resolve.contradiction =
        std::make_unique<contradiction::contradiction_finder>(r->store, r->resolve.dedup->reader());
    auto indexes = r->resolve.dedup->open(snapshots);
    EXPECT_TRUE(indexes) << indexes.error();
    return r;
  }

  static void apply(run& r, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      storage::apply_outcome outcome{};
      services::applied_event answer;
      ASSERT_EQ(actors::resolve_and_apply(*r.store, &r.resolve, (*stream_)[i], &outcome, &answer), storage::errc::ok);
      for (const auto& d : answer.resolutions) {
        ++r.outcomes[std::string(schemas::to_string(d.outcome))];
        r.outcomes["contradicts"] += d.flagged.size();
      }
    }
  }

  static embedding::use_lite_int8_embedder* model_;
  static std::string* one_run_;
  static std::vector<actors::log_record>* stream_;
  std::vector<std::string> dirs_;
};

embedding::use_lite_int8_embedder* ReplayTest::model_ = nullptr;
std::string* ReplayTest::one_run_ = nullptr;
std::vector<actors::log_record>* ReplayTest::stream_ = nullptr;

TEST_F(ReplayTest, CandidatesReadFromDedupsCacheDecideAsCandidatesReadFromTheStore) {
  // Dedup keeps the facts of the candidates it read, forgetting each entry the store writes
  // (a superseded one's status), and contradiction reads its slot candidates through them:
  // the same stream decides the same with no cache at all and with a cache of a few entries
  // (always evicting).
  auto cached = open(dir("cached"), "");
  apply(*cached, 0, stream_->size());
  auto uncached = open(dir("uncached"), "", 0);
  apply(*uncached, 0, stream_->size());
  auto small = open(dir("small"), "", 3);
  apply(*small, 0, stream_->size());
  EXPECT_GT(cached->outcomes["superseded"], 0u);
  EXPECT_GT(cached->outcomes["merged"], 0u);
  EXPECT_EQ(cached->outcomes, uncached->outcomes);
  EXPECT_EQ(cached->store->digest(), uncached->store->digest());
  EXPECT_EQ(small->store->digest(), uncached->store->digest());
}

TEST_F(ReplayTest, SameStreamTwiceGivesTheSameDigest) {
  auto a = open(dir("a"), "");
  apply(*a, 0, stream_->size());
  auto b = open(dir("b"), "");
  apply(*b, 0, stream_->size());
  EXPECT_EQ(a->store->digest(), b->store->digest());
  EXPECT_EQ(a->outcomes, b->outcomes);
  // The stream exercises every decision.
  for (const char* o : {"created", "merged", "linked", "superseded", "contradicts"})
    EXPECT_GT(a->outcomes[o], 0u) << o;
  std::cout << "[ figures  ] outcomes:";
  for (const auto& [k, v] : a->outcomes)
    std::cout << " " << k << "=" << v;
  std::cout << "\n";
}

TEST_F(ReplayTest, RestartFromSnapshotOrRebuildGivesTheSameDigest) {
  const auto want = one_run_digest();
  const std::size_t half = stream_->size() / 2;
  for (bool snapshot : {true, false}) {
    auto path = dir(snapshot ? "snap" : "rebuild");
    auto snaps = path + "/vector-index";
    {
      auto first = open(path, snaps);
      apply(*first, 0, half);
      if (snapshot) {
        auto saved = first->resolve.dedup->save(snaps);
        ASSERT_TRUE(saved) << saved.error();
      }
    }
    // Applied after the snapshot: the restart must add these from the vectors family.
    {
      auto more = open(path, "");
      apply(*more, half, half + 25);
    }
    auto second = open(path, snaps);
    if (snapshot) {
      EXPECT_GT(second->resolve.dedup->total_size(), 0u);
    }
    apply(*second, half + 25, stream_->size());
    EXPECT_EQ(second->store->digest(), want) << (snapshot ? "from a snapshot" : "rebuilt");
  }
}

TEST_F(ReplayTest, AStopsSnapshotsAreLoadedAsCurrentAndTheRestAppliesAsInOneRun) {
  const auto want = one_run_digest();
  const auto path = dir("stopped");
  const auto snaps = path + "/vector-index";
  std::size_t vectors = 0;
  {  // a stop: dedup's snapshots, then the store's indexes
    auto first = open(path, snaps);
    apply(*first, 0, stream_->size() / 2);
    vectors = first->resolve.dedup->total_size();
    ASSERT_TRUE(first->resolve.dedup->save(snaps));
    ASSERT_TRUE(first->store->save_indexes());
    EXPECT_TRUE(first->store->indexes_current());
  }
  auto second = open(path, snaps);
  EXPECT_TRUE(second->store->indexes_origin().from_snapshot) << second->store->indexes_origin().why_rebuilt;
  EXPECT_TRUE(second->store->indexes_current());
  EXPECT_EQ(second->resolve.dedup->total_size(), vectors);
  apply(*second, stream_->size() / 2, stream_->size());
  EXPECT_TRUE(second->store->indexes_current()) << "the batches since are journaled";
  EXPECT_EQ(second->store->digest(), want);
  const auto live_vectors = second->resolve.dedup->total_size();
  second.reset();  // no stop: as after a kill -9
  auto third = open(path, snaps);
  EXPECT_TRUE(third->store->indexes_origin().from_snapshot) << third->store->indexes_origin().why_rebuilt;
  EXPECT_GT(third->store->indexes_origin().journal_rows, 0u);
  EXPECT_EQ(third->resolve.dedup->total_size(), live_vectors)
      << "dedup's snapshot, the vectors after it, the removed ones hidden from the journal";
  third.reset();
  auto rebuilt = open(path, "");  // dedup rebuilt from the store's rows
  EXPECT_EQ(rebuilt->resolve.dedup->total_size(), live_vectors);
}

TEST_F(ReplayTest, AnEntryForgottenAfterTheStopsSnapshotsStaysHiddenFromDedupAfterAKill) {
  const auto path = dir("forgot");
  const auto snaps = path + "/vector-index";
  {  // a stop: dedup's snapshots, then the store's indexes
    auto first = open(path, snaps);
    apply(*first, 0, stream_->size() / 2);
    ASSERT_TRUE(first->resolve.dedup->save(snaps));
    ASSERT_TRUE(first->store->save_indexes());
  }
  auto second = open(path, snaps);
  const auto org = second->store->vector_sequences().begin()->first;
  std::string id;
  schemas::vector8 v;
  ASSERT_EQ(second->store->scan_vectors(org, 0,
                                        [&](std::uint64_t, std::string_view entry, const schemas::vector8& vec) {
                                          id = entry;
                                          v = vec;
                                          return false;
                                        }),
            storage::errc::ok);
  ASSERT_FALSE(id.empty());
  auto finds = [&](const run& r) {
    for (const auto& [near, similarity] : r.resolve.dedup->nearest(org, v, 5))
      if (near == id)
        return true;
    return false;
  };
  ASSERT_TRUE(finds(*second));
  schemas::knowledge_command c;
  c.event_id = "forget-" + id;
  c.organization_id = org;
  c.issued_at = "2026-06-01T00:00:00Z";
  c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
  c.issued_by = "test";
  c.op = schemas::command_op::forget;
  c.what = "entry";
  c.id = id;
  actors::log_record rec;
  rec.position = {"engram-log", 0, static_cast<std::int64_t>(stream_->size()) + 10, "test"};
  rec.payload = c;
  storage::apply_outcome outcome{};
  ASSERT_EQ(actors::resolve_and_apply(*second->store, &second->resolve, rec, &outcome), storage::errc::ok);
  ASSERT_EQ(outcome, storage::apply_outcome::applied);
  EXPECT_FALSE(finds(*second));
  EXPECT_EQ(second->store->since_snapshot(org).removed_vectors.size(), 1u);
  second.reset();  // no stop: as after a kill -9; dedup's snapshot still holds the vector
  auto third = open(path, snaps);
  ASSERT_TRUE(third->store->indexes_current()) << third->store->indexes_origin().why_rebuilt;
  EXPECT_FALSE(finds(*third)) << "the journal names the vector removed after dedup's snapshot";
  // A stop now writes dedup's file again (it holds the vector hidden at this open), then the
  // store's snapshot, which drops the journal: the next open has only the files to go by.
  auto written = third->resolve.dedup->save(snaps);
  ASSERT_TRUE(written) << written.error();
  EXPECT_GE(*written, 1u);
  auto saved = third->store->save_indexes();
  ASSERT_TRUE(saved) << saved.error();
  EXPECT_TRUE(*saved) << "the journal's rows were replayed at the open";
  third.reset();
  auto fourth = open(path, snaps);
  EXPECT_EQ(fourth->store->indexes_origin().journal_rows, 0u);
  EXPECT_FALSE(finds(*fourth)) << "dedup's file was written without the vector";
}

TEST_F(ReplayTest, AStopWithNothingChangedSinceTheOpenRewritesNoSnapshotAndTheNextOpenLoadsTheSame) {
  const auto want = one_run_digest();
  const auto path = dir("idle");
  const auto snaps = path + "/vector-index";
  const auto stop = [&](run& r) {  // dedup's snapshots, then the store's: what each wrote
    auto written = r.resolve.dedup->save(snaps);
    EXPECT_TRUE(written) << written.error();
    auto saved = r.store->save_indexes();
    EXPECT_TRUE(saved) << saved.error();
    return std::pair{written ? *written : 0, saved && *saved};
  };
  // Each snapshot file's inode: a save writes a new file and renames it into place.
  const auto inodes = [&] {
    std::map<std::string, ino_t> out;
    for (const auto& d : {snaps, path + "/indexes"})
      for (const auto& f : std::filesystem::directory_iterator(d)) {
        struct stat st {};
        EXPECT_EQ(::stat(f.path().c_str(), &st), 0) << f.path();
        out[f.path().string()] = st.st_ino;
      }
    return out;
  };
  {
    auto first = open(path, snaps);
    apply(*first, 0, stream_->size() / 2);
    const auto [organisations, store] = stop(*first);
    EXPECT_GT(organisations, 0u);
    EXPECT_TRUE(store);
  }
  const auto before = inodes();
  {
    auto idle = open(path, snaps);
    EXPECT_TRUE(idle->store->indexes_origin().from_snapshot) << idle->store->indexes_origin().why_rebuilt;
    const auto [organisations, store] = stop(*idle);
    EXPECT_EQ(organisations, 0u);
    EXPECT_FALSE(store);
  }
  EXPECT_EQ(inodes(), before) << "a stop after an idle run rewrites nothing";
  {
    auto second = open(path, snaps);
    apply(*second, stream_->size() / 2, stream_->size());
    const auto [organisations, store] = stop(*second);
    EXPECT_GT(organisations, 0u);
    EXPECT_TRUE(store);
  }
  EXPECT_NE(inodes(), before);
  auto third = open(path, snaps);
  EXPECT_TRUE(third->store->indexes_origin().from_snapshot) << third->store->indexes_origin().why_rebuilt;
  EXPECT_EQ(third->store->indexes_origin().journal_rows, 0u);
  EXPECT_EQ(third->store->digest(), want);
}

TEST_F(ReplayTest, SnapshotsAreWrittenEverySoManyBatchesSoACrashReindexesAtMostThatMany) {
  const auto want = one_run_digest();
  const auto path = dir("every");
  const auto snaps = path + "/vector-index";
  constexpr std::uint64_t every = 25;
  std::size_t vectors = 0;
  {
    auto live = open(path, snaps);  // a first open: nothing saved yet
    EXPECT_FALSE(live->store->indexes_current());
    live->resolve.snapshot_dir = snaps;
    live->resolve.snapshot_every = every;
    apply(*live, 0, stream_->size());
    EXPECT_TRUE(live->store->indexes_current()) << "a checkpoint wrote and marked the snapshots";
    EXPECT_TRUE(std::filesystem::exists(path + "/indexes/indexes.bin"));
    vectors = live->resolve.dedup->total_size();
  }  // no stop: as after a kill -9
  auto after = open(path, snaps);
  ASSERT_TRUE(after->store->indexes_origin().from_snapshot) << after->store->indexes_origin().why_rebuilt;
  EXPECT_LT(after->store->indexes_origin().journal_rows, every);
  EXPECT_EQ(after->resolve.dedup->total_size(), vectors);
  EXPECT_EQ(after->store->digest(), want);
}

// engramd opens dedup on a thread of its own, beside the consumer's start: every use waits
// for the open, so what is resolved right after it is decided on the whole index.
TEST_F(ReplayTest, AnOpenInTheBackgroundIsWaitedForByEveryUseAndDecidesAsOneRun) {
  const auto want = one_run_digest();
  const auto path = dir("background");
  const auto snaps = path + "/vector-index";
  const std::size_t half = stream_->size() / 2;
  std::size_t vectors = 0;
  {
    auto first = open(path, snaps);
    apply(*first, 0, half);
    ASSERT_TRUE(first->resolve.dedup->save(snaps));
    apply(*first, half, half + 25);  // after the snapshot: the open adds these from the store
    vectors = first->resolve.dedup->total_size();
  }
  auto opened = storage::open_graph_store({path});
  ASSERT_TRUE(opened) << opened.error();
  run second;
  second.store = std::move(*opened);
  second.resolve.dedup = std::make_unique<dedup::deduplicator>(second.store, dedup::dedup_options{});
  second.resolve.contradiction = std::make_unique<contradiction::contradiction_finder>(second.store);
  second.resolve.dedup->open_in_background(snaps);
  // At once, without waiting: the next message is decided on the whole index, and the count
  // is the whole index's.
  apply(second, half + 25, half + 26);
  EXPECT_TRUE(second.resolve.dedup->opened());
  EXPECT_GE(second.resolve.dedup->total_size(), vectors);
  apply(second, half + 26, stream_->size());
  EXPECT_EQ(second.store->digest(), want);
  auto result = second.resolve.dedup->open_result();
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result->loaded, result->organizations) << "every organisation from its snapshot";
  EXPECT_EQ(result->vectors, vectors);
}

// An open that fails (vectors of another dimension than the embedder's) decides nothing and
// saves nothing: resolve throws, save says why, and open_result gives the error.
TEST_F(ReplayTest, AFailedOpenInTheBackgroundLetsNothingBeDecidedOrSaved) {
  const auto path = dir("failed");
  {
    auto first = open(path, "");
    apply(*first, 0, 10);
  }
  auto opened = storage::open_graph_store({path});
  ASSERT_TRUE(opened) << opened.error();
  run second;
  second.store = std::move(*opened);
  dedup::dedup_options other;
  other.dim = dedup::dedup_options{}.dim + 1;
  second.resolve.dedup = std::make_unique<dedup::deduplicator>(second.store, other);
  second.resolve.dedup->open_in_background("");
  const auto result = second.resolve.dedup->open_result();
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find("dimensions"), std::string::npos) << result.error();
  std::size_t refused = 0;
  for (std::size_t i = 10; i < 40; ++i) {
    storage::apply_outcome outcome{};
    services::applied_event answer;
    try {
      (void)actors::resolve_and_apply(*second.store, &second.resolve, (*stream_)[i], &outcome, &answer);
    } catch (const std::runtime_error& e) {
      ++refused;  // a message with entries to decide
      EXPECT_NE(std::string(e.what()).find("did not open"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(refused, 0u);
  const auto saved = second.resolve.dedup->save(path + "/vector-index");
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().find("did not open"), std::string::npos) << saved.error();
}

TEST_F(ReplayTest, ASnapshotOfAnotherStoreIsNotLoaded) {
  auto a = open(dir("one"), "");
  apply(*a, 0, 60);
  auto snaps = dir("snaps");
  auto saved = a->resolve.dedup->save(snaps);
  ASSERT_TRUE(saved) << saved.error();
  const auto two = dir("two");
  auto b = open(two, "");
  apply(*b, 0, 30);
  b.reset();
  auto reopened = open(two, "");
  auto st = reopened->resolve.dedup->open(snaps);
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(st->loaded, 0u);
  EXPECT_GT(st->rebuilt, 0u);
}

// The store's actors as engramd runs them: batches of records of both organisations, each on
// a partition of its own, go to one applier, or through the router to two or three appliers
// (partition p on applier p mod appliers; a batch of several appliers' records split and
// joined). The same records give the same store, digest and decisions whatever the number,
// and every batch is answered with all its records applied.
TEST_F(ReplayTest, OneApplierOrSeveralGiveTheSameStore) {
  std::vector<actors::log_record> records = *stream_;
  const auto next = on_two_partitions(records);
  ASSERT_GT(next.at(1), 0);
  auto run_with = [&](std::size_t appliers, const std::string& name) {
    auto r = open(dir(name), "");
    {
      caf::actor_system_config cfg;
      caf::actor_system sys{cfg};
      store_actors spawned(sys, *r, appliers);
      // Batches of 16 consecutive records of the stream: most hold both organisations.
      std::vector<std::future<actors::batch_result>> answers;
      for (std::size_t from = 0; from < records.size(); from += 16) {
        actors::event_batch b;
        b.records.assign(records.begin() + static_cast<std::ptrdiff_t>(from),
                         records.begin() + static_cast<std::ptrdiff_t>(std::min(records.size(), from + 16)));
        b.done = std::make_shared<std::promise<actors::batch_result>>();
        answers.push_back(b.done->get_future());
        caf::anon_send(spawned.front, std::move(b));
      }
      std::size_t done = 0;
      for (auto& a : answers) {
        const auto result = a.get();
        EXPECT_EQ(result.error, storage::errc::ok);
        done += result.done;
      }
      EXPECT_EQ(done, records.size());
    }
    EXPECT_EQ(offsets_of(*r->store), next);
    return std::tuple{r->store->digest(), r->store->digest("acme"), r->store->digest("northwind")};
  };
  const auto one = run_with(1, "one-applier");
  EXPECT_EQ(run_with(2, "two-appliers"), one);
  EXPECT_EQ(run_with(3, "three-appliers"), one);
}

// A revocation (event_batch::let_go set): the appliers apply nothing more of the batches they
// are given and answer them with the records not done; the offsets stay where the last
// applied record put them, so the partitions' next owner applies the rest, once.
TEST_F(ReplayTest, BatchesOfRevokedPartitionsAreAnsweredWithTheRestLeftForTheNextOwner) {
  ASSERT_GE(stream_->size(), 32u);
  std::vector<actors::log_record> records(stream_->begin(), stream_->begin() + 32);
  const auto next = on_two_partitions(records);
  auto r = open(dir("let-go"), "");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  store_actors spawned(sys, *r, 2);
  auto send = [&](std::size_t from, std::size_t to, bool let_go) {
    actors::event_batch b;
    b.records.assign(records.begin() + static_cast<std::ptrdiff_t>(from),
                     records.begin() + static_cast<std::ptrdiff_t>(to));
    b.done = std::make_shared<std::promise<actors::batch_result>>();
    b.let_go = std::make_shared<std::atomic<bool>>(let_go);
    auto answer = b.done->get_future();
    caf::anon_send(spawned.front, std::move(b));
    return answer.get();
  };
  const auto first = send(0, 16, false);
  EXPECT_EQ(first.done, 16u);
  const auto applied_before = offsets_of(*r->store);
  const auto revoked = send(16, 32, true);
  EXPECT_EQ(revoked.error, storage::errc::ok);
  EXPECT_EQ(revoked.done, 0u);
  EXPECT_EQ(offsets_of(*r->store), applied_before);
  const auto again = send(16, 32, false);  // the next owner, from the stored offsets
  EXPECT_EQ(again.done, 16u);
  EXPECT_EQ(offsets_of(*r->store), next);
}

}  // namespace
