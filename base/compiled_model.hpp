#pragma once
// A model compiled into the binary (cmake/CompiledModel.cmake) is read once, at its first use;
// a binary whose own model does not load cannot run, so that stops the process with the reason.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace engram {

/// The model `parsed` holds, or the process stops, naming `what` and the parser's error.
template <class Model>
[[nodiscard]] std::shared_ptr<const Model> compiled_or_abort(
    std::variant<std::shared_ptr<const Model>, std::string> parsed, std::string_view what) {
  if (auto* err = std::get_if<std::string>(&parsed)) {
    std::fprintf(stderr, "engram: the compiled-in %.*s does not load: %s\n", static_cast<int>(what.size()), what.data(),
                 err->c_str());
    std::abort();
  }
  return std::get<std::shared_ptr<const Model>>(std::move(parsed));
}

}  // namespace engram
