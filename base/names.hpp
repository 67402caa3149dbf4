#pragma once
// Names as Engram compares them, for reading and for resolution (knowledge/resolve.hpp):
// folded (diacritics, case, punctuation), an organisation's without its legal form, the
// technologies and places known by several names (base/aliases.txt, data), and identifiers
// that are never names of people or organisations.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::names {

/// A name as resolution compares it: normalise_name, then Latin letters with diacritics
/// folded to their base (é -> e, ø -> o, ß -> ss, ễ -> e), full stops and commas dropped,
/// white space made single. "  Pipewell, Inc. " -> "pipewell inc"; "Søren" -> "soren".
[[nodiscard]] std::string fold_name(std::string_view name);

/// An organisation's name without its legal form at the end ("inc", "corp", "corporation",
/// "ltd", "gmbh", "s.a.", "plc", ...), folded: "Acme Corporation" -> "acme",
/// "Northwind Traders AS" -> "northwind traders". A name that is only a legal form stays.
[[nodiscard]] std::string organisation_key(std::string_view name);

/// The canonical name an alias stands for (folded), from base/aliases.txt: "k8s" ->
/// "kubernetes", "münchen" -> "munich"; nullopt when the folded name is no alias.
[[nodiscard]] std::optional<std::string> canonical_alias(std::string_view name);

/// True when a name is an identifier (an order, ticket, invoice, case or PO number): a
/// word mixing letters and two or more digits ("CT-88213", "INV-2026-0042", "PO#77812"), or
/// a short capitalised word followed by a number of three or more digits ("PO 7731",
/// "SR 102334"). Such a name is never a person or an organisation.
[[nodiscard]] bool is_identifier(std::string_view name);

/// The words of a name, split at spaces (empty words dropped).
[[nodiscard]] std::vector<std::string> split_words(std::string_view name);

enum class known_kind : std::uint8_t { technology, place };

/// A technology or place of base/aliases.txt: its canonical name folded and as written.
struct known_name {
  std::string canonical, written;
  known_kind kind;
};

/// The technology or place a folded name (fold_name) is a name or alias of; null when none.
[[nodiscard]] const known_name* known(std::string_view folded);

}  // namespace engram::names
