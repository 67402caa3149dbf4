#pragma once
// Fault injection for the failure tests (docs/tests.md, "Injected faults"): with
// ENGRAM_FAULT_THROW=<place>:<n>[,<place>:<n>…] in its environment, a process throws
// std::runtime_error the n-th time it passes throw_if_fault_at(<place>) (counted from 1, over
// the process's life); <place>:<n>+ throws at the n-th pass and every one after. Without the
// variable it only reads it once and counts nothing.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace engram {

namespace detail {

struct fault_plan {
  struct place {
    std::uint64_t at = 0;
    bool onwards = false;
    std::atomic<std::uint64_t> passed{0};
  };
  std::map<std::string, std::unique_ptr<place>, std::less<>> places;

  static const fault_plan& get() {
    static const fault_plan plan = [] {
      fault_plan p;
      const char* v = std::getenv("ENGRAM_FAULT_THROW");
      std::string_view rest = v ? v : "";
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const auto colon = item.rfind(':');
        if (colon == std::string_view::npos)
          continue;
        auto pl = std::make_unique<place>();
        auto n = item.substr(colon + 1);
        pl->onwards = n.ends_with('+');
        pl->at = std::strtoull(std::string(n.substr(0, n.size() - (pl->onwards ? 1 : 0))).c_str(), nullptr, 10);
        p.places.emplace(std::string(item.substr(0, colon)), std::move(pl));
      }
      return p;
    }();
    return plan;
  }
};

}  // namespace detail

/// Throws at the n-th pass (and after, with "+") when ENGRAM_FAULT_THROW names `place` with n.
inline void throw_if_fault_at(std::string_view place) {
  const auto& plan = detail::fault_plan::get();
  if (plan.places.empty())
    return;
  auto it = plan.places.find(place);
  if (it == plan.places.end() || it->second->at == 0)
    return;
  const auto pass = it->second->passed.fetch_add(1) + 1;
  if (pass == it->second->at || (it->second->onwards && pass > it->second->at))
    throw std::runtime_error("ENGRAM_FAULT_THROW=" + std::string(place) + ":" + std::to_string(it->second->at) +
                             (it->second->onwards ? "+" : "") + ": an injected fault (pass " + std::to_string(pass) +
                             ")");
}

}  // namespace engram
