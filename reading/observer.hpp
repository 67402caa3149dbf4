#pragma once
// What reading counts as it goes; engramd's metrics (services/metrics.hpp) implement it,
// so reading needs nothing of the actors.

#include <cstdint>
#include <string_view>

namespace engram::reading {

/// What reading reports as it goes (engramd's metrics implement it).
class read_observer {
public:
  virtual ~read_observer() = default;
  /// What extraction kept, dropped below the confidence threshold, marked suspicious and
  /// dropped as an injected instruction.
  virtual void count_extraction(std::uint64_t entries, std::uint64_t dropped_low_confidence, std::uint64_t suspicious,
                                std::uint64_t dropped_injected) = 0;
  /// A message the LLM extractor could not read (the rules read it instead).
  virtual void count_llm_fallback(std::string_view reason) = 0;
  /// One message read, by class (person, bulk, spam).
  virtual void count_message_class(std::string_view cls) = 0;
  /// A batch whose entries could not be embedded (stored without vectors).
  virtual void count_embedding_failure() = 0;
};

}  // namespace engram::reading
