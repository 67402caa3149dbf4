// The store's filesystem failing under engramd: a data directory that is read-only at
// start, on a read-only bind mount the test makes (tests run as root), is a clear error naming
// the directory and the reason, and engramd exits non-zero; a store written before and mounted
// read-only afterwards the same. Nothing is written to it. A store whose filesystem fills up
// mid-ingest (a small tmpfs the test makes): engramd stops applying, stays up for reads, says
// "disk full" with the path in /readyz and its log; given space while it runs, it goes on by
// itself, and restarted with space it resumes too, each to the graph of a run that never
// filled.

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

using namespace engram;
using namespace std::chrono_literals;

namespace {

/// `target` as a read-only view of `source` for the life of this object.
class read_only_mount {
public:
  read_only_mount(const std::string& source, const std::string& target) : target_(target) {
    std::filesystem::create_directories(target);
    if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
      error_ = std::string("bind mount: ") + std::strerror(errno);
    else if (::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      error_ = std::string("read-only remount: ") + std::strerror(errno);
    mounted_ = error_.empty() || error_.rfind("read-only", 0) == 0;
  }
  ~read_only_mount() {
    if (mounted_)
      ::umount2(target_.c_str(), MNT_DETACH);
  }
  [[nodiscard]] const std::string& error() const { return error_; }

private:
  std::string target_, error_;
  bool mounted_ = false;
};

TEST(StorageFaults, AReadOnlyDataDirectoryAtStartIsAClearErrorAndANonZeroExit) {
  test::temp_dir dir("storage-ro");
  auto broker = test::start_broker();
  // A store written once, then the whole data directory mounted read-only.
  {
    test::engramd engramd(test::engramd_args(broker->bootstrap(), dir.sub("data/store")), dir.sub("first.log"));
    const auto port = engramd.port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port); }, 60s)) << test::tail(dir.sub("first.log"));
    ASSERT_EQ(engramd.terminate(10s), 0);
  }
  read_only_mount ro(dir.sub("data"), dir.sub("ro"));
  ASSERT_EQ(ro.error(), "") << "the tests run as root (CI does)";
  for (const auto& store : {dir.sub("ro/store"), dir.sub("ro/new-store")}) {
    SCOPED_TRACE(store);
    const auto before = std::filesystem::exists(store) ? std::distance(std::filesystem::directory_iterator(store),
                                                                       std::filesystem::directory_iterator())
                                                       : -1;
    test::engramd engramd(test::engramd_args(broker->bootstrap(), store), dir.sub("ro.log"));
    EXPECT_EQ(engramd.port(), 0) << "it served HTTP";  // 0: it ended without serving
    ASSERT_TRUE(test::wait_until([&] { return !engramd.alive(); }, 60s)) << test::tail(dir.sub("ro.log"));
    EXPECT_NE(engramd.exit_code(), 0);
    const auto log = test::tail(dir.sub("ro.log"), 10);
    EXPECT_NE(log.find("cannot open store at '" + store + "'"), std::string::npos) << log;
    // The existing store: "the data directory is not writable (Read-only file system)"; the new
    // one fails earlier, making its directory: "Read-only file system".
    EXPECT_NE(log.find(store == dir.sub("ro/store") ? "the data directory is not writable (Read-only file system)"
                                                    : "Read-only file system"),
              std::string::npos)
        << log;
    const auto after = std::filesystem::exists(store) ? std::distance(std::filesystem::directory_iterator(store),
                                                                      std::filesystem::directory_iterator())
                                                      : -1;
    EXPECT_EQ(after, before);
  }
}

/// A tmpfs of `size` at `target` for the life of this object; grow() remounts it larger.
class small_filesystem {
public:
  small_filesystem(const std::string& target, const std::string& size) : target_(target) {
    std::filesystem::create_directories(target);
    if (::mount("tmpfs", target.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0)
      error_ = std::string("tmpfs mount: ") + std::strerror(errno);
  }
  ~small_filesystem() {
    if (error_.empty())
      ::umount2(target_.c_str(), MNT_DETACH);
  }
  bool grow(const std::string& size) {
    return ::mount("tmpfs", target_.c_str(), "tmpfs", MS_REMOUNT, ("size=" + size).c_str()) == 0;
  }
  [[nodiscard]] const std::string& error() const { return error_; }

private:
  std::string target_, error_;
};

/// 1,500 events on the inbound topic of a broker, keyed by organisation.
std::vector<std::pair<std::string, std::string>> full_disk_events() {
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& e : test::make_events(1500))
    keyed.emplace_back(test::org_of(e), e);
  return keyed;
}

const std::string full_disk_reader = "full-disk-reader-0123456789abcdef";

std::vector<std::string> full_disk_args(const std::string& brokers, const std::string& data) {
  return test::engramd_args(brokers, data,
                            {"auth.tokens=[{token: " + full_disk_reader + ", organization_id: acme, scopes: [read]}]"});
}

