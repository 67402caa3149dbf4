// The store's filesystem failing under engramd (issue 35): a data directory that is read-only at
// start, on a read-only bind mount the test makes (tests run as root), is a clear error naming
// the directory and the reason, and engramd exits non-zero; a store written before and mounted
// read-only afterwards the same. Nothing is written to it.

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>

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
  const auto port = test::free_port();
  // A store written once, then the whole data directory mounted read-only.
  {
    test::child engramd(test::engramd_args(broker->bootstrap(), dir.sub("data/store"), port), dir.sub("first.log"));
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
    test::child engramd(test::engramd_args(broker->bootstrap(), store, port), dir.sub("ro.log"));
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
    EXPECT_FALSE(test::ready(port));
    const auto after = std::filesystem::exists(store) ? std::distance(std::filesystem::directory_iterator(store),
                                                                      std::filesystem::directory_iterator())
                                                      : -1;
    EXPECT_EQ(after, before);
  }
}

}  // namespace
