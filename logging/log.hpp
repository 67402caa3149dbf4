#pragma once
// Engram's structured logs: one spdlog logger per module, on one shared sink, so each
// module's level can be set in config (log.levels) and every line names its module.
// log.format "json" writes one JSON object per line: time (UTC), level, module, thread,
// message.

#include "config/config.hpp"

#include <spdlog/logger.h>

#include <string>

namespace engram::logging {

/// "kafka" is librdkafka's own log (its clients' log and error events).
enum class module : std::uint8_t { engine, ingest, sequencer, extractor, store, mcp, http, timers, kafka };

/// The module's logger. Created with the others on first use and registered with spdlog,
/// so spdlog::set_level reaches it too.
spdlog::logger& get(module m);
/// The logger of the module named `name` ("ingest", ...); spdlog's default logger otherwise.
spdlog::logger& get(std::string_view name);

/// Applies the log section: format, level, then the per-module levels. Call it at start,
/// before other threads log. The section must have passed config validation.
void configure(const config::log_config& cfg);

/// One line as log.format "json" writes it (without the newline); for tests.
std::string json_line(const spdlog::details::log_msg& msg);

}  // namespace engram::logging
