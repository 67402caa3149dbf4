#pragma once
// A model compiled into the binary (cmake/CompiledModel.cmake) is read once, at its first use;
// a binary whose own model does not load cannot run, so that stops the process with the reason.

#include "base/result.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace engram {

/// Stops the process: the compiled-in `what` does not load, for `why`.
[[noreturn]] inline void compiled_model_failed(std::string_view what, const std::string& why) {
  std::fprintf(stderr, "engram: the compiled-in %.*s does not load: %s\n", static_cast<int>(what.size()), what.data(),
               why.c_str());
  std::abort();
}

/// The model `parsed` holds, or the process stops, naming `what` and the parser's error.
template <class Model>
[[nodiscard]] std::shared_ptr<const Model> compiled_or_abort(
    std::variant<std::shared_ptr<const Model>, std::string> parsed, std::string_view what) {
  if (auto* err = std::get_if<std::string>(&parsed))
    compiled_model_failed(what, *err);
  return std::get<std::shared_ptr<const Model>>(std::move(parsed));
}

/// The same for a parser that returns a result.
template <class Model>
[[nodiscard]] Model compiled_or_abort(result<Model> parsed, std::string_view what) {
  if (!parsed)
    compiled_model_failed(what, parsed.error());
  return std::move(parsed).value();
}

}  // namespace engram
