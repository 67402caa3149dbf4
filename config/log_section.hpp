#pragma once
// The log section of engram.yaml: the level, the line format and a level per module.
// (logging/log.hpp is the loggers this section sets up.)

#include <array>
#include <map>
#include <string>
#include <string_view>

namespace engram::config {

/// The modules whose log level can be set on its own (log.levels), in logging::module order.
inline constexpr std::array<std::string_view, 9> log_modules{"engine", "ingest", "sequencer", "extractor", "store",
                                                             "mcp",    "http",   "timers",    "kafka"};

struct log_config {
  /// spdlog level: trace, debug, info, warn, error, off. Default: "info".
  std::string level = "info";
  /// "text" (a human-readable line: time, module, level, message) or "json" (one object per
  /// line: time, level, module, thread, message). Default: "text".
  std::string format = "text";
  /// A level per module (one of log_modules; "kafka" is librdkafka's own log), e.g.
  /// {ingest: debug, mcp: warn}; the others
  /// use `level`. Default: none.
  std::map<std::string, std::string> levels;
};

}  // namespace engram::config
