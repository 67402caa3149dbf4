#pragma once
// The optional LLM extractor: asks an OpenAI-compatible chat-completions endpoint (by
// default a local Ollama) for entries as JSON. The message text is cleaned (no quotes,
// signatures or footers), sanitised and fenced by delimiters the text cannot contain.
// The caller falls back to the rules when this returns nothing.

#include "schemas/knowledge.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace engram::reading {

struct llm_options {
  /// Base URL of the API, without "/chat/completions". Default: a local Ollama.
  std::string base_url = "http://127.0.0.1:11434/v1";
  /// Model name. Default: "llama3.1".
  std::string model = "llama3.1";
  /// Sent as "Authorization: Bearer"; never logged. Default: none.
  std::string api_key;
  /// A slower answer counts as a failure. Default: 20 s.
  std::chrono::milliseconds timeout{20000};
  /// Longest message text sent, in bytes. Default: 8,000.
  std::size_t max_input_bytes = 8000;
};

/// Why an LLM extraction produced nothing (the message then goes to the rules).
enum class llm_failure : std::uint8_t { none, timeout, http_error, invalid_output };

[[nodiscard]] std::string_view to_string(llm_failure f);

/// The text between the delimiters: control and invisible characters removed, delimiter
/// look-alikes defused, cut to `max_bytes` at a character boundary.
[[nodiscard]] std::string sanitise_for_prompt(std::string_view text, std::size_t max_bytes);

/// The request body for one message (exposed for tests).
[[nodiscard]] std::string llm_request_body(const schemas::inbound_message& m, const llm_options& opts);

/// Reads the model's answer (the chat-completions response body) into an extraction, or
/// nullopt when it is not what the prompt asked for.
[[nodiscard]] std::optional<schemas::extraction> parse_llm_response(std::string_view body);

/// One blocking call to the endpoint. Thread-safe; no state.
[[nodiscard]] std::optional<schemas::extraction> extract_llm(const schemas::inbound_message& m, const llm_options& opts,
                                                             llm_failure* failure);

}  // namespace engram::reading
