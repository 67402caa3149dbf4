#pragma once
// The parts of a statement dedup requires to be equal, read from the entry alone: its
// meaning markers, and a key over them with its polarity and values. Pure functions of
// what an entry is created with (a merge changes none of them), so the store keeps the key
// beside the title index and dedup reads only the candidates whose key matches.

#include "schemas/knowledge.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace engram::knowledge {

/// The meaning markers of a text, sorted and joined by spaces: words the content-word
/// signature leaves out that change what a statement says ("this" / "next" year, "to 5%" /
/// "by 5%", a weekday, "some" / "every").
[[nodiscard]] std::string markers_of(std::string_view text);

/// A 64-bit key over an entry's polarity, markers_of(title), and the numbers, dates and
/// amounts of its signature. Two entries dedup may merge have the same key (their entities
/// are compared on the entries themselves); different keys mean never duplicates.
/// The store keeps it in its `titles` keys: a change to this function or to markers_of's
/// word lists changes what stored keys mean, and needs a new layout_version
/// (storage/internal/keys.hpp) so stores are rebuilt.
[[nodiscard]] std::uint64_t values_key(bool positive, std::string_view title, const schemas::signature& sig);
[[nodiscard]] std::uint64_t values_key(const schemas::entry& e);
/// The key as 16 lower-case hex digits (as the store keys it).
[[nodiscard]] std::string values_key_hex(std::uint64_t key);

}  // namespace engram::knowledge