/// Waits until engramd on `port` says its disk is full (in /readyz, then its log), and checks
/// it stays up, answering reads, having applied some of `total` events and not all.
void expect_stopped_by_a_full_disk(test::engramd& engramd, const std::string& store, const std::string& log,
                                   std::size_t total) {
  using json = nlohmann::json;
  const auto port = engramd.port();
  std::string reason;
  ASSERT_TRUE(test::wait_until(
      [&] {
        int status = 0;
        auto body = json::parse(test::get(port, "/readyz", &status), nullptr, false);
        reason = body.is_object() ? body.value("reason", "") : "";
        return status == 503 && reason.rfind("disk full", 0) == 0;
      },
      180s))
      << reason << "\n"
      << test::tail(log);
  std::printf("/readyz: %s\n", reason.c_str());
  EXPECT_NE(reason.find("the store at " + store + " cannot write"), std::string::npos) << reason;
  EXPECT_NE(reason.find("No space left on device"), std::string::npos) << reason;
  // The consumer logs it once its batch comes back (just after the store refused it).
  EXPECT_TRUE(test::wait_until(
      [&] { return test::file_text(log).find("[error] disk full: the store at " + store) != std::string::npos; }, 30s))
      << test::tail(log);
  // Up, not applying, reads answered.
  ASSERT_TRUE(engramd.alive()) << test::tail(log);
  const long applied = test::events_applied(port);
  std::printf("applied %ld of %zu before the disk was full\n", applied, total);
  EXPECT_GT(applied, 0);
  EXPECT_LT(applied, long(total));
  auto recalled = test::mcp_call(port, full_disk_reader, "recall_knowledge", {{"query", "contract renewal"}});
  EXPECT_FALSE(recalled.contains("error")) << recalled;
  int status = 0;
  test::get(port, "/v1/stats", &status);
  EXPECT_EQ(status, 200);
}

/// The digest of the store `events` make on a disk that never fills.
std::string digest_without_a_full_disk(const std::vector<std::pair<std::string, std::string>>& events,
                                       const test::temp_dir& dir) {
  auto broker = test::start_broker();
  test::produce_raw(broker->bootstrap(), "inbound-messages", events);
  test::engramd engramd(full_disk_args(broker->bootstrap(), dir.sub("control")), dir.sub("control.log"));
  const auto port = engramd.port();
  EXPECT_TRUE(test::wait_until([&] { return test::events_applied(port) == long(events.size()); }, 180s))
      << test::tail(dir.sub("control.log"));
  EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(dir.sub("control.log"));
  return test::digest_of(dir.sub("control"));
}

TEST(StorageFaults, AFullDiskStopsApplyingKeepsReadsSaysSoAndARestartWithSpaceResumesToTheSameGraph) {
  const auto keyed = full_disk_events();
  test::temp_dir dir("storage-full");
  auto broker = test::start_broker();
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);

  small_filesystem small(dir.sub("small"), "8m");
  ASSERT_EQ(small.error(), "") << "the tests run as root (CI does)";
  const auto store = dir.sub("small/store");
  const auto log = dir.sub("full.log");
  {
    test::engramd engramd(full_disk_args(broker->bootstrap(), store), log);
    ASSERT_NO_FATAL_FAILURE(expect_stopped_by_a_full_disk(engramd, store, log, keyed.size()));
    // A clean stop, though RocksDB holds a write error.
    EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(log);
  }
  // Space again: a restart resumes from the stored offsets, every event once.
  ASSERT_TRUE(small.grow("512m"));
  {
    test::engramd engramd(full_disk_args(broker->bootstrap(), store), log);
    const auto port = engramd.port();
    ASSERT_TRUE(
        test::wait_until([&] { return test::events_applied(port) == long(keyed.size()) && test::ready(port); }, 180s))
        << test::events_applied(port) << "\n"
        << test::tail(log);
    EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(log);
  }
  EXPECT_EQ(test::digest_of(store), digest_without_a_full_disk(keyed, dir));
}

TEST(StorageFaults, AFullDiskFreedWhileEngramdRunsResumesWithoutARestartEveryEventOnceToTheSameGraph) {
  const auto keyed = full_disk_events();
  test::temp_dir dir("storage-freed");
  auto broker = test::start_broker();
  test::produce_raw(broker->bootstrap(), "inbound-messages", keyed);

  small_filesystem small(dir.sub("small"), "8m");
  ASSERT_EQ(small.error(), "") << "the tests run as root (CI does)";
  const auto store = dir.sub("small/store");
  const auto log = dir.sub("freed.log");
  {
    test::engramd engramd(full_disk_args(broker->bootstrap(), store), log);
    const auto port = engramd.port();
    ASSERT_NO_FATAL_FAILURE(expect_stopped_by_a_full_disk(engramd, store, log, keyed.size()));
    // Still full: a try to write again fails and says when the next is.
    ASSERT_TRUE(test::wait_until(
        [&] { return test::file_text(log).find("applying cannot go on yet (disk full") != std::string::npos; }, 60s))
        << test::tail(log);
    EXPECT_FALSE(test::ready(port));
    ASSERT_TRUE(small.grow("512m"));
    // Space again, the same process: every event applied, ready again.
    ASSERT_TRUE(
        test::wait_until([&] { return test::events_applied(port) == long(keyed.size()) && test::ready(port); }, 180s))
        << test::events_applied(port) << "\n"
        << test::tail(log);
    const auto text = test::file_text(log);
    EXPECT_NE(text.find("the store writes again: applying goes on from"), std::string::npos) << test::tail(log);
    EXPECT_NE(text.find("dedup's indexes built again"), std::string::npos) << test::tail(log);
    EXPECT_TRUE(engramd.alive());
    EXPECT_EQ(engramd.terminate(30s), 0) << test::tail(log);
  }
  EXPECT_EQ(test::digest_of(store), digest_without_a_full_disk(keyed, dir));
}

}  // namespace
