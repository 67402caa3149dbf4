#include "logging/log.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <array>
#include <ctime>

namespace engram::logging {

namespace {

static_assert(config::log_modules.size() == static_cast<std::size_t>(module::kafka) + 1,
              "config::log_modules names every logging::module, in order");

class json_formatter final : public spdlog::formatter {
public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto line = json_line(msg);
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<json_formatter>(); }
};

struct loggers {
  std::array<std::shared_ptr<spdlog::logger>, config::log_modules.size()> by_module;
  loggers() {
    // The default logger's sinks: module lines and other lines share one mutex per sink.
    const auto& sinks = spdlog::default_logger()->sinks();
    for (std::size_t i = 0; i < by_module.size(); ++i) {
      const std::string name(config::log_modules[i]);
      if (auto existing = spdlog::get(name)) {
        by_module[i] = std::move(existing);
        continue;
      }
      by_module[i] = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
      spdlog::initialize_logger(by_module[i]);  // registers it with the global level and format
    }
  }
};

loggers& all() {
  static loggers l;
  return l;
}

}  // namespace

spdlog::logger& get(module m) { return *all().by_module[static_cast<std::size_t>(m)]; }

spdlog::logger& get(std::string_view name) {
  for (std::size_t i = 0; i < config::log_modules.size(); ++i)
    if (config::log_modules[i] == name)
      return *all().by_module[i];
  return *spdlog::default_logger_raw();
}

std::string json_line(const spdlog::details::log_msg& msg) {
  const auto since = msg.time.time_since_epoch();
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
  const std::time_t t = secs.count();
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char time[64];
  std::snprintf(time, sizeof time, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  // The names config uses (spdlog's own say "warning" and "err").
  static constexpr const char* levels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  const auto l = static_cast<std::size_t>(msg.level);
  const char* level = l < std::size(levels) ? levels[l] : "info";
  nlohmann::ordered_json j{{"time", time},
                           {"level", level},
                           {"module", std::string(msg.logger_name.data(), msg.logger_name.size())},
                           {"thread", msg.thread_id},
                           {"message", std::string(msg.payload.data(), msg.payload.size())}};
  // Messages quote events, which may hold invalid UTF-8: replace it rather than throw.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void configure(const config::log_config& cfg) {
  (void)all();  // the module loggers exist before the global settings are applied to all
  if (cfg.format == "json")
    spdlog::set_formatter(std::make_unique<json_formatter>());
  else
    spdlog::set_formatter(std::make_unique<spdlog::pattern_formatter>());
  spdlog::set_level(spdlog::level::from_str(cfg.level));
  for (const auto& [name, level] : cfg.levels)
    if (auto l = spdlog::get(name))
      l->set_level(spdlog::level::from_str(level));
}

}  // namespace engram::logging
