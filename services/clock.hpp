#pragma once
// The one source of "now" outside the apply path: MCP (savedAt, issuedAt, read-time decay
// and expiry) and the timers read it, so tests run months in milliseconds. What the store
// applies never reads it: times reach the store inside events.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace engram::services {

class clock {
public:
  virtual ~clock() = default;
  /// Milliseconds since the Unix epoch.
  [[nodiscard]] virtual std::int64_t now_ms() const = 0;
};

class system_clock final : public clock {
public:
  std::int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock that moves only when told (tests).
class manual_clock final : public clock {
public:
  explicit manual_clock(std::int64_t start_ms) : now_(start_ms) {}
  std::int64_t now_ms() const override { return now_.load(); }
  void set(std::int64_t ms) { now_.store(ms); }
  void advance(std::chrono::milliseconds d) { now_ += d.count(); }

private:
  std::atomic<std::int64_t> now_;
};

}  // namespace engram::services
