// The retention decision (actors/ingest/topics.hpp) over stated topic configurations: what a
// real broker's DescribeConfigs would answer. The test broker cannot describe configurations,
// so the decision is tested here, table-driven, and the call itself only against a real Kafka.
#include "actors/ingest/topics.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace {

using engram::ingest::judge_retention;
using engram::ingest::topic_settings;

const topic_settings keeps_all{{"retention.ms", "-1"}, {"retention.bytes", "-1"}, {"cleanup.policy", "delete"}};

struct row {
  const char* name;
  topic_settings log;
  std::optional<topic_settings> inbound;
  std::uint64_t min_inbound_ms;
  /// Substrings the errors must hold, in order (none: the start is allowed).
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

TEST(Retention, TheLogMustKeepEveryRecordAndShortInboundRetentionWarns) {
  // clang-format off
  const std::vector<row> table{
      {"unlimited and delete: allowed", keeps_all, keeps_all, 604800000, {}, {}},
      {"a week of retention", {{"retention.ms", "604800000"}, {"retention.bytes", "-1"}, {"cleanup.policy", "delete"}},
       std::nullopt, 0, {"engram-log: retention.ms=604800000 deletes records"}, {}},
      {"a size limit", {{"retention.ms", "-1"}, {"retention.bytes", "1073741824"}, {"cleanup.policy", "delete"}},
       std::nullopt, 0, {"engram-log: retention.bytes=1073741824"}, {}},
      {"compaction", {{"retention.ms", "-1"}, {"retention.bytes", "-1"}, {"cleanup.policy", "compact"}},
       std::nullopt, 0, {"cleanup.policy=compact"}, {}},
      {"compaction and deletion", {{"retention.ms", "-1"}, {"retention.bytes", "-1"}, {"cleanup.policy", "compact,delete"}},
       std::nullopt, 0, {"cleanup.policy=compact,delete"}, {}},
      {"everything wrong: three errors",
       {{"retention.ms", "0"}, {"retention.bytes", "10"}, {"cleanup.policy", "compact"}},
       std::nullopt, 0, {"retention.ms=0", "retention.bytes=10", "cleanup.policy=compact"}, {}},
      {"not reported counts as wrong", {{"cleanup.policy", "delete"}}, std::nullopt, 0,
       {"did not report retention.ms", "did not report retention.bytes"}, {}},
      {"inbound kept a day, minimum a week: a warning",
       keeps_all, topic_settings{{"retention.ms", "86400000"}}, 604800000, {},
       {"inbound-messages: retention.ms=86400000 is shorter than kafka.min_inbound_retention_ms=604800000"}},
      {"inbound kept a week, minimum a week: nothing", keeps_all, topic_settings{{"retention.ms", "604800000"}},
       604800000, {}, {}},
      {"inbound unlimited: nothing", keeps_all, topic_settings{{"retention.ms", "-1"}}, 604800000, {}, {}},
      {"minimum 0: no warning", keeps_all, topic_settings{{"retention.ms", "1000"}}, 0, {}, {}},
      {"inbound not described: nothing", keeps_all, std::nullopt, 604800000, {}, {}},
  };
  // clang-format on
  for (const auto& r : table) {
    SCOPED_TRACE(r.name);
    auto v =
        judge_retention("engram-log", r.log, "inbound-messages", r.inbound ? &*r.inbound : nullptr, r.min_inbound_ms);
    ASSERT_EQ(v.errors.size(), r.errors.size());
    for (std::size_t i = 0; i < r.errors.size(); ++i) {
      EXPECT_NE(v.errors[i].find(r.errors[i]), std::string::npos) << v.errors[i];
      // Every error says how to fix it.
      EXPECT_NE(v.errors[i].find("--add-config retention.ms=-1,retention.bytes=-1,cleanup.policy=delete"),
                std::string::npos)
          << v.errors[i];
    }
    ASSERT_EQ(v.warnings.size(), r.warnings.size());
    for (std::size_t i = 0; i < r.warnings.size(); ++i)
      EXPECT_NE(v.warnings[i].find(r.warnings[i]), std::string::npos) << v.warnings[i];
  }
}

}  // namespace
