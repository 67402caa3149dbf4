#pragma once
// Word lists of the rules extractor, written for this project.

#include <string_view>

namespace engram::reading::lexicon {

/// Common given names (lower-case), to tell "Dana Kim" from "New York".
[[nodiscard]] bool is_first_name(std::string_view lowered);
/// Capitalised words that are never names of people or organisations (lower-case).
[[nodiscard]] bool is_stop_capital(std::string_view lowered);
/// Free-mail and generic domains that name no organisation.
[[nodiscard]] bool is_generic_domain(std::string_view lowered_label);

}  // namespace engram::reading::lexicon
