// engramd: engramd --config config/engram.yaml [--set a.b=c]... [--port-file PATH]
#include "services/heap.hpp"
#include "actors/engine/engine.hpp"
#include "logging/log.hpp"
#include "config/config.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

extern char** environ;

// jemalloc's options, read when engramd is linked with it (ENGRAM_JEMALLOC; the environment's
// MALLOC_CONF still overrides them): a background thread gives pages freed for about a second
// back to the system, so RSS follows what is in use (docs/operations.md "Memory").
extern "C" {
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}

namespace {

/// Writes `port` and a newline to `path` whole: to a temporary file beside it, then renamed.
bool write_port_file(const std::string& path, std::uint16_t port) {
  const auto temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << port << '\n';
    if (!out.flush())
      return false;
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  return !ec;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"engramd: Engram's knowledge engine"};
  std::string config_path = "config/engram.yaml";
  std::vector<std::string> overrides;
  app.add_option("--config", config_path, "YAML configuration file")->capture_default_str();
  app.add_option("--set", overrides, "Override a config key: --set kafka.brokers=host:9092 (repeatable)");
  std::string port_file;
  app.add_option("--port-file", port_file, "Once started, write the HTTP port served on to this file");
  CLI11_PARSE(app, argc, argv);

  // Every thread started from here on inherits the blocked set; main waits for the signal.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto& log = engram::logging::get(engram::logging::module::engine);
  auto loaded = engram::config::load(config_path, overrides, environ);
  if (!loaded) {
    log.error("{}", loaded.error());
    return 2;
  }
  engram::logging::configure(loaded->log);

  // Start-up may wait for Kafka; a SIGTERM or Ctrl-C then ends the wait (and engramd).
  bool stop_asked = false;
  engram::engine::engine_options options;
  options.stopping = [&signals, &stop_asked] {
    timespec now{0, 0};
    const int sig = sigtimedwait(&signals, nullptr, &now);
    stop_asked = stop_asked || sig == SIGTERM || sig == SIGINT;
    return stop_asked;
  };
  if (!port_file.empty())
    options.serving = [&port_file](std::uint16_t port) -> engram::result<void> {
      if (!write_port_file(port_file, port))
        return engram::fail("--port-file: cannot write " + port_file);
      return {};
    };
  auto started = engram::engine::engine::start(*loaded, std::move(options));
  if (!started) {
    if (stop_asked) {
      log.info("stopped before it started ({})", started.error());
      return 0;
    }
    log.error("{}", started.error());
    return 1;
  }
  auto& engine = *started;
  log.info("running (SIGTERM or Ctrl-C stops it)");
  timespec tick{0, 200'000'000};
  // Opening the store rebuilt its in-memory indexes through many temporaries: what they
  // held goes back before the first minute does (at 100k entries, tens of MiB).
  engram::services::release_free_heap();
  auto trimmed = std::chrono::steady_clock::now();
  while (true) {
    int sig = sigtimedwait(&signals, nullptr, &tick);
    // glibc keeps the memory the program frees for later mallocs; a soak showed it holding
    // ~66 MiB by its eleventh minute (engram_process_heap_bytes{kind="free"}, docs/benchmarks.md).
    // Once a minute the whole pages of it go back to the system (jemalloc does so itself).
    if (const auto now = std::chrono::steady_clock::now(); now - trimmed >= std::chrono::minutes(1)) {
      engram::services::release_free_heap();
      trimmed = now;
    }
    if (sig == SIGTERM || sig == SIGINT) {
      log.info("{} received, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      break;
    }
    if (engine->failed()) {
      engine->stop();  // then every store actor has stopped and said why
      log.error("the pipeline failed{}; exited so a restart resumes from the stored offsets",
                engine->failure().empty() ? "" : " (" + engine->failure() + ")");
      return 1;
    }
  }
  engine->stop();
  return 0;
}
